"""What does a result cost in energy and money? Joules and dollars per item on each device.

Energy per item = energy during the timed samples / (measured calls × items per call), from the
GPU board's NVML energy counter (``nvml.energy_j``) or the CPU package's RAPL counter
(``cpu.energy_j``). Cost per million items comes from the ``cost`` collector (a price per
device-hour from ``benchsite.toml``; prices are the user's assumptions, not measurements). A
device without an energy counter or a price is named as unavailable, never guessed.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from benchsite.plugins._shared.findings import (
    device_label,
    finding,
    metric,
    not_measured,
)

from benchsite import Analysis, Finding, hookimpl
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
    """Per ok row with items: joules per item and dollars per million items (NaN if absent)."""
    rows = tables.ok
    columns = ["host", "device", "label", "kind", "workload", "row_id", "j_per_item",
               "usd_per_million"]  # fmt: skip
    if rows.empty:
        return pd.DataFrame(columns=columns)
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
        "host": str(row.host), "device": str(row.device), "label": device_label(row),
        "kind": str(row.device_kind), "workload": str(row.workload), "row_id": str(row.row_id),
        "j_per_item": per_item, "usd_per_million": usd,
    }  # fmt: skip


def energy_cost_findings(tables: Tables) -> list[Finding]:
    table = energy_table(tables)
    if table.empty:
        return []
    findings = [_unavailable(table)] if table[["j_per_item", "usd_per_million"]].isna().all(
        axis=None) else []
    for (host, workload), group in table.groupby(["host", "workload"], sort=True):
        if group[["j_per_item", "usd_per_million"]].notna().any(axis=None):
            findings.append(_finding(str(host), str(workload), group))
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


def describe(item: pd.Series) -> str:
    energy = (f"{item.j_per_item:.3g} J per item" if item.j_per_item == item.j_per_item
              and item.j_per_item is not None else "energy unavailable")
    cost = (f"${item.usd_per_million:.3g} per million items"
            if item.usd_per_million == item.usd_per_million and item.usd_per_million is not None
            else "no price")
    return f"the {item.label}: {energy}, {cost}"


def _finding(host: str, workload: str, group: pd.DataFrame) -> Finding:
    best = group.sort_values(["j_per_item", "usd_per_million"], na_position="last")
    per_device = best.groupby("label", sort=False).head(1)
    answer = (
        f"{workload} on {host}, the most frugal case per device: "
        + "; ".join(describe(item) for _, item in per_device.iterrows()) + "."
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
        numbers={item.label: {"j_per_item": item.j_per_item,
                              "usd_per_million_items": item.usd_per_million}
                 for _, item in per_device.iterrows()},
        evidence=list(per_device["row_id"]),
        scope={"hosts": [host], "devices": list(per_device["label"]), "workloads": [workload]},
        strength="moderate",
        workload=workload,
    )
