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
    UNCLEAR,
    answered,
    by_host,
    bytes_text,
    case_text,
    case_words,
    crossover_case,
    declared_models,
    describe_crossover,
    device_label,
    host_order,
    is_accelerator,
    left_out_text,
    median_of,
    memory_change,
    memory_saved,
    model_line,
    model_words,
    models_sentence,
    percent,
    ratio,
    ratio_ci,
    rows_of,
    short_answer,
    side_of,
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
    v = fifty_verdict(best)
    text = {
        "contradicted": f"on these devices the GPU never comes near 50×: {span}.",
        "depends": f"50× is no ceiling — it depends on the size of the work: {span}.",
        "supported": f"{span}.",
    }[v]
    models = declared_models(tables.answers)
    if not models.empty:
        text += (
            f" Judged on the models alone, {models_sentence(models)}: "
            + {
                "contradicted": "none comes near 50×.",
                "depends": "50× is no ceiling for them.",
                "supported": "the best of them is near 50×.",
            }[fifty_verdict(models.loc[models["speedup"].idxmax()])]
        )
    return verdict(
        "up-to-50x",
        claim,
        v,
        text,
        rows_of(table),
        "The number depends on the work: small problems gain little or lose, large "
        "dense ones gain most. Precisions are the same on both sides of each pair. A model's "
        "line is its default case at its largest measured size, in its own unit.",
        [f"- {model_line(row)}." for row in models.itertuples()],
    )


def fifty_verdict(best: Any) -> str:
    """How the pair of the largest speedup (``speedup``, ``low``, ``high``) judges "up to 50×":
    ``contradicted`` (its interval stays below 70% of 50×), ``depends`` (above three times
    50×: no ceiling) or ``supported``."""
    if best.high < ARTICLE_MAX * 0.7:
        return "contradicted"
    if best.low > ARTICLE_MAX * 3:
        return "depends"
    return "supported"


def cpu_for_small(tables: Tables, findings: list[Finding]) -> Finding:
    claim = "CPUs are better for small models and small batches."
    items = [c for c in tables.crossovers.itertuples() if not c.suspect]
    if not items:
        return untested("cpu-small", claim, RUN_GPU)
    sides = {id(c): side_of(*c.first_interval) for c in items}
    clear = [c for c in items if sides[id(c)] != "unclear"]
    cpu_first = [c for c in clear if sides[id(c)] == "slower"]
    gpu_first = [c for c in clear if sides[id(c)] == "faster"]
    evidence = [r for c in items for r in c.evidence]
    sized = tables.byte_sized
    lines = [
        describe_crossover(c, c.workload in sized)
        for c in sorted(clear, key=lambda c: sides[id(c)] == "faster")
    ]
    unclear = [c for c in items if sides[id(c)] == "unclear"]
    left = "\n".join(
        f"- Left out ({UNCLEAR} at the smallest size): {describe_crossover(c, c.workload in sized)}"
        for c in unclear
    )
    if not clear:
        v, text = "depends", f"no swept workload is clear at its smallest size: {UNCLEAR}."
    elif not gpu_first:
        v, text = "supported", "in every swept workload the CPU wins at the smallest measured size."
    elif not cpu_first:
        v = "contradicted"
        text = "the GPU wins even at the smallest measured size of every swept workload."
    else:
        v = "depends"
        text = (
            f"on the workload: at its smallest measured size the CPU wins {_series(cpu_first)}; "
            f"the GPU wins {_series(gpu_first)}."
        )
    if unclear:
        text += f" {plural(len(unclear), 'series', 'series')} left out: {UNCLEAR} there."
    return verdict("cpu-small", claim, v, text, evidence, left, lines)


def _series(crossings: list[Any]) -> str:
    """``copy, matmul (fp32), matmul (fp32, with copies)``: each crossover's workload and
    case, in words."""
    names = []
    for c in crossings:
        case = crossover_case(c)
        case = ", ".join(
            part for part in (case, "with copies" if c.include_transfer else "") if part
        )
        names.append(f"{c.workload} ({case})" if case else str(c.workload))
    return ", ".join(sorted(dict.fromkeys(names)))


def max_batches(findings: list[Finding]) -> list[dict[str, Any]]:
    """Every device's largest batch, from the max-batch findings' numbers (with its host,
    case and label)."""
    return _per_device(findings, "devices")


def largest_models(findings: list[Finding]) -> list[dict[str, Any]]:
    """Every device's largest model, from the max-model findings' numbers (with its host,
    case, label and, where it compares a CPU with a GPU, the finding's verdict)."""
    return _per_device(findings, "largest_models")


