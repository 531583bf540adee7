"""What does a result cost in energy and money? Joules and dollars per item on each device.

Energy per item = energy during the timed samples / (measured calls × items per call), from the
GPU board's NVML energy counter (``nvml.energy_j``) or the CPU package's RAPL counter
(``cpu.energy_j``). Cost per million items comes from the price per device-hour the ``cost``
collector stored with the row; where a row stored none, from the **list price** in the
``benchsite.toml`` found at build time (``[cost.usd_per_hour]`` by device name, model or kind,
single devices only), named on the site with its ``[cost.source]`` (where the price was read,
and when). Prices are list prices or the user's assumptions, never measurements. A device
without an energy counter or a price is named as unavailable, never guessed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.config import declare, section
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
NO_COUNTER = {  # why a device has no energy figure, by kind
    "cpu": "energy not measured here (no readable RAPL counter in /sys/class/powercap)",
    "cuda": "energy not measured here (no NVML energy counter)",
}
# where each list price of [cost.usd_per_hour] was read and when, by the same key
declare("cost", {"source": {"*": str}})


def list_prices() -> dict[str, tuple[float, str]]:
    """The configured price per device-hour and its source, by key (device name, model or
    kind); empty without a configuration file or a ``[cost]`` section."""
    found = section("cost")
    sources = found.get("source", {})
    return {
        str(key): (float(price), str(sources.get(key, "configured price, no source given")))
        for key, price in found.get("usd_per_hour", {}).items()
        if isinstance(price, int | float) and not isinstance(price, bool)
    }


def list_price(row: Any, prices: dict[str, tuple[float, str]]) -> tuple[float, str] | None:
    """The list price of ``row``'s device (by name, model, then kind), for a single device only:
    a group of devices (``cuda:0-1``, ``cpu×2``) is no device a price is listed for."""
    name = str(row.device)
    if "-" in name or "×" in name:
        return None
    for key in (name, str(row.device_model or ""), str(row.device_kind)):
        if key in prices:
            return prices[key]
    return None


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
        "price_source",
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
    prices = list_prices()
    records = [
        _record(row, prices) for row in rows.itertuples() if row.items == row.items and row.items
    ]
    return pd.DataFrame(records, columns=columns)


def _record(row: Any, prices: dict[str, tuple[float, str]]) -> dict[str, Any]:
    energy = metric(row, ENERGY_METRIC.get(str(row.device_kind), ""))
    calls = metric(row, "measured_calls")
    # 0 J: the counter did not move (older rows stored it so); not a measurement
    per_item = energy / (calls * float(row.items)) if energy and energy > 0 and calls else None
    usd = metric(row, "cost.usd_per_million_items")
    price = metric(row, "cost.usd_per_hour")
    source = None
    listed = list_price(row, prices) if usd is None and price is None else None
    if listed:
        price, source = listed
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
        "price_source": source,
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
        f"{plain(item.j_per_item)} J per item"
        if _known(item.j_per_item)
        else NO_COUNTER.get(item.kind, "no energy counter")
    )
    cost = (
        f"${plain(item.usd_per_million)} per million items"
        if _known(item.usd_per_million)
        else "no price"
    )
    if _known(item.usd_per_million) and item.price_source:
        cost += " at its list price"
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


def cpu_over_accelerator(case: pd.DataFrame, column: str) -> float | None:
    """The CPU's figure over the accelerator's for the same case (above 1: the accelerator
    needs less per item), ``None`` where one of them has none."""
    cpu = case[(case["kind"] == "cpu") & case[column].notna()]
    fast = case[(case["kind"] != "cpu") & case[column].notna()]
    if cpu.empty or fast.empty:
        return None
    return float(cpu[column].iloc[0]) / float(fast[column].iloc[0])


def comparison(case: pd.DataFrame, column: str, what: str) -> str:
    """``The GPU costs 36× less per item than the CPU``: the same case on both devices."""
    ratio = cpu_over_accelerator(case, column)
    if ratio is None:
        return ""
    cpu = case[(case["kind"] == "cpu") & case[column].notna()]
    fast = case[(case["kind"] != "cpu") & case[column].notna()]
    less = f"{format_ratio(ratio)} less" if ratio >= 1 else f"{format_ratio(1 / ratio)} more"
    return f" The {fast['label'].iloc[0]} {what} {less} per item than the {cpu['label'].iloc[0]}."


def _sources(case: pd.DataFrame) -> str:
    """`` List prices: the NVIDIA H200 (cuda:0): $4.54 an hour, Spheron …``: each list price
    used, with where and when it was read."""
    used = case[case["price_source"].notna()].drop_duplicates("label")
    return "".join(f"\n- List price of the {r.label}: {r.price_source}." for r in used.itertuples())


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
            "items uses the price per device-hour and the median time; prices are list prices "
            "or assumptions from the configuration, not measurements. Devices without a counter "
            "or a price say so." + _sources(case)
        ),
        numbers={
            "same_case": compared,
            "cost_ratio": cpu_over_accelerator(case, "usd_per_million") if compared else None,
            "energy_ratio": cpu_over_accelerator(case, "j_per_item") if compared else None,
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
