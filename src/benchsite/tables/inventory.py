"""What the store holds, per device and per run: devices with their newest captured info, the
best rate measured on each (its peak), and one row per run."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import pandas as pd

from benchsite.store import parts as store
from benchsite.tables import flags as flag_meanings
from benchsite.tables.rows import RATES, each_once
from benchsite.units import items_unit


def devices(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (host, device): the newest captured device info and when it was last seen."""
    newest = frame.sort_values("timestamp", kind="stable").drop_duplicates(
        ["host", "device"], keep="last"
    )
    columns = ["host", "device", "device_kind", "device_model", "fingerprint", "timestamp"]
    table = newest[[*columns, "device_info"]].copy()
    table["info"] = store.decode_json(table, "device_info")
    return table.sort_values(["host", "device_kind", "device"]).reset_index(drop=True)


def peaks(frame: pd.DataFrame, not_a_peak: Collection[str] | None = None) -> pd.DataFrame:
    """Per (host, device, workload): the best TFLOP/s, GB/s and items/s (in the workload's item:
    images/s) measured, with the row.
    A row with a flag of ``not_a_peak`` (codes of flags registered with ``not_a_peak=True``:
    it measured something else, such as a cache or launch overhead) stands only where nothing
    else was measured: a CPU copy out of its cache is no peak of its memory. ``None``: the
    installed plugins' flags."""
    if not_a_peak is None:
        not_a_peak = flag_meanings.not_a_peak_codes(flag_meanings.installed())
    not_a_peak = frozenset(not_a_peak)
    keys, ok = ["host", "device", "workload", "params_obj", "row_id"], frame["ok"].to_numpy(bool)
    items = (
        frame["item_unit"]
        if "item_unit" in frame
        else pd.Series(None, index=frame.index, dtype=object)
    )
    good = frame.loc[ok, [*keys, *(column for column, _ in RATES)]].assign(item_unit=items[ok])
    doubtful = each_once(frame.loc[ok, "flags"], lambda codes: bool(not_a_peak & set(codes)), tuple)
    good = good.assign(doubtful=doubtful)
    rows = []
    for column, unit in RATES:  # each sorted with only the columns it keeps
        measured = good.loc[good[column].notna(), [*keys, "doubtful", "item_unit", column]]
        if measured.empty:
            continue
        ranked = measured.sort_values(["doubtful", column], ascending=[True, False], kind="stable")
        best = ranked.drop_duplicates(["host", "device", "workload"], keep="first")
        chosen = best[keys]
        if column == "items_per_s":  # each workload's own item: images/s, tokens/s
            unit = best["item_unit"].map(items_unit)
        rows.append(chosen.assign(rate=best[column], unit=unit))
    if not rows:
        return pd.DataFrame(columns=["host", "device", "workload", "rate", "unit", "row_id"])
    return pd.concat(rows).sort_values(["host", "device", "unit", "rate"], ascending=[1, 1, 1, 0])


def _labels_text(text: Any) -> str:
    """A run's ``--label`` pairs as ``key=value, ...`` (its first labelled row's JSON text)."""
    if not isinstance(text, str):
        return ""
    return ", ".join(f"{k}={v}" for k, v in sorted(json.loads(text).items()))


def small_hosts(devices: pd.DataFrame) -> frozenset[str]:
    """Hosts whose findings stay off the home page and come last in answers: CPU-only hosts
    with fewer logical CPUs than the largest host, when another host measured an accelerator
    (a 2-core CI runner next to a GPU server). A store of small hosts only has none."""
    if devices.empty:
        return frozenset()
    kinds = devices.groupby(devices["host"].astype(str))["device_kind"].agg(lambda k: set(k))
    accelerated = {host for host, k in kinds.items() if k - {"cpu"}}
    if not accelerated:
        return frozenset()
    cpus = {
        str(row.host): (row.info or {}).get("logical_cpus") or 0
        for row in devices[devices["device_kind"].astype(str) == "cpu"].itertuples()
    }
    most = max(cpus.values(), default=0)
    return frozenset(h for h in kinds.index if h not in accelerated and cpus.get(h, 0) < most)


def byte_sized(rows: pd.DataFrame) -> frozenset[str]:
    """The workloads whose ``size`` parameter counts bytes: those that declare bytes moved and
    never FLOPs (a copy, a transfer, an all-reduce), so that a size is shown as ``64 KiB``; a
    matmul's size is a matrix dimension (it declares FLOPs) and stays a number."""
    if rows.empty or "bytes" not in rows or "flops" not in rows:
        return frozenset()
    declared = rows.assign(_bytes=rows["bytes"].notna(), _flops=rows["flops"].notna())
    kinds = declared.groupby(declared["workload"].astype(str))[["_bytes", "_flops"]].any()
    return frozenset(kinds.index[kinds["_bytes"] & ~kinds["_flops"]])


def runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per run: host, start, end, profile, devices that ran a case (not those named
    only by skipped rows), case count and statuses. A run's start is the time in its id when
    the id is benchsite's own (``20261130T173143Z-…``): the first stored row is already one
    case later, and a one-case run would otherwise last 0 s."""
    status = frame["status"]
    ran = frame["device"].astype(str).where(status != "skipped")
    labels = frame["labels"] if "labels" in frame else pd.Series(None, index=frame.index)
    # sums and firsts a column at a time: a function per run cost ~2 s of a fleet's 1,000 runs
    grouped = frame.assign(
        ran=ran,
        labels=labels,
        is_ok=(status == "ok").to_numpy(bool),
        is_skipped=(status == "skipped").to_numpy(bool),
    ).groupby(["host", "run_id"], observed=True, sort=False)
    table = grouped.agg(
        started=("timestamp", "min"),
        ended=("timestamp", "max"),
        cases=("row_id", "size"),
        ok=("is_ok", "sum"),
        skipped=("is_skipped", "sum"),
        profile=("profile", "first"),
        version=("benchsite_version", "first"),
        workloads=("workload", "nunique"),
        labels=("labels", "first"),  # the first labelled row's
    ).reset_index()
    ran_on: dict[tuple[Any, Any], set[str]] = {}
    for host, run, device in (
        frame.assign(ran=ran)[["host", "run_id", "ran"]]
        .dropna()
        .drop_duplicates()
        .itertuples(index=False)
    ):
        ran_on.setdefault((host, run), set()).add(device)
    table.insert(
        9,
        "devices",
        [
            ", ".join(sorted(ran_on.get((host, run), ())))
            for host, run in zip(table["host"], table["run_id"], strict=True)
        ],
    )
    table["labels"] = table["labels"].map(_labels_text)
    begun = pd.to_datetime(
        table["run_id"].astype(str).str[:16], format="%Y%m%dT%H%M%SZ", utc=True, errors="coerce"
    )
    pairs = zip(begun, table["started"], strict=True)
    starts = [b if pd.notna(b) and b < s else s for b, s in pairs]
    table["started"] = pd.to_datetime(pd.Series(starts, index=table.index, dtype=object), utc=True)
    table["failed"] = table["cases"] - table["ok"] - table["skipped"]
    return table.sort_values("started", ascending=False).reset_index(drop=True)
