"""What does a result cost in energy and money? Joules and dollars per item on each device.

Energy per item = energy during the timed samples / (measured calls × items per call), from the
GPU board's NVML energy counter (``nvml.energy_j``) or the CPU package's RAPL counter
(``cpu.energy_j``). Cost per million items comes from the ``cost`` collector (a price per
device-hour from ``benchsite.toml``; prices are the user's assumptions, not measurements). A
device without an energy counter or a price is named as unavailable, never guessed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import (
    case_text,
    device_label,
    finding,
    metric,
    not_measured,
    with_case,
    without,
)
from benchsite.units import format_ratio, plain

if TYPE_CHECKING:
    from benchsite.tables import Tables

ENERGY_METRIC = {"cuda": "nvml.energy_j", "cpu": "cpu.energy_j"}


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="energy-cost",
            description="Joules per item and cost per million items per device, where collected.",
            analyze=energy_cost_findings,
        )
    ]


def energy_table(tables: Tables) -> pd.DataFrame:
    """Per ok row with items: joules per item and dollars per million items (NaN if absent),
    with its case (``case``: the parameters apart from copies, equal for the same case on any
    device) and its swept value."""
    rows = tables.ok
    columns = [
        "host",
        "device",
        "label",
        "kind",
        "workload",
        "row_id",
        "j_per_item",
        "usd_per_million",
        "case",
        "params",
        "axis_value",
    ]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    # kernel-only cases (a copy-inclusive GPU time has no CPU twin); a case is its parameters
    # and the work it declares (a workload may size its model by device kind)
    rows = rows[np.array([not p.get("include_transfer") for p in rows["p"]], dtype=bool)]
    from benchsite.tables import work_keys  # the tables load with a build, not with `benchsite run`

    rows = rows.assign(work=work_keys(rows))
    records = [_record(row) for row in rows.itertuples() if row.items == row.items and row.items]
    return pd.DataFrame(records, columns=columns)


def _record(row: Any) -> dict[str, Any]:
    energy = metric(row, ENERGY_METRIC.get(str(row.device_kind), ""))
    calls = metric(row, "measured_calls")
    # 0 J: the counter did not move (older rows stored it so); not a measurement
    per_item = energy / (calls * float(row.items)) if energy and energy > 0 and calls else None
    usd = metric(row, "cost.usd_per_million_items")
    price = metric(row, "cost.usd_per_hour")
    if usd is None and price is not None:
        usd = price / 3600 * float(row.median_s) / float(row.items) * 1e6
    return {
        "host": str(row.host),
        "device": str(row.device),
        "label": device_label(row),
        "kind": str(row.device_kind),
        "workload": str(row.workload),
        "row_id": str(row.row_id),
        "j_per_item": per_item,
        "usd_per_million": usd,
        "case": f"{without(row.p, 'include_transfer')}\x1f{row.work}",
        "params": row.p,
        "axis_value": row.axis_value,
    }


def energy_cost_findings(tables: Tables) -> list[Finding]:
    table = energy_table(tables)
    if table.empty:
        return []
    findings = (
        [_unavailable(table)]
        if table[["j_per_item", "usd_per_million"]].isna().all(axis=None)
        else []
    )
    for (host, workload), group in table.groupby(["host", "workload"], sort=True):
        if group[["j_per_item", "usd_per_million"]].notna().any(axis=None):
            findings.append(
                _finding(str(host), str(workload), group, str(workload) in tables.byte_sized)
            )
    return findings


def _unavailable(table: pd.DataFrame) -> Finding:
    devices = ", ".join(sorted(set(table["label"])))
    return not_measured(
        "energy-cost",
        ["unavailable"],
        "Energy and cost: not measured",
        "Energy and cost per item are unavailable in this store: no device reported an energy "
        f"counter or a price ({devices}).",
        explanation=(
            "GPU energy comes from NVML (an NVIDIA driver with `nvidia-ml-py`); CPU energy from "
            "RAPL (`/sys/class/powercap`, often missing in VMs and containers). Prices come from "
            "a `[cost]` table of per-device-hour prices in `benchsite.toml`."
        ),
    )


def _known(value: Any) -> bool:
    return value is not None and value == value


def describe(item: Any) -> str:
    """One device's figures for one case: ``the NVIDIA H200 (cuda:0): 0.03 J per item, $0.05
    per million items``."""
    energy = (
        f"{plain(item.j_per_item)} J per item" if _known(item.j_per_item) else "no energy counter"
    )
    cost = (
        f"${plain(item.usd_per_million)} per million items"
        if _known(item.usd_per_million)
        else "no price"
    )
    return f"the {item.label}: {energy}, {cost}"


def same_case(group: pd.DataFrame) -> pd.DataFrame:
    """The rows of the one case both a CPU and an accelerator measured with a figure to
    compare, at its largest swept value (the most realistic size); empty if none."""
    known = group[group["j_per_item"].notna() | group["usd_per_million"].notna()]
    kinds = known.groupby("case")["kind"].agg(lambda k: "cpu" in set(k) and len(set(k)) > 1)
    shared = known[known["case"].isin(kinds.index[kinds.astype(bool)])]
    if shared.empty:
        return shared
    largest = shared.sort_values("axis_value", kind="stable", na_position="first").iloc[-1]
    return shared[shared["case"] == largest.case].drop_duplicates("label")


def comparison(case: pd.DataFrame, column: str, what: str) -> str:
    """``The GPU costs 36× less per item than the CPU``: the same case on both devices."""
    cpu = case[(case["kind"] == "cpu") & case[column].notna()]
    fast = case[(case["kind"] != "cpu") & case[column].notna()]
    if cpu.empty or fast.empty:
        return ""
    ratio = float(cpu[column].iloc[0]) / float(fast[column].iloc[0])
    less = f"{format_ratio(ratio)} less" if ratio >= 1 else f"{format_ratio(1 / ratio)} more"
    return f" The {fast['label'].iloc[0]} {what} {less} per item than the {cpu['label'].iloc[0]}."


def _finding(host: str, workload: str, group: pd.DataFrame, in_bytes: bool) -> Finding:
    case = same_case(group)
    compared = not case.empty
    if case.empty:  # no case on a CPU and an accelerator both: each device's own, not compared
        case = group.sort_values("axis_value", na_position="first").groupby("label").tail(1)
        lead = (
            f"{workload} on {host}, not compared (no case has an energy or cost figure on "
            "both a CPU and an accelerator); each device alone: "
        )
    else:
        words = case_text(case["params"].iloc[0], skip=["include_transfer"], in_bytes=in_bytes)
        lead = f"{with_case(workload, words)} on {host}, the same case on each device: "
    answer = (
        lead
        + "; ".join(describe(item) for item in case.itertuples())
        + "."
        + comparison(case, "usd_per_million", "costs")
        + comparison(case, "j_per_item", "uses")
    )
    return finding(
        "energy-cost",
        [host, workload],
        f"{workload}: energy and cost per item",
        answer,
        explanation=(
            "Energy per item = the energy counter's difference over the timed samples / "
            "(calls × items per call); it includes idle power during the run. Cost per million "
            "items uses the configured price per device-hour and the median time; prices are "
            "assumptions from the configuration, not measurements. Devices without a counter "
            "or a price say so."
        ),
        numbers={
            "same_case": compared,
            **{
                item.label: {
                    "j_per_item": item.j_per_item,
                    "usd_per_million_items": item.usd_per_million,
                }
                for item in case.itertuples()
            },
        },
        evidence=list(case["row_id"]),
        scope={"hosts": [host], "devices": list(case["label"]), "workloads": [workload]},
        strength="moderate",
        workload=workload,
    )
