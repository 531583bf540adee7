"""Claims checked: what a typical "PyTorch CPU vs GPU" article asserts, held against this
store's numbers. Each claim gets a verdict — ``supported``, ``contradicted``, ``depends`` (and
on what) or ``untested`` (the store has no data for it) — and the rows behind it.

Verdicts read the tables (speedups, crossovers, technique effects, rows) and the findings of the
other analyses (their ``numbers``), never their code: the claims take ``tables`` and
``findings``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import (
    RUN_GPU,
    answered,
    by_host,
    bytes_text,
    case_text,
    case_words,
    describe_crossover,
    device_label,
    host_order,
    is_accelerator,
    memory_change,
    memory_saved,
    percent,
    ratio,
    ratio_ci,
    reasons_text,
    rows_of,
    short_answer,
    speedups_of,
    technique_table,
    unanswered,
)
from benchsite.units import faster_or_slower, plural

if TYPE_CHECKING:
    from benchsite.tables import Tables

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


def claim_findings(tables: Tables, findings: list[Finding]) -> list[Finding]:
    return [check(tables, findings) for check in CLAIMS]


def verdict(
    key: str,
    claim: str,
    verdict_: str,
    answer: str,
    evidence: list[str],
    explanation: str = "",
    bullets: list[str] | None = None,
) -> Finding:
    """A claim's verdict: one sentence, at most eight bullets, the rest behind "More"."""
    text, more = short_answer(f"{verdict_.capitalize()}: {answer}", bullets or [], explanation)
    return answered(
        KIND, key, claim, text, evidence, verdict=verdict_, question=claim, explanation=more
    )


def untested(key: str, claim: str, what_to_run: str) -> Finding:
    return unanswered(
        KIND,
        key,
        claim,
        "Untested: this store has no data for it.",
        what_to_run,
        verdict="untested",
        question=claim,
    )


def up_to_50x(tables: Tables, findings: list[Finding]) -> Finding:
    claim = "GPUs can be up to 50× faster than CPUs."
    table = speedups_of(tables)
    if table.empty:
        return untested("up-to-50x", claim, RUN_GPU)
    best = table.loc[table["speedup"].idxmax()]
    worst = table.loc[table["speedup"].idxmin()]
    span = (
        f"the measured speedups run from {ratio(worst.speedup)} ({worst.workload}, "
        f"{case_text(worst.params)}) to {ratio_ci(best.speedup, best.low, best.high)} "
        f"({best.workload}, {case_text(best.params)}) on the {best.gpu_label}"
    )
    if best.high < ARTICLE_MAX * 0.7:
        v, text = "contradicted", f"on these devices the GPU never comes near 50×: {span}."
    elif best.low > ARTICLE_MAX * 3:
        v, text = "depends", (f"50× is no ceiling — it depends on the size of the work: {span}.")
    else:
        v, text = "supported", f"{span}."
    return verdict(
        "up-to-50x",
        claim,
        v,
        text,
        rows_of(table),
        "The number depends on the work: small problems gain little or lose, large "
        "dense ones gain most. Precisions are the same on both sides of each pair.",
    )


def cpu_for_small(tables: Tables, findings: list[Finding]) -> Finding:
    claim = "CPUs are better for small models and small batches."
    swept = [c for c in tables.crossovers.itertuples() if not c.include_transfer]
    items = [c for c in swept if not c.suspect]
    if not items:
        return untested("cpu-small", claim, RUN_GPU)
    cpu_first = [c for c in items if c.outcome in ("crosses", "cpu-always")]
    evidence = [r for c in items for r in c.evidence]
    sized = tables.byte_sized
    lines = [
        describe_crossover(c, c.workload in sized)
        for c in sorted(items, key=lambda c: c.outcome == "gpu-always")
    ]
    left_out = "\n".join(
        f"- Left out, {reasons_text(c.reasons)}: {describe_crossover(c, c.workload in sized)}"
        for c in swept
        if c.suspect
    )
    if len(cpu_first) == len(items):
        return verdict(
            "cpu-small",
            claim,
            "supported",
            "in every swept workload the CPU wins at the smallest measured size.",
            evidence,
            left_out,
            lines,
        )
    if not cpu_first:
        return verdict(
            "cpu-small",
            claim,
            "contradicted",
            "the GPU wins even at the smallest measured size of every swept workload.",
            evidence,
            left_out,
            lines,
        )
    names = ", ".join(sorted({c.workload for c in cpu_first}))
    return verdict(
        "cpu-small",
        claim,
        "depends",
        f"on the workload: the CPU wins small cases of {names}, but not of the others.",
        evidence,
        left_out,
        lines,
    )