def _per_device(findings: list[Finding], key: str) -> list[dict[str, Any]]:
    return [
        {
            **values,
            "label": label,
            "host": (f.scope.get("hosts") or ["?"])[0],
            "case": f.numbers.get("case", ""),
            "verdict": f.numbers.get("verdict", "") if f.numbers.get("compared") else "",
        }
        for f in findings
        if f.kind == "memory" and key in f.numbers
        for label, values in f.numbers[key].items()
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
        f"{d['max_batch']:,.0f} samples on the {d['label']} of {d['host']} ({d['case']}, "
        f"within a {bytes_text(d['limit_bytes'])} budget)"
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
    models = [d for d in largest_models(findings) if d["device_kind"] != "cpu"]
    if models:  # the max-model search ends where the GPU's memory does: model size measured
        parts = "; ".join(
            f"{model_words(d['parameters'])} ({d['layers']:,.0f} layers of an MLP) on the "
            f"{d['label']} ({bytes_text(d['memory_bytes'])})"
            for d in models
        )
        evidence = [r for f in findings if f.workload == "max-model" for r in f.evidence]
        said = [d["verdict"] for d in largest_models(findings) if d["verdict"]]
        return verdict(
            "gpu-memory",
            claim,
            "supported",
            f"the largest model whose training step fits stops where GPU memory does: {parts}.",
            evidence,
            bullets=list(dict.fromkeys(said)),
        )
    gpu = [d for d in max_batches(findings) if d["device_kind"] != "cpu"]
    current = tables.current
    ooms = list(current["row_id"][current["status"] == "oom"])
    if gpu:  # the max-batch search ends where the GPU's memory does
        parts = "; ".join(
            f"{d['max_batch']:,.0f} samples on the {d['label']} "
            f"({bytes_text(d['memory_bytes'])}, {d['case']})"
            for d in gpu
        )
        return verdict(
            "gpu-memory",
            claim,
            "supported",
            f"the batch stops where GPU memory does: at most {parts}. Tested on the batch "
            "size of one model; model size was not measured (`benchsite run -w max-model`).",
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
            "row": e.row_id,
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
        sides = {e["row"]: side_of(e["low"], e["high"]) for e in found}
        clear = [e for e in found if sides[e["row"]] != "unclear"]
        faster = [e for e in clear if sides[e["row"]] == "faster"]
        evidence = sorted({r for e in found for r in e["evidence"]})
        lines = [
            f"{e['workload']} ({_named(technique, e)}) on the {e['device']}: "
            f"{ratio_ci(e['speedup'], e['low'], e['high'])}"
            for e in sorted(found, key=lambda e: -e["speedup"])
        ]
        left = left_out_text(len(found) - len(clear), len(found))
        cases = "clear cases" if left else "measured cases"
        if not clear:
            v, text = "depends", f"no case is clear: {UNCLEAR} ({_summary(found)})."
        elif len(faster) == len(clear):
            v = "supported"
            text = f"faster in all {len(clear)} {cases} ({_summary(clear)}; {_on(clear)})."
        elif not faster:
            v = "contradicted"
            text = f"faster in none of {len(clear)} {cases} ({_summary(clear)}; {_on(clear)})."
        else:
            v, text = "depends", f"on the device and case: {_by_device(clear, sides)}."
        return verdict(key, claim, v, f"{text} {left}".strip(), evidence, bullets=lines)

    return check  # type: ignore[return-value]


def _on(items: list[dict[str, Any]]) -> str:
    """``on the NVIDIA H200 (cuda:0)``: the devices of ``items``, in words."""
    return "on the " + " and the ".join(sorted({e["device"] for e in items}))


def _by_device(items: list[dict[str, Any]], sides: dict[str, str]) -> str:
    """``faster in 2 of 3 cases on the NVIDIA H200 (cuda:0), in 0 of 1 on the AMD EPYC (cpu)``:
    per device, how many of its clear cases are faster."""
    devices: dict[str, list[dict[str, Any]]] = {}
    for e in items:
        devices.setdefault(e["device"], []).append(e)
    parts = [
        f"{sum(sides[e['row']] == 'faster' for e in group)} of {len(group)} on the {device}"
        for device, group in sorted(devices.items(), key=lambda item: -len(item[1]))
    ]
    return "faster in " + ", ".join(parts) + " (clear cases)"


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
    """The effect over the cases: ``1.1× to 8.6× speed ratio, median 4.2×``."""
    speedups = sorted(e["speedup"] for e in found)
    if len(found) == 1:
        e = found[0]
        return f"{ratio_ci(e['speedup'], e['low'], e['high'])} speed ratio"
    return (
        f"{ratio(speedups[0])} to {ratio(speedups[-1])} speed ratio, median "
        f"{ratio(median_of(speedups))}"
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
        f"peak {where} memory {_each_memory(found)}{_time_cost(found)}.",
        evidence,
        more,
        bullets=lines,
    )


def _each_memory(found: list[dict[str, Any]]) -> str:
    """``falls by 47% (transformer-train) and by 5.7% (cnn-train)``; over more than three
    cases the median and the range."""
    ordered = sorted(found, key=lambda e: -e["memory_saved"])
    if len(ordered) <= 3:
        return " and ".join(
            f"{memory_change(e['memory_saved'])} ({e['workload']})" for e in ordered
        ).replace(" and falls by ", " and by ")
    values = [e["memory_saved"] for e in ordered]
    return (
        f"{memory_change(median_of(values))} in the median of {len(values)} cases (from "
        f"{memory_change(values[0])} to {memory_change(values[-1])})"
    )


def _time_cost(found: list[dict[str, Any]]) -> str:
    """``, and the same cases run 1.8× and 1.5× slower``: what the memory costs in time."""
    timed = [e for e in found if e["speedup"] == e["speedup"]]
    if not timed:
        return ""
    words = [
        faster_or_slower(e["speedup"]) for e in sorted(timed, key=lambda e: -e["memory_saved"])
    ]
    if len(words) > 3:
        words = [faster_or_slower(median_of(e["speedup"] for e in timed)) + " (median)"]
    return "; the same " + ("case runs " if len(timed) == 1 else "cases run ") + " and ".join(words)


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
    below = "; ".join(
        f"{f.title.removeprefix('CPU thread scaling: ')} on {f.scope['hosts'][0]} "
        f"{ratio(f.numbers['speedup'])} on {plural(f.numbers['threads'], 'thread')} "
        f"({percent(f.numbers['efficiency'])} efficiency)"
        for f in by_host(flat, host_order(tables))
    )
    return verdict(
        "cpu-threads",
        claim,
        "depends",
        f"on the op: {len(curves) - len(flat)} of {len(curves)} reach half of linear scaling "
        f"on all threads; {below} stay below it (see the CPU threads findings for why).",
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
