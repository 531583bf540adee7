"""Shaping the results data frame for pages and charts: the newest row of every case, GPU-vs-CPU
speedups with confidence intervals, crossovers, device peaks and runs.

Every function takes a data frame and returns a smaller one; nothing here renders. Charts get
these aggregates, never raw samples, so that pages stay small however large the store grows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from benchsite import store

CASE_KEYS = ["host", "device", "workload", "case_key"]
RATES = (("tflops", "TFLOP/s"), ("gbps", "GB/s"), ("items_per_s", "items/s"))
MEMORY_METRICS = (
    "memory.gpu_peak_allocated_bytes",
    "memory.gpu_peak_reserved_bytes",
    "memory.cpu_peak_rss_bytes",
)


def prepare(results: pd.DataFrame) -> pd.DataFrame:
    """The results with the columns pages need: decoded params (``params_obj``, and
    ``params_text`` in words), ``variant`` (every parameter but the axis, as text), ``series``
    (which host and device a row belongs to) and ``flags``."""
    frame = results.reset_index(drop=True)
    params = store.decode_json(frame, "params")
    axes = frame["axis"].astype(object).where(frame["axis"].notna(), None).tolist()
    texts = frame["params"].tolist()
    frame["params_obj"] = params
    frame["params_text"] = _per_distinct(texts, ((p,) for p in params), params_text)
    frame["variant"] = _per_distinct(
        list(zip(texts, axes, strict=True)), zip(params, axes, strict=True), variant_label
    )
    several_hosts = frame["host"].nunique() > 1
    host_prefix = frame["host"].astype(str) + " · " if several_hosts else ""
    # along a world-size axis each point is another group of devices (cuda:0, cuda:0-1, …):
    # one line per device kind, so that the points of one scaling curve join up
    grouped = frame["axis"] == "world_size"
    devices = frame["device"].astype(str).where(~grouped, frame["device_kind"].astype(str))
    frame["series"] = host_prefix + devices
    frame["flags"] = _flags(frame)
    return frame


def _per_distinct(
    keys: list[Any], arguments: Iterable[tuple[Any, ...]], label: Callable[..., str]
) -> pd.Series:
    """``label(*arguments)`` of every row, worked out once per distinct key (the parameters'
    text): a store repeats the same parameters across runs and hosts."""
    labels: dict[Any, str] = {}
    out = []
    for key, args in zip(keys, arguments, strict=True):
        if key not in labels:
            labels[key] = label(*args)
        out.append(labels[key])
    return pd.Series(out, dtype=object)  # Python strings, like the store's text columns


def variant_label(params: dict[str, Any], axis: str | None) -> str:
    """``{"size": 64, "dtype": "fp32"}`` with axis ``size`` → ``dtype=fp32``; ``all`` if none."""
    parts = [f"{key}={_param_text(value)}" for key, value in sorted(params.items()) if key != axis]
    return ", ".join(parts) or "all"


def params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{key}={_param_text(value)}" for key, value in sorted(params.items()))


def _param_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _flags(frame: pd.DataFrame) -> list[tuple[str, ...]]:
    """Validity flags per row (added by a ``prepare_results`` plugin), as tuples of codes."""
    if "flags" not in frame.columns:
        return [()] * len(frame)
    return [_flag_tuple(value) for value in frame["flags"]]


def _flag_tuple(value: Any) -> tuple[str, ...]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ()
    if isinstance(value, str):
        return tuple(part for part in value.replace(";", ",").split(",") if part.strip())
    return tuple(str(item) for item in value)


def latest(frame: pd.DataFrame) -> pd.DataFrame:
    """The newest row of every (host, device, workload, case): what the site calls current."""
    ordered = frame.sort_values("timestamp", kind="stable")
    return ordered.drop_duplicates(CASE_KEYS, keep="last").sort_values(
        ["workload", "host", "device", "variant", "axis_value"], kind="stable"
    )


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[(frame["status"] == "ok") & frame["median_s"].notna()]


def speedups(current: pd.DataFrame) -> pd.DataFrame:
    """Accelerator-vs-CPU speedup of every case measured on both, per host.

    ``speedup`` = CPU median / accelerator median. ``low``/``high`` is a conservative 95%
    interval: the ratio of the ends of the two medians' confidence intervals (if both medians
    lie in their intervals, the ratio lies in this one).
    """
    good = ok_rows(current)
    keys = ["host", "workload", "case_key"]
    columns = [*keys, "median_s", "ci_low_s", "ci_high_s", "row_id"]
    cpu = good[good["device_kind"] == "cpu"][columns]
    fast = good[good["device_kind"] != "cpu"]
    merged = fast.merge(cpu, on=keys, suffixes=("", "_cpu"))
    merged["speedup"] = merged["median_s_cpu"] / merged["median_s"]
    merged["low"] = merged["ci_low_s_cpu"] / merged["ci_high_s"]
    merged["high"] = merged["ci_high_s_cpu"] / merged["ci_low_s"]
    return merged


def crossovers(speed: pd.DataFrame) -> pd.DataFrame:
    """Per (series, workload, variant): the axis value from which on the accelerator wins at every
    larger measured value (geometric interpolation between the two measured points around it).

    ``where`` says ``between`` (a crossover inside the measured range), ``below`` (faster at
    every measured value) or ``never`` (slower at every value, or not faster to the end).
    """
    rows = []
    swept = speed[speed["axis_value"].notna()]
    for key, group in swept.groupby(["series", "workload", "variant"], sort=True):
        rows.append(
            {
                **dict(zip(["series", "workload", "variant"], key, strict=True)),
                **_crossover(group.sort_values("axis_value")),
            }
        )
    return pd.DataFrame(rows, columns=["series", "workload", "variant", "where", "crossover"])


def _crossover(group: pd.DataFrame) -> dict[str, Any]:
    x, ratio = group["axis_value"].to_numpy(), group["speedup"].to_numpy()
    winning = ratio >= 1
    if winning.all():
        return {"where": "below", "crossover": float(x[0])}
    if not winning[-1]:
        return {"where": "never", "crossover": math.nan}
    last_loss = int(np.flatnonzero(~winning)[-1])
    x0, x1, r0, r1 = x[last_loss], x[last_loss + 1], ratio[last_loss], ratio[last_loss + 1]
    if x0 <= 0 or r0 <= 0 or r1 == r0:
        return {"where": "between", "crossover": float(x1)}
    share = -math.log(r0) / (math.log(r1) - math.log(r0))
    return {"where": "between", "crossover": float(x0 * (x1 / x0) ** share)}


def headline(speed: pd.DataFrame) -> pd.DataFrame:
    """One speedup per workload and accelerator, at the largest axis value measured on both (the
    regime people move to a GPU for); where several variants (precisions, ...) were measured,
    the variant with the median speedup among them, so the headline is the typical case."""
    if speed.empty:
        return speed
    top = speed["axis_value"].fillna(-1)
    largest = top.groupby([speed["series"], speed["workload"], speed["variant"]]).transform("max")
    chosen = speed[top == largest].sort_values("speedup", kind="stable")
    ranks = chosen.groupby(["series", "workload"]).cumcount()
    sizes = chosen.groupby(["series", "workload"])["speedup"].transform("size")
    typical = chosen[ranks == (sizes - 1) // 2]
    return typical.sort_values(["workload", "series"]).reset_index(drop=True)


def best_rate(frame: pd.DataFrame) -> tuple[str, str] | None:
    """The most telling throughput column present in ``frame``: TFLOP/s, GB/s, then items/s."""
    for column, unit in RATES:
        if column in frame and frame[column].notna().any():
            return column, unit
    return None


def metric_frame(frame: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    """Long frame (row index, metric, value) of the collector metrics in ``names`` that exist."""
    decoded = store.decode_json(frame, "metrics")
    rows = [
        {"index": index, "metric": name, "value": float(values[name])}
        for index, values in decoded.items()
        for name in names
        if isinstance(values.get(name), int | float) and values.get(name) is not None
    ]
    return pd.DataFrame(rows, columns=["index", "metric", "value"])


def devices(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (host, device): the newest captured device info and when it was last seen."""
    newest = frame.sort_values("timestamp", kind="stable").drop_duplicates(
        ["host", "device"], keep="last"
    )
    columns = ["host", "device", "device_kind", "device_model", "fingerprint", "timestamp"]
    table = newest[[*columns, "device_info"]].copy()
    table["info"] = store.decode_json(table, "device_info")
    return table.sort_values(["host", "device_kind", "device"]).reset_index(drop=True)


