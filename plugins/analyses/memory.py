"""How much memory do I need? Peak memory per sample, and the largest batch each device fits.

For every batch-swept series with memory metrics, a straight line through peak memory against
batch separates the fixed part (weights, optimizer state, workspaces) from the part each sample
adds (activations); on the GPU the peak is PyTorch's allocated memory, on the CPU the worker's
resident memory, each above the worker's state before the case's setup (rows the memory
collector marks ``memory.per_case``; of older rows only the GPU's allocated peak, which counts
live tensors only, is used: their CPU figures were measured against the worker's start). The ``max-batch`` workload gives the largest training batch
that fits on each device (on the CPU within a memory budget, so the machine never swaps), and
out-of-memory failures are reported: where the CPU fits a larger batch than the GPU, the GPU's
memory, not its speed, is the limit. The ``max-model`` workload gives, likewise, the largest
model (in parameters) whose training step fits on each device.
"""

from __future__ import annotations

from collections.abc import Callable
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
    model_words,
    with_case,
)

if TYPE_CHECKING:
    from benchsite.tables import Tables

MAX_BATCH = "max-batch"
MAX_MODEL = "max-model"
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
    rows = rows[(rows["axis"] == "batch") & ~rows["workload"].isin([MAX_BATCH, MAX_MODEL])]
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
    """The newest ``max-batch`` result per host, device and case, with its memory budget:
    ``max_batch``, ``limit``, ``peak``, ``ram``, ``label`` and ``case``."""
    return _largest(tables, MAX_BATCH, "max_batch", "max_batch")


def max_models(tables: Tables) -> pd.DataFrame:
    """The newest ``max-model`` result per host, device and case: as :func:`max_batches`, with
    ``max_model_params`` (the largest model's parameters) and ``max_model_layers``."""
    found = _largest(tables, MAX_MODEL, "max_model_params", "max_model")
    return found.assign(
        max_model_layers=[metric(r, "max_model_layers") for r in found.itertuples()]
    )


def _largest(tables: Tables, workload: str, size: str, prefix: str) -> pd.DataFrame:
    rows = tables.ok
    if rows.empty:
        return rows.assign(**{size: [], "limit": [], "peak": [], "ram": [], "label": []})
    rows = rows[rows["workload"] == workload]
    return rows.assign(
        **{size: [metric(r, size) for r in rows.itertuples()]},
        limit=[metric(r, f"{prefix}_limit_bytes") for r in rows.itertuples()],
        peak=[metric(r, f"{prefix}_peak_bytes") for r in rows.itertuples()],
        ram=[info_value(r, "memory_bytes") for r in rows.itertuples()],
        label=[device_label(r) for r in rows.itertuples()],
        case=[case_text(p, skip=[BUDGET]) for p in rows["p"]],
    ).dropna(subset=[size])


def memory_findings(tables: Tables) -> list[Finding]:
    grouped: dict[tuple[str, str, str], list[MemoryLine]] = {}
    for line in memory_lines(tables):
        grouped.setdefault((line.host, line.workload, line.case), []).append(line)
    findings = [_line_finding(lines) for lines in grouped.values()]
    table = max_batches(tables)
    for (host, case), group in table.groupby(["host", "case"], sort=True) if len(table) else []:
        findings.append(_max_batch_finding(str(host), str(case), group, oom_rows(tables, host)))
    models = max_models(tables)
    for (host, case), group in models.groupby(["host", "case"], sort=True) if len(models) else []:
        findings.append(_max_model_finding(str(host), str(case), group))
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
            "devices": per_device(group, max_batch="max_batch"),
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


def per_device(group: pd.DataFrame, **sizes: str) -> dict[str, dict[str, Any]]:
    """A largest-size finding's numbers per device label: each of ``sizes`` (name → column),
    the budget (``limit_bytes``), the device kind and its memory."""
    return {
        r["label"]: {
            **{name: r[column] for name, column in sizes.items()},
            "limit_bytes": r["limit"],
            "device_kind": str(r["device_kind"]),
            "memory_bytes": r["ram"],
        }
        for _, r in group.iterrows()
    }


