"""Effects: the same case on the same device with one parameter changed (a precision, pinned
memory, ``torch.compile``, …) against its baseline value.

``speedup`` = baseline median time / changed median time (above 1 the change is faster), with
the block-bootstrap interval of :func:`benchsite.tables.speedups.ratio_intervals` (widened
where a row is uncertain: :func:`benchsite.tables.speedups.widened`), between two
current ok rows that are equal in host, device, workload, world size and every other parameter.
A lower precision's gain is also held against the ratio of the device's peak rates where the
rows carry them (a ``peak_tflops`` column, the device's peak at the row's precision, added by a
``prepare_results`` plugin): a gain beyond it is suspect (``beyond-peak-ratio``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from benchsite.tables.curves import mark
from benchsite.tables.speedups import pair_codes, precision_of, ratio_intervals, widened, without

PEAK_MARGIN = 1.05  # a gain whose whole interval lies this far beyond the peak ratio
COLUMNS = [
    "host",
    "device",
    "device_kind",
    "device_model",
    "workload",
    "parameter",
    "value",
    "case",
    "params",
    "speedup",
    "low",
    "high",
    "row_id",
    "baseline_row",
    "median_s",
    "baseline_median_s",
    "m",
    "baseline_m",
    "peak_ratio",
    "suspect",
    "reasons",
    "uncertain",
]


def effects(current_ok: pd.DataFrame, parameter: str, baseline: Any) -> pd.DataFrame:
    """Every current ok row whose ``parameter`` differs from ``baseline``, against the row of
    the same case with ``baseline`` (see the module docstring; a row of the same workload
    without the parameter ran at its default, ``baseline``); ``case`` is the other
    parameters as JSON; ``m``/``baseline_m`` are the two rows' metrics, to read, never change."""
    named = current_ok["p"].map(lambda p: parameter in p).to_numpy(bool)
    # a workload that names the parameter in some cases runs the others at its default, the
    # baseline: cnn-train's checkpointing rows pair with its plain rows (no checkpointing key)
    workloads = set(current_ok["workload"].to_numpy(object)[named])
    has = current_ok[current_ok["workload"].isin(workloads).to_numpy(bool)]
    if has.empty:
        return pd.DataFrame(columns=COLUMNS)
    values = [p.get(parameter, baseline) for p in has["p"]]
    rows = has.assign(
        value=values,
        case=[without(p, parameter) for p in has["p"]],
        is_base=[_equal(value, baseline) for value in values],
    )
    keys = ["host", "device", "workload", "world_size", "case"]
    merged = rows[~rows["is_base"]].merge(rows[rows["is_base"]], on=keys, suffixes=("", "_base"))
    if merged.empty:
        return pd.DataFrame(columns=COLUMNS)
    return _table(merged, parameter)


def _equal(value: Any, baseline: Any) -> bool:
    return (type(value) is type(baseline) and value == baseline) or (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and isinstance(baseline, int | float)
        and not isinstance(baseline, bool)
        and value == baseline
    )


def _table(merged: pd.DataFrame, parameter: str) -> pd.DataFrame:
    found = ratio_intervals(list(zip(merged["samples_s_base"], merged["samples_s"], strict=True)))
    found = widened(merged, found, num="_base")
    value, low, high = (np.array(c, dtype=float) for c in zip(*found, strict=True))
    nan = pd.Series(np.nan, index=merged.index)
    peak_ratio = merged.get("peak_tflops", nan).astype(float) / merged.get(
        "peak_tflops_base", nan
    ).astype(float)
    return pd.DataFrame(
        {
            "host": merged["host"].astype(str),
            "device": merged["device"].astype(str),
            "device_kind": merged["device_kind"].astype(str),
            "device_model": merged["device_model"].astype(object),
            "workload": merged["workload"].astype(str),
            "parameter": parameter,
            "value": merged["value"],
            "case": merged["case"],
            "params": merged["p"],
            "speedup": value,
            "low": low,
            "high": high,
            "row_id": merged["row_id"].astype(str),
            "baseline_row": merged["row_id_base"].astype(str),
            "peak_ratio": peak_ratio,
            "median_s": merged["median_s"].astype(float),
            "baseline_median_s": merged["median_s_base"].astype(float),
            "m": merged["m"],
            "baseline_m": merged["m_base"],
            "suspect": (merged["suspect"] | merged["suspect_base"]).astype(bool),
            "reasons": [
                tuple(dict.fromkeys([*a, *b]))
                for a, b in zip(merged["reasons"], merged["reasons_base"], strict=True)
            ],
            "uncertain": pair_codes(merged, "uncertain", "_base"),
        }
    )[COLUMNS].reset_index(drop=True)


def precision_gains(current_ok: pd.DataFrame, baseline: str = "fp32") -> pd.DataFrame:
    """:func:`effects` of the precision (``precision``, or an older ``dtype`` parameter) against
    ``baseline``, with ``precision`` naming the lower one."""
    renamed = current_ok.assign(
        p=[
            {**{k: v for k, v in p.items() if k != "dtype"}, "precision": precision_of(p)}
            if "precision" in p or "dtype" in p
            else p
            for p in current_ok["p"]
        ]
    )
    table = effects(renamed, "precision", baseline)
    beyond = table["low"] > table["peak_ratio"] * PEAK_MARGIN
    return mark(table, beyond, "beyond-peak-ratio").assign(precision=table["value"])
