"""Curves along a swept parameter: where the accelerator starts to win (crossovers, with and
without host↔device copies), the headline speedup per workload, scaling curves (batch, threads,
world size) and precision gains, each marked suspect where it is physically implausible.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from benchsite.units import items_unit

SCALING_AXES = ("batch", "threads", "world_size")
# along these more resources do the same work faster: efficiency = gain / resource ratio
RESOURCE_AXES = ("threads", "world_size")
SUPERLINEAR = 1.3  # an efficiency above this is no measurement of scaling but of something else
CROSSOVER_COLUMNS = [
    "host",
    "device",
    "gpu_label",
    "cpu_label",
    "workload",
    "series",
    "variant",
    "axis",
    "case_params",
    "include_transfer",
    "outcome",
    "where",
    "crossover",
    "below",
    "above",
    "first",
    "first_interval",
    "last",
    "evidence",
    "suspect",
    "reasons",
]
OUTCOME_WHERE = {"crosses": "between", "gpu-always": "below", "cpu-always": "never"}


def crossovers(speedups: pd.DataFrame) -> pd.DataFrame:
    """Per series of pairs that differ only in the swept value (not along a scaling axis), with
    and without copies apart: the value from which the accelerator wins at every larger measured
    value. ``outcome``: ``crosses`` (``crossover`` interpolated on log-log axes between
    ``below`` and ``above``, the measured (value, speedup) points around it), ``gpu-always`` or
    ``cpu-always``; ``where`` says the same as ``between``/``below``/``never``;
    ``first_interval`` is the 95% interval of the speedup at the smallest value. Suspect when a
    pair it rests on (``below``, ``above``, or the end that decides) is."""
    swept = speedups[speedups["axis_value"].notna() & ~speedups["axis"].isin(RESOURCE_AXES)]
    swept = swept[swept["axis"].notna()]
    if swept.empty:
        return pd.DataFrame(columns=CROSSOVER_COLUMNS)
    swept = swept.sort_values([*SERIES_KEYS, "axis_value"], kind="stable")
    columns = {name: swept[name].tolist() for name in SERIES_COLUMNS}
    out = []
    # a frame slice per series costs about a millisecond: thousands of series, seconds
    for index in swept.groupby(SERIES_KEYS, sort=True, observed=True).indices.values():
        series = {name: [values[i] for i in index] for name, values in columns.items()}
        if len(set(series["axis_value"])) >= 2:
            out.append(_crossover(series))
    return pd.DataFrame(out, columns=CROSSOVER_COLUMNS)


SERIES_KEYS = ["host", "device", "workload", "variant"]
SERIES_COLUMNS = (
    "host",
    "device",
    "gpu_label",
    "cpu_label",
    "workload",
    "series",
    "variant",
    "axis",
    "params",
    "include_transfer",
    "axis_value",
    "speedup",
    "low",
    "high",
    "cpu_row",
    "gpu_row",
    "suspect",
    "reasons",
)


def _crossover(series: dict[str, list[Any]]) -> dict[str, Any]:
    """The crossover of one series (its :data:`SERIES_COLUMNS`, sorted by the swept value)."""
    xs, ss = [float(x) for x in series["axis_value"]], [float(s) for s in series["speedup"]]
    start = len(ss)
    while start > 0 and ss[start - 1] >= 1:
        start -= 1
    outcome = "gpu-always" if start == 0 else "cpu-always" if start == len(ss) else "crosses"
    below = (xs[start - 1], ss[start - 1]) if start > 0 else None
    above = (xs[start], ss[start]) if start < len(ss) else None
    deciding = {"crosses": [start - 1, start], "gpu-always": [0], "cpu-always": [len(ss) - 1]}
    decided = deciding[outcome]
    first = {name: values[0] for name, values in series.items()}
    value = {
        "crosses": lambda: interpolate(below, above),
        "gpu-always": lambda: xs[0],
        "cpu-always": lambda: math.nan,
    }[outcome]()
    return {
        **{
            name: first[name]
            for name in (
                "host",
                "device",
                "gpu_label",
                "cpu_label",
                "workload",
                "series",
                "variant",
                "axis",
            )
        },
        "case_params": {k: v for k, v in first["params"].items() if k != first["axis"]},
        "include_transfer": bool(first["include_transfer"]),
        "outcome": outcome,
        "where": OUTCOME_WHERE[outcome],
        "crossover": value,
        "below": below,
        "above": above,
        "first": (xs[0], ss[0]),
        "first_interval": (float(series["low"][0]), float(series["high"][0])),
        "last": (xs[-1], ss[-1]),
        "evidence": tuple(series["cpu_row"]) + tuple(series["gpu_row"]),
        "suspect": any(series["suspect"][i] for i in decided),
        "reasons": tuple(dict.fromkeys(r for i in decided for r in series["reasons"][i])),
    }


def interpolate(below: tuple[float, float] | None, above: tuple[float, float] | None) -> float:
    """The value where speedup = 1 on the log-log line through ``below`` and ``above``."""
    assert below is not None and above is not None
    (x0, s0), (x1, s1) = below, above
    if s1 == s0 or s0 <= 0 or s1 <= 0 or x0 <= 0:
        return x1
    t = -math.log(s0) / (math.log(s1) - math.log(s0))
    return math.exp(math.log(x0) + t * (math.log(x1) - math.log(x0)))


def headline(speedups: pd.DataFrame) -> pd.DataFrame:
    """One speedup per workload and accelerator, from pairs timed without copies: at the largest
    axis value each variant measured on both, and where several variants (precisions, ...) were
    measured, the one with the median speedup among the usable ones. A pair flagged uncertain is
    usable (with its widened interval); a suspect pair (a number that cannot be right) is never
    a headline, and a smaller size never stands in for it: a workload whose every variant is
    suspect at its largest size has no headline (see :func:`suspect_headlines`)."""
    at_largest = _at_largest(speedups)
    usable = at_largest[~at_largest["suspect"].astype(bool)]
    if usable.empty:
        return usable
    chosen = usable.sort_values("speedup", kind="stable")
    ranks = chosen.groupby(["series", "workload"]).cumcount()
    sizes = chosen.groupby(["series", "workload"])["speedup"].transform("size")
    return (
        chosen[ranks == (sizes - 1) // 2].sort_values(["workload", "series"]).reset_index(drop=True)
    )


def suspect_headlines(speedups: pd.DataFrame) -> pd.DataFrame:
    """The pairs at the largest size of the workloads (per accelerator) that have no headline
    because every one of them is suspect, with their reasons: shown as suspect, not headlined."""
    at_largest = _at_largest(speedups)
    flagged = at_largest.groupby(["series", "workload"])["suspect"].transform("all")
    return (
        at_largest[flagged.astype(bool)].sort_values(["workload", "series"]).reset_index(drop=True)
    )


def _at_largest(speedups: pd.DataFrame) -> pd.DataFrame:
    pairs = speedups[~speedups["include_transfer"].astype(bool) & speedups["speedup"].notna()]
    if pairs.empty:
        return pairs
    top = pairs["axis_value"].fillna(-1)
    groups = [pairs["series"], pairs["workload"], pairs["variant"]]
    return pairs[top == top.groupby(groups).transform("max")]


# -- scaling -------------------------------------------------------------------------------------

SCALING_COLUMNS = [
    "host",
    "device",
    "device_kind",
    "series",
    "workload",
    "variant",
    "axis",
    "x",
    "rate",
    "rate_unit",
    "gain",
    "efficiency",
    "median_s",
    "row_id",
    "suspect",
    "reasons",
    "uncertain",
]


def scaling(current_ok: pd.DataFrame, axis: str) -> pd.DataFrame:
    """Throughput along ``axis`` (one of :data:`SCALING_AXES`) per host, device, workload and
    variant, from the current ok rows: ``rate`` (items/s where the workload counts items, else
    calls/s) in ``rate_unit`` (``images/s``: the item the workload declared), ``gain`` over the smallest value and, along threads and world size, ``efficiency``
    = gain / resource ratio. A point whose efficiency exceeds :data:`SUPERLINEAR` is suspect
    (``superlinear``): more threads or GPUs cannot do more than proportionally more work."""
    rows = current_ok[(current_ok["axis"] == axis) & current_ok["axis_value"].notna()]
    if rows.empty:
        return pd.DataFrame(columns=SCALING_COLUMNS)
    counted = rows["items_per_s"].notna() if "items_per_s" in rows else False
    rate = (
        rows["items_per_s"].where(counted, 1 / rows["median_s"])
        if "items_per_s" in rows
        else 1 / rows["median_s"]
    )
    table = pd.DataFrame(
        {
            "host": rows["host"].astype(str),
            "device": rows["device"].astype(str),
            "device_kind": rows["device_kind"].astype(str),
            "series": rows["series"],
            "workload": rows["workload"].astype(str),
            "variant": rows["variant"],
            "axis": axis,
            "x": rows["axis_value"].astype(float),
            "rate": rate.astype(float),
            "rate_unit": np.where(counted, _items_units(rows), CALLS),
            "median_s": rows["median_s"].astype(float),
            "row_id": rows["row_id"].astype(str),
            "suspect": rows["suspect"].astype(bool),
            "reasons": rows["reasons"],
            "uncertain": rows["uncertain"] if "uncertain" in rows else [()] * len(rows),
        }
    ).sort_values(["host", "series", "workload", "variant", "x"], kind="stable")
    keys = ["host", "series", "workload", "variant"]
    base = table.groupby(keys, sort=False)
    table["gain"] = table["rate"] / base["rate"].transform("first")
    resource = table["x"] / base["x"].transform("first")
    table["efficiency"] = table["gain"] / resource if axis in RESOURCE_AXES else math.nan
    return mark(table, table["efficiency"] > SUPERLINEAR, "superlinear")[SCALING_COLUMNS]


CALLS = "calls/s"  # the rate of a workload that counts no items


def _items_units(rows: pd.DataFrame) -> list[str]:
    """Each row's unit of items per second: ``images/s``; ``items/s`` where none declared."""
    items = rows["item_unit"] if "item_unit" in rows else [None] * len(rows)
    return [items_unit(item) for item in items]


def mark(table: pd.DataFrame, implausible: pd.Series, reason: str) -> pd.DataFrame:
    """``table`` with ``reason`` added to the reasons (and ``suspect`` set) where
    ``implausible``."""
    hit = implausible.fillna(False).to_numpy(bool)
    table = table.copy()
    table["reasons"] = [
        (*r, reason) if h else r for r, h in zip(table["reasons"], hit, strict=True)
    ]
    table["suspect"] = table["suspect"].to_numpy(bool) | hit
    return table
