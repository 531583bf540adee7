"""Claims checked: what a typical "PyTorch CPU vs GPU" article asserts, held against this
store's numbers. Each claim gets a verdict — ``supported``, ``contradicted``, ``depends`` (and
on what) or ``untested`` (the store has no data for it) — and the rows behind it.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from benchsite.plugins import (
    analysis_cpu_threads,
    analysis_crossover,
    analysis_memory,
    analysis_multi_gpu,
    analysis_techniques,
)
from benchsite.plugins._answers import RUN_GPU, answered, rows_of, speedups_of, unanswered
from benchsite.plugins._findings import (
    bytes_text,
    case_text,
    is_accelerator,
    latest_ok,
    percent,
    ratio,
    ratio_ci,
    with_case,
)

from benchsite import Analysis, Finding, hookimpl

KIND = "claim"
DATA_PARALLEL = ("ddp-train", "fsdp-train")
ARTICLE_MAX = 50.0


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="claims",
            description="Claims of a typical CPU-vs-GPU article, with verdicts from the data.",
            analyze=claim_findings,
        )
    ]


def claim_findings(results: pd.DataFrame) -> list[Finding]:
    return [check(results) for check in CLAIMS]


def verdict(key: str, claim: str, verdict_: str, answer: str, evidence: list[str],
            explanation: str = "") -> Finding:
    return answered(KIND, key, claim, f"{verdict_.capitalize()}: {answer}", evidence,
                    verdict=verdict_, question=claim, explanation=explanation)


def untested(key: str, claim: str, what_to_run: str) -> Finding:
    return unanswered(KIND, key, claim, "Untested: this store has no data for it.",
                      what_to_run, verdict="untested", question=claim)


def up_to_50x(results: pd.DataFrame) -> Finding:
    claim = "GPUs can be up to 50× faster than CPUs."
    table = speedups_of(results)
    if table.empty:
        return untested("up-to-50x", claim, RUN_GPU)
    best = table.loc[table["speedup"].idxmax()]
    worst = table.loc[table["speedup"].idxmin()]
    span = (f"the measured speedups run from {ratio(worst.speedup)} ({worst.workload}, "
            f"{case_text(worst.params)}) to {ratio_ci(best.speedup, best.low, best.high)} "
            f"({best.workload}, {case_text(best.params)}) on the {best.gpu_label}")
    if best.high < ARTICLE_MAX * 0.7:
        v, text = "contradicted", f"on these devices the GPU never comes near 50×: {span}."
    elif best.low > ARTICLE_MAX * 3:
        v, text = "depends", (f"50× is no ceiling — it depends on the size of the work: {span}.")
    else:
        v, text = "supported", f"{span}."
    return verdict("up-to-50x", claim, v, text, rows_of(table),
                   "The number depends on the work: small problems gain little or lose, large "
                   "dense ones gain most. Precisions are the same on both sides of each pair.")


def cpu_for_small(results: pd.DataFrame) -> Finding:
    claim = "CPUs are better for small models and small batches."
    items = [c for c in analysis_crossover.crossover_table(results) if not c.include_transfer]
    if not items:
        return untested("cpu-small", claim, RUN_GPU)
    cpu_first = [c for c in items if c.outcome in ("crosses", "cpu-always")]
    evidence = [r for c in items for r in c.evidence]
    lines = "\n".join(f"- {analysis_crossover.describe(c)}" for c in items)
    if len(cpu_first) == len(items):
        return verdict("cpu-small", claim, "supported", "in every swept workload the CPU wins at "
                       "the smallest measured size.", evidence, lines)
    if not cpu_first:
        return verdict("cpu-small", claim, "contradicted", "the GPU wins even at the smallest "
                       "measured size of every swept workload.", evidence, lines)
    names = ", ".join(sorted({c.workload for c in cpu_first}))
    return verdict("cpu-small", claim, "depends", f"on the workload: the CPU wins small cases of "
                   f"{names}, but not of the others.", evidence, lines)


def cpu_no_memory_limit(results: pd.DataFrame) -> Finding:
    claim = "CPUs have no memory limitations."
    table = analysis_memory.max_batches(results)
    cpu = table[table["device_kind"] == "cpu"] if len(table) else table
    rows = latest_ok(results)
    if cpu.empty:
        if rows.empty:
            return untested("cpu-memory", claim, "Run `benchsite run -w max-batch`.")
        ram = rows[rows["device_kind"] == "cpu"]
        if ram.empty:
            return untested("cpu-memory", claim, "Run `benchsite run -w max-batch`.")
        row = ram.iloc[-1]
        size = (row.dev or {}).get("memory_bytes")
        if not size:
            return untested("cpu-memory", claim, "Run `benchsite run -w max-batch`.")
        return verdict("cpu-memory", claim, "contradicted", f"the CPU of {row.host} has "
                       f"{size / 2**30:.0f} GiB of RAM, shared with everything else it runs.",
                       [str(row.row_id)])
    parts = "; ".join(f"{r.max_batch:,.0f} on the {r.label} ({r.host}, {r.case})"
                      for r in cpu.itertuples())
    return verdict("cpu-memory", claim, "contradicted", f"the CPU's memory is finite too — the "
                   f"largest training batch found: {parts}. "
                   + " ".join(analysis_memory.compared_verdicts(table)),
                   list(table["row_id"]))


def gpu_memory_limits(results: pd.DataFrame) -> Finding:
    claim = "GPU memory constraints can limit the size of models that can be trained."
    table = analysis_memory.max_batches(results)
    gpu = table[table["device_kind"] != "cpu"] if len(table) else table
    ooms = analysis_memory.oom_rows(results)
    if len(gpu):  # the max-batch search ends where the GPU's memory does
        parts = "; ".join(f"{r.max_batch:,.0f} on the {r.label} ({bytes_text(r.ram)}, {r.case})"
                          for r in gpu.itertuples())
        return verdict("gpu-memory", claim, "supported", f"the batch stops where GPU memory "
                       f"does: at most {parts}. "
                       + " ".join(analysis_memory.compared_verdicts(table)),
                       list(table["row_id"]) + ooms)
    if ooms:
        return verdict("gpu-memory", claim, "supported", f"{len(ooms)} case(s) ran out of "
                       "memory (their newest run).", ooms)
    return untested("gpu-memory", claim, "Run `benchsite run -w max-batch` on a GPU machine.")


def _technique_claim(key: str, claim: str, technique: str, run: str,
                     only: Callable[[object], bool] = lambda e: True) -> Finding:
    def check(results: pd.DataFrame) -> Finding:
        effects = [e for e in analysis_techniques.technique_effects(results)
                   if e.technique == technique and only(e)]
        if not effects:
            return untested(key, claim, run)
        faster = [e for e in effects if e.low > 1.05]
        slower = [e for e in effects if e.high < 0.95]
        evidence = [r for e in effects for r in e.evidence]
        lines = "\n".join(f"- {with_case(e.workload, analysis_techniques.case_words(e.case))} on the "
                          f"{e.device}: {ratio_ci(e.speedup, e.low, e.high)}" for e in effects)
        if len(faster) == len(effects):
            return verdict(key, claim, "supported", f"faster in all {len(effects)} measured "
                           f"cases ({analysis_techniques.summary(effects)}).", evidence, lines)
        if not faster:
            where = ", ".join(sorted({e.device for e in effects}))
            return verdict(key, claim, "contradicted", f"faster in none of {len(effects)} "
                           f"measured cases on {where} ({len(slower)} clearly slower).",
                           evidence, lines)
        devices = ", ".join(sorted({e.device for e in faster}))
        return verdict(key, claim, "depends", f"on the device and case: faster in "
                       f"{len(faster)} of {len(effects)} cases (on {devices}).", evidence, lines)

    return check  # type: ignore[return-value]


def _memory_claim(results: pd.DataFrame, key: str, claim: str, technique: str,
                  run: str) -> Finding:
    effects = [e for e in analysis_techniques.technique_effects(results)
               if e.technique == technique and e.memory_saved is not None]
    if not effects:
        return untested(key, claim, run)
    saved = sorted(e.memory_saved for e in effects)
    evidence = [r for e in effects for r in e.evidence]
    mid = saved[len(saved) // 2]
    v = "supported" if saved[0] > 0.05 else "contradicted" if saved[-1] <= 0.05 else "depends"
    return verdict(key, claim, v, f"peak memory changes by {percent(-mid)} in the typical case "
                   f"(from {percent(-saved[-1])} to {percent(-saved[0])}, {len(saved)} cases).",
                   evidence)


def checkpointing_memory(results: pd.DataFrame) -> Finding:
    return _memory_claim(results, "checkpointing-memory", "Gradient checkpointing reduces the "
                         "memory footprint.", "checkpointing",
                         "Run `benchsite run -w transformer-train -w cnn-train --full`.")


def pruning_memory(results: pd.DataFrame) -> Finding:
    return _memory_claim(results, "pruning-memory", "Model pruning reduces the memory "
                         "footprint.", "sparsity", "Run `benchsite run -w mlp-infer --full`.")


def cpu_threads_limited(results: pd.DataFrame) -> Finding:
    claim = "Parallelizing on the CPU brings less than on the GPU: CPU thread scaling is limited."
    curves = analysis_cpu_threads.thread_curves(results)
    if not curves:
        return untested("cpu-threads", claim, "Run `benchsite run -w cpu-threads`.")
    flat = [c for c in curves if not analysis_cpu_threads.scales(c)]
    evidence = [r for c in curves for r in c["row_id"]]
    lines = "\n".join(f"- {c.iloc[-1].series}: {ratio(c.iloc[-1].speedup)} on "
                      f"{int(c.iloc[-1].threads_param)} threads" for c in curves)
    if len(flat) == len(curves):
        return verdict("cpu-threads", claim, "supported", "no measured op reaches half of "
                       "linear scaling on all threads.", evidence, lines)
    if not flat:
        return verdict("cpu-threads", claim, "contradicted", "every measured op scales to at "
                       "least half of linear on all threads.", evidence, lines)
    return verdict("cpu-threads", claim, "depends", f"on the op: {len(flat)} of {len(curves)} "
                   "do not scale (see the CPU threads findings for why).", evidence, lines)


def data_parallel(results: pd.DataFrame) -> Finding:
    claim = "Data parallelism over several GPUs accelerates training."
    found = [f for f in analysis_multi_gpu.multi_gpu_findings(results)
             if f.evidence and "efficiency" in f.numbers and f.workload in DATA_PARALLEL
             and is_accelerator(f.numbers.get("device_kind"))]  # gloo ranks share one CPU
    if not found:
        return untested("data-parallel", claim, "Run `benchsite run -w ddp-train` on a machine "
                        "with several GPUs.")
    gains = sorted(((_gain_at_most_devices(f), f) for f in found), key=lambda item: item[0])
    (low, worst), (high, best) = gains[0], gains[-1]
    evidence = [r for f in found for r in f.evidence]
    v = "supported" if low > 1.1 else "contradicted" if high <= 1.1 else "depends"
    answer = (f"several GPUs did {low:.2f}× ({worst.title}) to {high:.2f}× ({best.title}) the "
              "training work per second of one.")
    return verdict("data-parallel", claim, v, answer, evidence,
                   "\n".join(f"- {f.answer}" for _, f in gains))


def _gain_at_most_devices(found: Finding) -> float:
    """Work per second against one device (efficiency × devices) at the largest world size."""
    devices, efficiency = max((int(n), e) for n, e in found.numbers["efficiency"].items())
    return devices * efficiency


def not_all_ops(results: pd.DataFrame) -> Finding:
    claim = "Not all operations are well suited for GPU acceleration."
    table = speedups_of(results)
    if table.empty:
        return untested("not-all-ops", claim, RUN_GPU)
    slow = table[table["high"] < 1]
    if slow.empty:
        return verdict("not-all-ops", claim, "contradicted", "the GPU is at least as fast as "
                       "the CPU in every measured case.", rows_of(table))
    names = ", ".join(sorted(set(slow["workload"])))
    return verdict("not-all-ops", claim, "supported", f"the CPU is faster in {len(slow)} of "
                   f"{len(table)} measured cases ({names}).", rows_of(slow))


CLAIMS: list[Callable[[pd.DataFrame], Finding]] = [
    up_to_50x, cpu_for_small, cpu_no_memory_limit, gpu_memory_limits,
    _technique_claim("pinned", "Pinned memory speeds up host↔device transfers.", "pinned",
                     "Run `benchsite run -w transfer` on a GPU machine."),
    _technique_claim("mixed-precision", "Mixed precision (bf16/fp16) makes training faster.",
                     "precision", "Run `benchsite run -w mlp-train -w transformer-train --full`.",
                     only=lambda e: e.value in ("bf16", "fp16") and e.workload.endswith("-train")),
    checkpointing_memory, pruning_memory, cpu_threads_limited, data_parallel, not_all_ops,
]