NOT_A_PEAK = frozenset({"in-cache", "launch-bound", "above-peak"})  # validity flags


def peaks(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (host, device, workload): the best TFLOP/s, GB/s and items/s measured, with the row.
    A row whose validity flags say it measured something else (a cache, launch overhead, a
    missing synchronization) stands only where nothing else was measured: a CPU copy of 1 MiB
    at 192 GB/s out of its cache is no peak of its memory."""
    good = ok_rows(frame)
    doubtful = [bool(NOT_A_PEAK & set(flags)) for flags in good["flags"]]
    good = good.assign(doubtful=doubtful)
    rows = []
    for column, unit in RATES:
        measured = good[good[column].notna()]
        if measured.empty:
            continue
        ranked = measured.sort_values(["doubtful", column], ascending=[True, False], kind="stable")
        best = ranked.drop_duplicates(["host", "device", "workload"], keep="first")
        chosen = best[["host", "device", "workload", "params_obj", "row_id"]]
        rows.append(chosen.assign(rate=best[column], unit=unit))
    if not rows:
        return pd.DataFrame(columns=["host", "device", "workload", "rate", "unit", "row_id"])
    return pd.concat(rows).sort_values(["host", "device", "unit", "rate"], ascending=[1, 1, 1, 0])


def run_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in the order run pages list them: by run, workload, device, variant, axis value."""
    keys = ["run_id", "workload", "device", "variant", "axis_value"]
    return frame.sort_values(keys, kind="stable")


def runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per run: host, start, end, profile, devices that ran a case (not those named
    only by skipped rows), case count and statuses. A run's start is the time in its id when
    the id is benchsite's own (``20261130T173143Z-…``): the first stored row is already one
    case later, and a one-case run would otherwise last 0 s."""
    ran = frame["device"].astype(str).where(frame["status"] != "skipped")
    grouped = frame.assign(ran=ran).groupby(["host", "run_id"], observed=True, sort=False)
    table = grouped.agg(
        started=("timestamp", "min"),
        ended=("timestamp", "max"),
        cases=("row_id", "size"),
        ok=("status", lambda s: int((s == "ok").sum())),
        skipped=("status", lambda s: int((s == "skipped").sum())),
        profile=("profile", "first"),
        version=("benchsite_version", "first"),
        devices=("ran", lambda s: ", ".join(sorted(set(s.dropna())))),
        workloads=("workload", "nunique"),
    ).reset_index()
    begun = pd.to_datetime(
        table["run_id"].astype(str).str[:16], format="%Y%m%dT%H%M%SZ", utc=True, errors="coerce"
    )
    pairs = zip(begun, table["started"], strict=True)
    starts = [b if pd.notna(b) and b < s else s for b, s in pairs]
    table["started"] = pd.to_datetime(pd.Series(starts, index=table.index, dtype=object), utc=True)
    table["failed"] = table["cases"] - table["ok"] - table["skipped"]
    return table.sort_values("started", ascending=False).reset_index(drop=True)