def max_batches(findings: list[Finding]) -> list[dict[str, Any]]:
    """Every device's largest batch, from the max-batch findings' numbers (with its host,
    case and label)."""
    return [
        {
            **values,
            "label": label,
            "host": (f.scope.get("hosts") or ["?"])[0],
            "case": f.numbers.get("case", ""),
        }
        for f in findings
        if f.kind == "memory" and "devices" in f.numbers
        for label, values in f.numbers["devices"].items()
    ]


def _memory_findings(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.kind == "memory" and "devices" in f.numbers]


def _compared(findings: list[Finding]) -> str:
    return " ".join(
        f.numbers["verdict"] for f in _memory_findings(findings) if f.numbers.get("compared")
    )


def _memory_rows(findings: list[Finding]) -> list[str]:
    return [r for f in _memory_findings(findings) for r in f.evidence]


def cpu_no_memory_limit(tables: Tables, findings: list[Finding]) -> Finding:
    claim = "CPUs have no memory limitations."
    cpu = [d for d in max_batches(findings) if d["device_kind"] == "cpu"]
    if not cpu:
        ram = tables.ok[tables.ok["device_kind"] == "cpu"]
        size = (ram.iloc[-1].dev or {}).get("memory_bytes") if len(ram) else None
        if not size:
            return untested("cpu-memory", claim, "Run `benchsite run -w max-batch`.")
        row = ram.iloc[-1]
        return verdict(
            "cpu-memory",
            claim,
            "contradicted",
            f"the CPU of {row.host} has "
            f"{size / 2**30:.0f} GiB of RAM, shared with everything else it runs.",
            [str(row.row_id)],
        )
    parts = [
        f"{d['max_batch']:,.0f} on the {d['label']} of {d['host']} ({d['case']}, within "
        f"a {bytes_text(d['limit_bytes'])} budget)"
        for d in cpu
    ]
    return verdict(
        "cpu-memory",
        claim,
        "contradicted",
        "the CPU's memory is finite too. " + _compared(findings),
        _memory_rows(findings),
        bullets=[f"Largest training batch: {part}." for part in parts],
    )


def gpu_memory_limits(tables: Tables, findings: list[Finding]) -> Finding:
    claim = "GPU memory constraints can limit the size of models that can be trained."
    gpu = [d for d in max_batches(findings) if d["device_kind"] != "cpu"]
    current = tables.current
    ooms = list(current["row_id"][current["status"] == "oom"])
    if gpu:  # the max-batch search ends where the GPU's memory does
        parts = "; ".join(
            f"{d['max_batch']:,.0f} on the {d['label']} "
            f"({bytes_text(d['memory_bytes'])}, {d['case']})"
            for d in gpu
        )
        return verdict(
            "gpu-memory",
            claim,
            "supported",
            f"the batch stops where GPU memory does: at most {parts}.",
            _memory_rows(findings) + ooms,
            bullets=[_compared(findings)],
        )
    if ooms:
        return verdict(
            "gpu-memory",
            claim,
            "supported",
            f"{plural(len(ooms), 'case')} ran out of memory (their newest run).",
            ooms,
        )
    return untested("gpu-memory", claim, "Run `benchsite run -w max-batch` on a GPU machine.")


def effects(tables: Tables, technique: str, timed: bool = True) -> list[dict[str, Any]]:
    """Every usable case of ``technique`` against its baseline, from the effects table, with the
    case and the device in words. For a claim about time (``timed``) a suspect pair is never
    usable; for one about memory it is: every suspect flag is about the timing, and a peak of
    memory is read from the allocator, not timed (a noisy transformer step on the H200 had
    left checkpointing's 47% saving out of its claim)."""
    table = technique_table(tables, technique)
    return [
        {
            "value": e.value,
            "workload": e.workload,
            "case": case_words(e.case, e.workload in tables.byte_sized),
            "device": device_label(e),
            "speedup": e.speedup,
            "low": e.low,
            "high": e.high,
            "memory_saved": memory_saved(e),
            "evidence": (e.baseline_row, e.row_id),
            "kind": str(e.device_kind),
        }
        for e in table.itertuples()
        if not (timed and e.suspect)
    ]


