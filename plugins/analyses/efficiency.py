"""How close does each workload run to the hardware? Achieved TFLOP/s and GB/s as a share of
this device's measured peak.

The measured peak of a device is its best ``matmul`` TFLOP/s per precision and its best ``copy``
GB/s in the store, never from a row measured out of a cache or bound by launches
(a flag registered ``not_a_peak``, :attr:`benchsite.tables.Tables.not_a_peak_flags`): what this device, with this software,
demonstrably reaches. A workload's TFLOP/s is held against the peak of its own precision (an
fp32 step against the fp32 matmul, never the bf16 one), and its GB/s only where the bytes move
through the device's own memory (not a host↔device transfer or an all-reduce, which other links
bound). A datasheet peak would flatter nobody; a share of the measured one tells
a reader how much a workload leaves on the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import device_label, finding, percent, precision_of
from benchsite.units import format_number

if TYPE_CHECKING:
    from benchsite.tables import Tables

PEAK_FLOPS, PEAK_BYTES = "matmul", "copy"
# workloads whose GB/s crosses another link than the device's memory (PCIe, NVLink, a network)
OTHER_LINKS = frozenset({"transfer", "allreduce"})
UNIT_WORDS = {"TFLOP/s": "compute rate", "GB/s": "memory bandwidth"}


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="efficiency",
            description="Achieved TFLOP/s and GB/s as a share of the device's measured peak.",
            analyze=efficiency_findings,
        )
    ]


def measured_peaks(
    rows: pd.DataFrame, not_a_peak: frozenset[str]
) -> dict[tuple[str, str], dict[str, Any]]:
    """(host, device) → best matmul TFLOP/s overall and per precision, best copy GB/s, rows;
    a row with a flag of ``not_a_peak`` is left out."""
    peaks: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows.itertuples():
        entry = peaks.setdefault((str(row.host), str(row.device)), {"tflops": {}, "rows": {}})
        if not_a_peak & set(row.flags):  # a copy that fits in a cache is no peak of memory
            continue
        if row.workload == PEAK_FLOPS and _num(row.tflops):
            key = precision_of(row.p)
            if row.tflops > entry["tflops"].get(key, 0):
                entry["tflops"][key], entry["rows"][key] = float(row.tflops), str(row.row_id)
        if row.workload == PEAK_BYTES and _num(row.gbps) and row.gbps > entry.get("gbps", 0):
            entry["gbps"], entry["rows"]["gbps"] = float(row.gbps), str(row.row_id)
    return peaks


# what a share finding reads (itertuples over fewer columns is faster)
SHARE_COLUMNS = (
    "host",
    "device",
    "device_model",
    "workload",
    "p",
    "tflops",
    "gbps",
    "row_id",
    "flags",
)


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and value == value and value > 0


def efficiency_findings(tables: Tables) -> list[Finding]:
    rows = tables.ok
    if rows.empty:
        return []
    not_a_peak = tables.not_a_peak_flags
    peaks = measured_peaks(rows, not_a_peak)
    findings = [
        _peak_finding(key, peak, rows)
        for key, peak in peaks.items()
        if peak["tflops"] or peak.get("gbps")
    ]
    measured = rows[~rows["workload"].isin([PEAK_FLOPS, PEAK_BYTES])][list(SHARE_COLUMNS)]
    doubtful = [bool(not_a_peak & set(flags)) for flags in measured["flags"]]
    measured = measured[~np.array(doubtful, dtype=bool)]
    for (host, device, _workload), group in measured.groupby(
        ["host", "device", "workload"], observed=True, sort=True
    ):
        peak = peaks.get((str(host), str(device)))
        shares = _shares(group, peak) if peak else []
        if shares:
            findings.append(_share_finding(group, shares, peak))
    return findings


def _peak_finding(key: tuple[str, str], peak: dict[str, Any], rows: pd.DataFrame) -> Finding:
    host, device = key
    row = rows[(rows["host"] == host) & (rows["device"] == device)].iloc[0]
    parts = [
        f"{format_number(value * 1e12, 'FLOP/s')} ({precision})"
        for precision, value in sorted(peak["tflops"].items(), key=lambda item: -item[1])
    ]
    if peak.get("gbps"):
        parts.append(f"{format_number(peak['gbps'] * 1e9, 'B/s')} memory copy")
    label = device_label(row)
    return finding(
        "efficiency",
        [host, device, "peak"],
        f"Measured peak of the {label}",
        f"The {label} on {host} reaches at best " + ", ".join(parts) + ".",
        explanation=(
            "Best matmul throughput per precision and best copy bandwidth in this store, leaving "
            "out rows measured in a cache or bound by launch overhead: the ceilings the other "
            "workloads on this device are compared with."
        ),
        numbers={"tflops": peak["tflops"], "gbps": peak.get("gbps")},
        evidence=list(peak["rows"].values()),
        scope={"hosts": [host], "devices": [label]},
        strength="moderate",
    )


def _shares(group: pd.DataFrame, peak: dict[str, Any]) -> list[tuple[Any, str, float]]:
    """(row, unit, share of peak) for each row with a rate the peak can divide."""
    out = []
    for row in group.itertuples():
        flop_peak = peak["tflops"].get(precision_of(row.p))  # the same precision, or none
        if _num(row.tflops) and flop_peak:
            out.append((row, "TFLOP/s", float(row.tflops) / flop_peak))
        elif _num(row.gbps) and peak.get("gbps") and row.workload not in OTHER_LINKS:
            out.append((row, "GB/s", float(row.gbps) / peak["gbps"]))
    return out


def _share_finding(
    group: pd.DataFrame, shares: list[tuple[Any, str, float]], peak: dict[str, Any]
) -> Finding:
    best_row, unit, best = max(shares, key=lambda item: item[2])
    typical = sorted(share for _, _, share in shares)[len(shares) // 2]
    label = device_label(best_row)
    rate = best_row.tflops if unit == "TFLOP/s" else best_row.gbps
    scale, si = (1e12, "FLOP/s") if unit == "TFLOP/s" else (1e9, "B/s")
    ceiling = peak["tflops"][precision_of(best_row.p)] if unit == "TFLOP/s" else peak["gbps"]
    precision = f" {precision_of(best_row.p)}" if unit == "TFLOP/s" else ""
    cases = f"{len(shares)} case" + ("s" if len(shares) != 1 else "")
    if best > 1:  # then the stored "peak" is no ceiling: say so instead of printing 183%
        answer = (
            f"{best_row.workload} reaches {format_number(rate * scale, si)} on the {label}, more than "
            f"the best {PEAK_FLOPS if unit == 'TFLOP/s' else PEAK_BYTES} measured on it: this "
            "store does not hold the device's peak, so no share of it can be given."
        )
        explanation = (
            f"Over {cases}. A quick run measures only small sizes; `benchsite run --full -w "
            f"{PEAK_FLOPS} -w {PEAK_BYTES}` measures the sizes that reach the peak."
        )
    else:
        answer = (
            f"{best_row.workload} reaches at best {percent(best)} of the {label}'s measured"
            f"{precision} {UNIT_WORDS[unit]} ({format_number(rate * scale, si)} of "
            f"{format_number(ceiling * scale, si)}), typically {percent(typical)}."
        )
        explanation = (
            f"Over {cases}. The peak is this device's best matmul (compute) or copy (memory) "
            "result in the store; a low share means the workload is bound by something else: "
            "launch overhead at small sizes, memory traffic, or the CPU feeding the GPU."
        )
    return finding(
        "efficiency",
        [best_row.host, best_row.device, best_row.workload],
        f"{best_row.workload}: share of the {label}'s measured peak",
        answer,
        explanation=explanation,
        numbers={"best_share": best, "typical_share": typical, "unit": unit},
        evidence=[str(row.row_id) for row, _, _ in shares] + list(peak["rows"].values()),
        scope={
            "hosts": [str(best_row.host)],
            "devices": [label],
            "workloads": [str(best_row.workload)],
        },
        strength="weak" if best > 1 else "moderate",
        workload=str(best_row.workload),
    )