def _max_model_finding(host: str, case: str, group: pd.DataFrame) -> Finding:
    """The largest model per device of one host and case; its numbers carry, per device
    (``largest_models``), the parameters, the layers, the budget, the device kind and its
    memory, and the verdict (``compared``: whether it compares a CPU with a GPU)."""
    parts = [
        f"{model_words(r.max_model_params)} ({r.max_model_layers:,.0f} layers) on the {r.label}"
        + (f" (within a {bytes_text(r.limit)} budget)" if below_ram(r) else "")
        for r in group.itertuples()
    ]
    verdict = memory_verdict(group, "max_model_params", model_words)
    return finding(
        "memory",
        [host, MAX_MODEL, case],
        "Largest model that fits" + (f" ({case})" if case else ""),
        f"On {host}, the largest MLP whose training step fits: "
        + "; ".join(parts)
        + f". {verdict}",
        explanation=(
            "Found by searching the number of layers of an MLP of fixed width (fp32, AdamW: "
            "weights, gradients and optimizer state, about 16 bytes a parameter) until memory "
            "runs out; on the CPU the search stops at a memory budget (so the machine never "
            "swaps), so the CPU number is a floor set by that budget, not by the hardware."
        ),
        numbers={
            "largest_models": per_device(
                group, parameters="max_model_params", layers="max_model_layers"
            ),
            "case": case,
            "verdict": verdict,
            "compared": group["device_kind"].nunique() > 1,
        },
        evidence=list(group["row_id"]),
        scope={"hosts": [host], "devices": list(group["label"]), "workloads": [MAX_MODEL]},
        strength="moderate",
        workload=MAX_MODEL,
    )


def _fits(row: Any) -> str:
    budget = (
        f" (within a {bytes_text(row.limit)} budget)"
        if row.limit == row.limit and row.limit
        else ""
    )
    return f"{row.max_batch:,.0f} samples on the {row.label}{budget}"


def batch_words(size: float) -> str:
    """A batch size in words, with its unit."""
    return f"a batch of {size:,.0f} samples"


def memory_verdict(
    group: pd.DataFrame, column: str = "max_batch", words: Callable[[float], str] = batch_words
) -> str:
    """Which device's memory limits the size (``column``: the batch, the model's parameters,
    read by ``words``), from what was measured only: a CPU searched within a budget smaller
    than its RAM did not reach its limit, and is said so ("not reached at …"), never scaled up
    to all of its RAM."""
    cpu = group[group["device_kind"] == "cpu"]
    gpu = group[group["device_kind"] != "cpu"]
    if cpu.empty or gpu.empty:
        return "Only one kind of device was measured, so there is nothing to compare."
    smallest = gpu.loc[gpu[column].idxmin()]
    gpu_said = (
        f"The {smallest.label}'s limit was measured: {words(smallest[column])} fills its "
        f"{bytes_text(smallest.ram)}."
    )
    best = cpu.loc[cpu[column].idxmax()]
    if best[column] > smallest[column]:  # a floor where budgeted: already more
        return (
            f"{gpu_said} The {best.label} fits {words(best[column])} in "
            f"{bytes_text(best.limit if below_ram(best) else best.ram)}: here GPU memory is the "
            "tighter limit."
        )
    budgeted = [row for _, row in cpu.iterrows() if below_ram(row)]
    if budgeted:
        said = "; ".join(
            f"the {row.label}'s limit was not reached at {bytes_text(row.limit)} "
            f"({words(row[column])}; its RAM is {bytes_text(row.ram)})"
            for row in budgeted
        )
        return (
            f"{gpu_said} {said[:1].upper()}{said[1:]}: the search stops at a budget so that "
            "the machine never swaps, so which memory is the tighter limit was not measured."
        )
    return (
        f"{gpu_said} The {best.label} fits at most {words(best[column])} in its "
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