def _technique_claim(
    key: str,
    claim: str,
    technique: str,
    run: str,
    only: Callable[[dict[str, Any]], bool] = lambda e: True,
) -> Finding:
    def check(tables: Tables, findings: list[Finding]) -> Finding:
        found = [e for e in effects(tables, technique) if only(e)]
        if not found:
            return untested(key, claim, run)
        faster = [e for e in found if e["low"] > 1.05]
        slower = [e for e in found if e["high"] < 0.95]
        evidence = sorted({r for e in found for r in e["evidence"]})
        lines = [
            f"{e['workload']} ({_named(technique, e)}) on the {e['device']}: "
            f"{ratio_ci(e['speedup'], e['low'], e['high'])}"
            for e in sorted(found, key=lambda e: -e["speedup"])
        ]
        if len(faster) == len(found):
            return verdict(
                key,
                claim,
                "supported",
                f"faster in all {len(found)} measured cases ({_summary(found)}).",
                evidence,
                bullets=lines,
            )
        if not faster:
            where = ", ".join(sorted({e["device"] for e in found}))
            return verdict(
                key,
                claim,
                "contradicted",
                f"faster in none of {len(found)} "
                f"measured cases on {where} ({len(slower)} clearly slower).",
                evidence,
                bullets=lines,
            )
        devices = ", ".join(sorted({e["device"] for e in faster}))
        return verdict(
            key,
            claim,
            "depends",
            f"on the device and case: faster in "
            f"{len(faster)} of {len(found)} cases (on {devices}).",
            evidence,
            bullets=lines,
        )

    return check  # type: ignore[return-value]


def _named(technique: str, effect: dict[str, Any]) -> str:
    """An effect's case with the technique's value named first: ``bf16, batch 256``."""
    value = effect["value"]
    named = (
        str(value)
        if technique == "precision"
        else f"{percent(float(value))} sparsity"
        if technique == "sparsity"
        else ""
    )
    return ", ".join(part for part in (named, effect["case"]) if part)


