"""How much memory do I need? Peak memory per sample, and the largest batch each device fits.

For every batch-swept series with memory metrics, a straight line through peak memory against
batch separates the fixed part (weights, optimizer state, workspaces) from the part each sample
adds (activations); on the GPU the peak is PyTorch's allocated memory, on the CPU the worker's
resident memory, each above the worker's state before the case's setup (rows the memory
collector marks ``memory.per_case``; of older rows only the GPU's allocated peak, which counts
live tensors only, is used: their CPU figures were measured against the worker's start). The ``max-batch`` workload gives the largest training batch
that fits on each device (on the CPU within a memory budget, so the machine never swaps), and
out-of-memory failures are reported: where the CPU fits a larger batch than the GPU, the GPU's
memory, not its speed, is the limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import (
    PEAK_METRIC,
    bytes_text,
    case_text,
    device_label,
    finding,
    info_value,
    metric,
    with_case,
)

if TYPE_CHECKING:
    from benchsite.tables import Tables

MAX_BATCH = "max-batch"
PER_CASE = "memory.per_case"  # the memory collector's mark: the figures are the case's own
BUDGET = "cpu_memory_budget_gib"  # a max-batch parameter, worded as the budget, not the case


@dataclass(frozen=True)
class MemoryLine:
    """Peak memory of one series: ``per_sample`` bytes each sample adds, ``fixed`` bytes."""

    host: str
    device: str
    kind: str
    workload: str
    case: str
    per_sample: float
    fixed: float | None
    largest_batch: float
    largest_peak: float
    evidence: tuple[str, ...]


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="memory",
            description="Peak memory per sample per device, the largest batch that fits.",
            analyze=memory_findings,
        )
    ]


def memory_lines(tables: Tables) -> list[MemoryLine]:
    rows = tables.ok
    if rows.empty:
        return []
    rows = rows[(rows["axis"] == "batch") & (rows["workload"] != MAX_BATCH)]
    rows = rows[np.array([_own(r) for r in rows.itertuples()], dtype=bool)]
    peaks = [metric(r, PEAK_METRIC.get(str(r.device_kind), "")) for r in rows.itertuples()]
    rows = rows.assign(peak=peaks, series=[case_text(p, skip=["batch"]) for p in rows["p"]])
    rows = rows[rows["peak"].notna() & (rows["peak"] > 0)]
    rows = rows.assign(label=[device_label(r) for r in rows.itertuples()])
    return [
        _line(s.sort_values("axis_value"))
        for _, s in rows.groupby(["host", "label", "workload", "series"], sort=True)
    ]


def _own(row: Any) -> bool:
    """Whether a row's peak is the case's own: measured from the worker's state before its
    setup (``memory.per_case``), or a GPU's allocated peak, which counts live tensors only (an
    earlier case's tensors are freed before the next setup; what carried over between cases in
    older rows was the allocator's reserved cache and the worker's resident memory)."""
    return metric(row, PER_CASE) == 1 or PEAK_METRIC.get(str(row.device_kind)) == GPU_ALLOCATED


GPU_ALLOCATED = "memory.gpu_peak_allocated_bytes"


def _line(series: pd.DataFrame) -> MemoryLine:
    batches, peaks = series["axis_value"].astype(float), series["peak"].astype(float)
    head, last = series.iloc[0], series.iloc[-1]
    if batches.nunique() >= 2:
        slope, intercept = np.polyfit(batches, peaks, 1)
        # a line that falls (or starts above the largest peak) measured no per-sample memory:
        # "0 B per sample plus 230 MiB fixed (163 MiB at batch 8)" reads as a contradiction
        grows = slope > 0 and 0 <= intercept <= float(peaks.max())
        per_sample, fixed = (float(slope), float(intercept)) if grows else (0.0, None)
    else:  # one batch: its peak holds the fixed part too, so no per-sample figure
        per_sample, fixed = 0.0, None
    return MemoryLine(
        host=str(head.host),
        device=str(head.label),
        kind=str(head.device_kind),
        workload=str(head.workload),
        case=str(head.series),
        per_sample=per_sample,
        fixed=fixed,
        largest_batch=float(last.axis_value),
        largest_peak=float(last.peak),
        evidence=tuple(series["row_id"]),
    )


def max_batches(tables: Tables) -> pd.DataFrame:
    """The newest ``max-batch`` result per host, device and case, with its memory budget."""
    rows = tables.ok
    if rows.empty:
        return rows
    rows = rows[rows["workload"] == MAX_BATCH]
    return rows.assign(
        max_batch=[metric(r, "max_batch") for r in rows.itertuples()],
        limit=[metric(r, "max_batch_limit_bytes") for r in rows.itertuples()],
        peak=[metric(r, "max_batch_peak_bytes") for r in rows.itertuples()],
        ram=[info_value(r, "memory_bytes") for r in rows.itertuples()],
        label=[device_label(r) for r in rows.itertuples()],
        case=[case_text(p, skip=[BUDGET]) for p in rows["p"]],
    ).dropna(subset=["max_batch"])


def memory_findings(tables: Tables) -> list[Finding]:
    grouped: dict[tuple[str, str, str], list[MemoryLine]] = {}
    for line in memory_lines(tables):
        grouped.setdefault((line.host, line.workload, line.case), []).append(line)
    findings = [_line_finding(lines) for lines in grouped.values()]
    table = max_batches(tables)
    for (host, case), group in table.groupby(["host", "case"], sort=True) if len(table) else []:
        findings.append(_max_batch_finding(str(host), str(case), group, oom_rows(tables, host)))
    return findings


def describe_line(line: MemoryLine) -> str:
    at_largest = f"{bytes_text(line.largest_peak)} at batch {line.largest_batch:,.0f}"
    if line.per_sample <= 0 and len(line.evidence) < 2:
        return f"on the {line.device}, a peak of {at_largest} (one batch measured)"
    if line.per_sample <= 0:
        return (
            f"on the {line.device}, no memory that grows with the batch could be measured "
            f"(peak {at_largest}: the fixed part dominates)"
        )
    fixed = f" plus {bytes_text(line.fixed)} fixed" if line.fixed is not None else ""
    return f"on the {line.device}, about {bytes_text(line.per_sample)} per sample{fixed} ({at_largest})"


def _line_finding(lines: list[MemoryLine]) -> Finding:
    head = lines[0]
    return finding(
        "memory",
        [head.host, head.workload, head.case],
        f"{head.workload}: memory per sample",
        f"{with_case(head.workload, head.case)} needs, "
        + "; ".join(describe_line(x) for x in lines)
        + ".",
        explanation=(
            "Per-sample memory is the slope of a straight line through peak memory against "
            "batch size; the fixed part is its intercept (weights, gradients, optimizer state, "
            "workspaces). GPU: PyTorch's peak allocated memory. CPU: the worker's peak resident "
            "memory above its baseline, which also counts allocator caches, so it is rougher."
        ),
        numbers={
            x.device: {"bytes_per_sample": x.per_sample, "fixed_bytes": x.fixed} for x in lines
        },
        evidence=[row for x in lines for row in x.evidence],
        scope={
            "hosts": [head.host],
            "devices": [x.device for x in lines],
            "workloads": [head.workload],
        },
        strength="moderate" if all(x.fixed is not None for x in lines) else "weak",
        workload=head.workload,
    )


def _max_batch_finding(host: str, case: str, group: pd.DataFrame, ooms: list[str]) -> Finding:
    """The largest batch per device of one host and case; its numbers carry, per device, the
    batch, the budget, the device kind and its memory, and the verdict (``compared``: whether
    it compares a CPU with a GPU) — what the claims and the FAQ read."""
    parts = [_fits(row) for row in group.itertuples()]
    verdict = memory_verdict(group)
    return finding(
        "memory",
        [host, MAX_BATCH, case],
        "Largest batch that fits" + (f" ({case})" if case else ""),
        f"On {host}, the largest training batch that fits: " + "; ".join(parts) + f". {verdict}",
        explanation=(
            "Found by searching batch sizes until memory runs out; on the CPU the search stops "
            "at a memory budget (so the machine never swaps), so the CPU number is a floor set "
            "by that budget, not by the hardware."
            + (f" {len(ooms)} case(s) on this host failed with out-of-memory." if ooms else "")
        ),
        numbers={
            "devices": {
                r.label: {
                    "max_batch": r.max_batch,
                    "limit_bytes": r.limit,
                    "device_kind": str(r.device_kind),
                    "memory_bytes": r.ram,
                }
                for r in group.itertuples()
            },
            "case": case,
            "verdict": verdict,
            "compared": group["device_kind"].nunique() > 1,
            "oom_rows": ooms,
        },
        evidence=list(group["row_id"]) + ooms,
        scope={"hosts": [host], "devices": list(group["label"]), "workloads": [MAX_BATCH]},
        strength="moderate",
        workload=MAX_BATCH,
    )


def _fits(row: Any) -> str:
    budget = (
        f" (within a {bytes_text(row.limit)} budget)"
        if row.limit == row.limit and row.limit
        else ""
    )
    return f"{row.max_batch:,.0f} on the {row.label}{budget}"


def memory_verdict(group: pd.DataFrame) -> str:
    """Which device's memory limits the batch, from what was measured only: a CPU searched
    within a budget smaller than its RAM did not reach its limit, and is said so ("not reached
    at …"), never scaled up to all of its RAM."""
    cpu = group[group["device_kind"] == "cpu"]
    gpu = group[group["device_kind"] != "cpu"]
    if cpu.empty or gpu.empty:
        return "Only one kind of device was measured, so there is nothing to compare."
    smallest = gpu.loc[gpu["max_batch"].idxmin()]
    gpu_said = (
        f"The {smallest.label}'s limit was measured: a batch of {smallest.max_batch:,.0f} "
        f"samples fills its {bytes_text(smallest.ram)}."
    )
    best = cpu.loc[cpu["max_batch"].idxmax()]
    if best.max_batch > smallest.max_batch:  # a floor where budgeted: already more
        return (
            f"{gpu_said} The {best.label} fits a batch of {best.max_batch:,.0f} in "
            f"{bytes_text(best.limit if below_ram(best) else best.ram)}: for this model GPU "
            "memory is the tighter limit."
        )
    budgeted = [row for row in cpu.itertuples() if below_ram(row)]
    if budgeted:
        said = "; ".join(
            f"the {row.label}'s limit was not reached at {bytes_text(row.limit)} (a batch of "
            f"{row.max_batch:,.0f} samples; its RAM is {bytes_text(row.ram)})"
            for row in budgeted
        )
        return (
            f"{gpu_said} {said[:1].upper()}{said[1:]}: the search stops at a budget so that "
            "the machine never swaps, so which memory is the tighter limit was not measured."
        )
    return (
        f"{gpu_said} The {best.label} fits at most {best.max_batch:,.0f} in its "
        f"{bytes_text(best.ram)} of RAM: here the CPU's RAM is the tighter limit."
    )


def below_ram(row: Any) -> bool:
    """The CPU's search ran within a budget smaller than its RAM: its limit was not reached."""
    return bool(row.limit == row.limit and row.limit and row.ram and row.limit < row.ram)


def oom_rows(tables: Tables, host: str | None = None) -> list[str]:
    """Row ids of out-of-memory failures that still stand (optionally on one host): a case
    whose newest row is ``oom``, not one re-run since (after a fix) with another outcome."""
    rows = tables.current
    if rows.empty:
        return []
    hit = rows[rows["status"] == "oom"]
    if host is not None:
        hit = hit[hit["host"] == host]
    return list(hit["row_id"])