def _summary(found: list[dict[str, Any]]) -> str:
    """The typical effect over the cases: ``1.9× faster (median of 4 cases, 1.5× to 2.3×)``."""
    speedups = sorted(e["speedup"] for e in found)
    mid = speedups[len(speedups) // 2]
    direction = faster_or_slower(mid)
    if len(found) == 1:
        e = found[0]
        return f"{direction} ({ratio_ci(e['speedup'], e['low'], e['high'])} speed ratio)"
    return (
        f"{direction} (median of {len(found)} cases; from {ratio(speedups[0])} to "
        f"{ratio(speedups[-1])})"
    )


def _memory_claim(tables: Tables, key: str, claim: str, technique: str, run: str) -> Finding:
    measured = [e for e in effects(tables, technique, timed=False) if e["memory_saved"] is not None]
    # a GPU's peak allocated memory is exact; a CPU's resident set also counts allocator caches,
    # so the CPU decides only where no accelerator measured the technique
    found = [e for e in measured if e["kind"] != "cpu"] or measured
    if not found:
        return untested(key, claim, run)
    saved = sorted(e["memory_saved"] for e in found)
    evidence = sorted({r for e in found for r in e["evidence"]})
    mid = saved[len(saved) // 2]
    v = "supported" if saved[0] > 0.05 else "contradicted" if saved[-1] <= 0.05 else "depends"
    where = "GPU" if found[0]["kind"] != "cpu" else "CPU resident"
    lines = [
        f"{e['workload']} ({_named(technique, e)}) on the {e['device']}: "
        f"{memory_change(e['memory_saved'])}"
        for e in sorted(found, key=lambda e: -e["memory_saved"])
    ]
    cpu = [e for e in measured if e not in found]
    more = (
        (
            "On the CPU (resident memory, which also counts allocator caches): "
            + "; ".join(
                f"{e['workload']} ({_named(technique, e)}) {memory_change(e['memory_saved'])}"
                for e in cpu
            )
            + "."
        )
        if cpu
        else ""
    )
    return verdict(
        key,
        claim,
        v,
        f"peak {where} memory {memory_change(mid)} in the typical case of "
        f"{plural(len(saved), 'case')}.",
        evidence,
        more,
        bullets=lines,
    )


def checkpointing_memory(tables: Tables, findings: list[Finding]) -> Finding:
    return _memory_claim(
        tables,
        "checkpointing-memory",
        "Gradient checkpointing reduces the memory footprint.",
        "checkpointing",
        "Run `benchsite run -w transformer-train -w cnn-train --full`.",
    )


def pruning_memory(tables: Tables, findings: list[Finding]) -> Finding:
    return _memory_claim(
        tables,
        "pruning-memory",
        "Model pruning reduces the memory footprint.",
        "sparsity",
        "Run `benchsite run -w mlp-infer --full`.",
    )


def cpu_threads_limited(tables: Tables, findings: list[Finding]) -> Finding:
    claim = "Parallelizing on the CPU brings less than on the GPU: CPU thread scaling is limited."
    curves = [f for f in findings if f.kind == "cpu-threads" and "scales" in f.numbers]
    if not curves:
        return untested("cpu-threads", claim, "Run `benchsite run -w cpu-threads`.")
    flat = [f for f in curves if not f.numbers.get("scales")]
    evidence = [r for f in curves for r in f.evidence]
    lines = [
        f"{f.title.removeprefix('CPU thread scaling: ')} on {f.scope['hosts'][0]}: "
        f"{ratio(f.numbers['speedup'])} on {plural(f.numbers['threads'], 'thread')}"
        for f in by_host(curves, host_order(tables))
    ]
    if len(flat) == len(curves):
        return verdict(
            "cpu-threads",
            claim,
            "supported",
            "no measured op reaches half of linear scaling on all threads.",
            evidence,
            bullets=lines,
        )
    if not flat:
        return verdict(
            "cpu-threads",
            claim,
            "contradicted",
            "every measured op scales to at least half of linear on all threads.",
            evidence,
            bullets=lines,
        )
    return verdict(
        "cpu-threads",
        claim,
        "depends",
        f"on the op: {len(flat)} of {len(curves)} "
        "do not scale (see the CPU threads findings for why).",
        evidence,
        bullets=lines,
    )


def data_parallel(tables: Tables, findings: list[Finding]) -> Finding:
    claim = "Data parallelism over several GPUs accelerates training."
    found = [
        f
        for f in findings
        if f.kind == "multi-gpu"
        and f.evidence
        and "efficiency" in f.numbers
        and f.workload in DATA_PARALLEL
        and is_accelerator(f.numbers.get("device_kind"))
    ]  # gloo ranks share one CPU
    if not found:
        return untested(
            "data-parallel",
            claim,
            "Run `benchsite run -w ddp-train` on a machine with several GPUs.",
        )
    gains = sorted(((_gain_at_most_devices(f), f) for f in found), key=lambda item: item[0])
    (low, worst), (high, best) = gains[0], gains[-1]
    evidence = [r for f in found for r in f.evidence]
    v = "supported" if low > 1.1 else "contradicted" if high <= 1.1 else "depends"
    answer = (
        f"several GPUs did {low:.2f}× ({worst.title}) to {high:.2f}× ({best.title}) the "
        "training work per second of one."
    )
    return verdict(
        "data-parallel",
        claim,
        v,
        answer,
        evidence,
        bullets=[f.answer.split("\n")[0] for _, f in gains],
    )


def _gain_at_most_devices(found: Finding) -> float:
    """Work per second against one device (efficiency × devices) at the largest world size."""
    devices, efficiency = max((int(n), e) for n, e in found.numbers["efficiency"].items())
    return devices * efficiency


def not_all_ops(tables: Tables, findings: list[Finding]) -> Finding:
    claim = "Not all operations are well suited for GPU acceleration."
    table = speedups_of(tables)
    if table.empty:
        return untested("not-all-ops", claim, RUN_GPU)
    slow = table[table["high"] < 1]
    if slow.empty:
        return verdict(
            "not-all-ops",
            claim,
            "contradicted",
            "the GPU is at least as fast as the CPU in every measured case.",
            rows_of(table),
        )
    names = ", ".join(sorted(set(slow["workload"])))
    return verdict(
        "not-all-ops",
        claim,
        "supported",
        f"the CPU is faster in {len(slow)} of {plural(len(table), 'measured case')} ({names}).",
        rows_of(slow),
    )


CLAIMS: list[Callable[[Tables, list[Finding]], Finding]] = [
    up_to_50x,
    cpu_for_small,
    cpu_no_memory_limit,
    gpu_memory_limits,
    _technique_claim(
        "pinned",
        "Pinned memory speeds up host↔device transfers.",
        "pinned",
        "Run `benchsite run -w transfer` on a GPU machine.",
    ),
    _technique_claim(
        "mixed-precision",
        "Mixed precision (bf16/fp16) makes training faster.",
        "precision",
        "Run `benchsite run -w mlp-train -w transformer-train --full`.",
        only=lambda e: e["value"] in ("bf16", "fp16") and str(e["workload"]).endswith("-train"),
    ),
    checkpointing_memory,
    pruning_memory,
    cpu_threads_limited,
    data_parallel,
    not_all_ops,
]
