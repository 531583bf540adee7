"""The FAQ: the questions people ask about PyTorch on CPU vs GPU, answered with this store's
numbers. Each answer leads with one sentence, then the numbers and their uncertainty; where
the store cannot answer (no GPU measured, no energy counter), it says so and what to run.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from benchsite.plugins import (
    analysis_batch_scaling,
    analysis_cpu_threads,
    analysis_crossover,
    analysis_energy_cost,
    analysis_memory,
    analysis_multi_gpu,
    analysis_techniques,
    analysis_validity,
)
from benchsite.plugins._answers import (
    RUN_GPU,
    answered,
    rows_of,
    speedup_summary,
    speedups_of,
    unanswered,
)
from benchsite.plugins._findings import (
    case_text,
    faster,
    info_value,
    number_text,
    ok_rows,
    percent,
    ratio,
    with_case,
)

from benchsite import Analysis, Finding, hookimpl

KIND = "faq"


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="faq",
            description="The usual CPU-vs-GPU questions answered with this store's numbers.",
            analyze=faq_findings,
        )
    ]


def faq_findings(results: pd.DataFrame) -> list[Finding]:
    return [question(results) for question in QUESTIONS]


def _speed(results: pd.DataFrame, kind: str, key: str, question: str) -> Finding:
    table = speedups_of(results, kind)
    if table.empty:
        return unanswered(KIND, key, question, f"Not measured: no {kind} workload was run on both "
                          "a CPU and a GPU of the same machine.", RUN_GPU, question=question)
    sentence, lines = speedup_summary(table)
    return answered(KIND, key, question, f"For {kind} in this store, {sentence}.", rows_of(table),
                    explanation="\n".join(lines), question=question, strength="strong")


def training_speed(results: pd.DataFrame) -> Finding:
    return _speed(results, "training", "training-speed",
                  "How much faster is a GPU than a CPU for training?")


def inference_speed(results: pd.DataFrame) -> Finding:
    return _speed(results, "inference", "inference-speed",
                  "How much faster is a GPU than a CPU for inference?")


def from_which_size(results: pd.DataFrame) -> Finding:
    q = "From which model or batch size on does the GPU pay off?"
    items = [c for c in analysis_crossover.crossover_table(results) if not c.include_transfer]
    if not items:
        return unanswered(KIND, "crossover", q, "Not measured: no size- or batch-swept workload "
                          "was run on both a CPU and a GPU.", RUN_GPU, question=q)
    by_outcome = {o: [c for c in items if c.outcome == o] for o in ("crosses", "gpu-always",
                                                                     "cpu-always")}
    parts = []
    if by_outcome["crosses"]:
        parts.append("the GPU is faster from " + "; ".join(
            f"{_named(c)} ≈ {number_text(c.value)}" for c in by_outcome["crosses"]))
    if by_outcome["gpu-always"]:
        parts.append("at every measured size, from the smallest, for " + "; ".join(
            _named(c, axis=False) for c in by_outcome["gpu-always"]))
    if by_outcome["cpu-always"]:
        parts.append("never (the CPU wins at every measured size) for " + "; ".join(
            _named(c, axis=False) for c in by_outcome["cpu-always"]))
    lead = ("It depends on the work: " if by_outcome["crosses"] else
            "On the measured sizes there is no crossover: ") + ", and ".join(parts) + "."
    devices = sorted({c.gpu_label for c in items})
    lead += f" (GPU: {', '.join(devices)}; copies not timed.)"
    return answered(KIND, "crossover", q, lead, [r for c in items for r in c.evidence],
                    explanation="Each crossover is interpolated between the two measured sizes "
                    "around it; the Findings page gives those sizes and speedups.", question=q)


def _named(c: analysis_crossover.Crossover, axis: bool = True) -> str:
    """``matmul (bf16) size`` — a crossover's case (and axis) in few words."""
    named = with_case(c.workload, c.case)
    return f"{named} {c.axis}" if axis else named


def transfers(results: pd.DataFrame) -> Finding:
    q = "Do host↔device copies eat the GPU's gain?"
    items = analysis_crossover.crossover_table(results)
    pinned = [e for e in analysis_techniques.technique_effects(results) if e.technique == "pinned"]
    pairs = _with_and_without(items)
    if not pairs and not pinned:
        return unanswered(KIND, "transfers", q, "Not measured: no GPU case was timed both with "
                          "and without copies, and no transfer case was run.", RUN_GPU, question=q)
    lines, evidence = [], []
    for without, with_copies in pairs:
        lines.append(f"- {analysis_crossover.describe(without)} "
                     f"{analysis_crossover.describe(with_copies)}")
        evidence += [*without.evidence, *with_copies.evidence]
    for device in sorted({e.device for e in pinned}):
        gains = sorted(e.speedup for e in pinned if e.device == device)
        lines.append(f"- On the {device}, copies from and to pinned host memory are "
                     f"{ratio(gains[0])} to {ratio(gains[-1])} as fast as from pageable memory "
                     f"(median {ratio(gains[len(gains) // 2])} over {len(gains)} cases).")
    evidence += [r for e in pinned for r in e.evidence]
    lead = ("Yes, at small sizes: counting the copies moves the point where the GPU wins to "
            "larger sizes." if pairs else "Copies matter; pinned memory changes their speed.")
    return answered(KIND, "transfers", q, lead, evidence, explanation="\n".join(lines),
                    question=q)


def _with_and_without(items: list) -> list[tuple]:
    by_key = {(c.host, c.gpu_label, c.workload, c.case, c.include_transfer): c for c in items}
    return [(c, by_key[(*k[:4], True)]) for k, c in by_key.items()
            if not k[4] and (*k[:4], True) in by_key]


def batch_size(results: pd.DataFrame) -> Finding:
    q = "Which batch size should I use?"
    items = analysis_batch_scaling.saturation_table(results)
    if not items:
        return unanswered(KIND, "batch-size", q, "Not measured: no batch-swept workload has "
                          "results.", "Run `benchsite run -w mlp-train -w cnn-train`.", question=q)
    lines = [f"- {s.workload}: {analysis_batch_scaling.describe(s)}." for s in items]
    return answered(KIND, "batch-size", q,
                    "Use the batch where throughput stops growing: beyond it a bigger batch buys "
                    "little speed and costs memory. Per device and workload: see below.",
                    [r for s in items for r in s.evidence], explanation="\n".join(lines),
                    question=q)


def memory_needed(results: pd.DataFrame) -> Finding:
    q = "How much memory do I need, and is GPU memory the limit?"
    lines_ = analysis_memory.memory_lines(results)
    table = analysis_memory.max_batches(results)
    if not lines_ and table.empty:
        return unanswered(KIND, "memory", q, "Not measured: no result carries memory metrics.",
                          "Run `benchsite run -w max-batch -w mlp-train` with the memory "
                          "collector enabled.", question=q)
    lines = [f"- {x.workload}: {analysis_memory.describe_line(x)}." for x in lines_]
    evidence = [r for x in lines_ for r in x.evidence]
    lead = "Memory grows with the batch: see the per-sample figures below."
    for (host, _case), group in (table.groupby(["host", "case"]) if len(table) else []):
        verdict = analysis_memory.memory_verdict(group)
        lines.append(f"- Largest batch on {host}: " + "; ".join(
            f"{r.max_batch:,.0f} on the {r.label}" for r in group.itertuples()) + f". {verdict}")
        evidence += list(group["row_id"])
        lead = verdict
    return answered(KIND, "memory", q, lead, evidence, explanation="\n".join(lines), question=q)


def cpu_cores(results: pd.DataFrame) -> Finding:
    q = "Does my CPU use all its cores?"
    curves = analysis_cpu_threads.thread_curves(results)
    rows = ok_rows(results)
    cpu = rows[rows["device_kind"] == "cpu"] if not rows.empty else rows
    if cpu.empty:
        return unanswered(KIND, "cpu-cores", q, "Not measured: no CPU result in the store.",
                          "Run `benchsite run -w cpu-threads`.", question=q)
    lines, evidence = _core_lines(cpu)
    lead = lines[0][2:]
    for curve in curves:
        top = curve.iloc[-1]
        state = "scales" if analysis_cpu_threads.scales(curve) else "does not scale"
        lines.append(f"- {top.series} on {top.host}: {ratio(top.speedup)} on "
                     f"{int(top.threads_param)} threads ({percent(top.efficiency)} efficiency): "
                     f"{state}.")
        evidence += list(curve["row_id"])
    if not curves:
        lines.append("- Thread scaling was not measured: run `benchsite run -w cpu-threads`.")
    flat = [c for c in curves if not analysis_cpu_threads.scales(c)]
    if flat:
        lead += f" But {len(flat)} of {len(curves)} measured ops do not speed up with more threads."
    return answered(KIND, "cpu-cores", q, lead, evidence, explanation="\n".join(lines),
                    question=q)


def _core_lines(cpu: pd.DataFrame) -> tuple[list[str], list[str]]:
    lines, evidence = [], []
    for host, group in cpu.groupby("host", observed=True, sort=True):
        row = group.iloc[-1]
        logical, usable = info_value(row, "logical_cpus"), info_value(row, "usable_cpus")
        flagged = group[group["row_id"].isin(_flagged(cpu, "cpu-not-all-cores"))]
        text = (f"- On {host}, the process may use {usable} of the {logical} logical CPUs"
                + (" (affinity or a cgroup quota limits it)" if usable and logical
                   and usable < logical else "")
                + f"; {len(group) - len(flagged)} of {len(group)} CPU cases used them all.")
        lines.append(text)
        evidence += [str(row.row_id), *flagged["row_id"]]
    return lines, evidence


def _flagged(results: pd.DataFrame, code: str) -> set[str]:
    flags = results["flags"] if "flags" in results else \
        analysis_validity.prepare_results(results)["flags"]
    return set(results["row_id"][flags.map(lambda f: code in f).to_numpy()])


def several_gpus(results: pd.DataFrame) -> Finding:
    q = "What do several GPUs buy?"
    found = [f for f in analysis_multi_gpu.summary_findings(results) if f.evidence]
    if not found:
        return unanswered(KIND, "multi-gpu", q, "Not measured: no multi-GPU result in the store.",
                          "Run `benchsite run -w ddp-train -w fsdp-train -w pipeline-train "
                          "-w allreduce` on a machine with several GPUs.", question=q)
    return answered(KIND, "multi-gpu", q, found[0].answer, [r for f in found for r in f.evidence],
                    explanation="\n".join(f"- {f.answer}" for f in found[1:]), question=q)


def cost_energy(results: pd.DataFrame) -> Finding:
    q = "What does it cost, in energy and money?"
    table = analysis_energy_cost.energy_table(results)
    known = table.dropna(subset=["j_per_item", "usd_per_million"], how="all") if len(table) else table
    if known.empty:
        return unanswered(KIND, "cost", q, "Unavailable: no device in this store reported an "
                          "energy counter or a price.", "GPU energy needs NVML; CPU energy needs "
                          "RAPL; prices come from a cost table in `benchsite.toml`.", question=q)
    best = known.sort_values("j_per_item").groupby(["workload", "label"], sort=True).head(1)
    lines = [f"- {r.workload}: {analysis_energy_cost.describe(r)}" for _, r in best.iterrows()]
    missing = sorted(set(table["label"]) - set(known["label"]))
    if missing:
        lines.append(f"- Unavailable (no counter or price): {', '.join(missing)}.")
    return answered(KIND, "cost", q, "Per item, the cheapest device depends on the workload; "
                    "the figures below are the most frugal case of each device.",
                    best["row_id"], explanation="\n".join(lines), question=q)


def techniques(results: pd.DataFrame) -> Finding:
    q = "Which techniques help: mixed precision, pinned memory, checkpointing, compile?"
    effects = analysis_techniques.technique_effects(results)
    if not effects:
        return unanswered(KIND, "techniques", q, "Not measured: no workload was run with and "
                          "without a technique.", "Run `benchsite run --full`.", question=q)
    groups: dict[tuple, list] = {}
    for e in effects:
        groups.setdefault((e.technique, str(e.value), e.device), []).append(e)
    lines = [f"- {analysis_techniques.label(t, items[0].value)} on the {d}: "
             f"{analysis_techniques.summary(items)}." for (t, _, d), items in groups.items()]
    return answered(KIND, "techniques", q, "Each technique's effect depends on the device; "
                    "measured effects against the same case without it:",
                    [r for e in effects for r in e.evidence], explanation="\n".join(lines),
                    question=q)


def when_cpu(results: pd.DataFrame) -> Finding:
    q = "When should I use the CPU?"
    table = speedups_of(results)
    if table.empty:
        return unanswered(KIND, "when-cpu", q, "Not measured: no case was run on both a CPU and "
                          "a GPU, so this store cannot tell.", RUN_GPU, question=q)
    cpu_wins = table[table["high"] < 1]
    if cpu_wins.empty:
        return answered(KIND, "when-cpu", q, "In this store the GPU is never clearly slower: the "
                        "CPU wins no measured case.", rows_of(table), question=q)
    lines = [f"- {r.workload} ({case_text(r.params)}): the GPU is {faster(r.speedup)}"
             for r in cpu_wins.itertuples()]
    return answered(KIND, "when-cpu", q, f"For small work: the CPU is faster in {len(cpu_wins)} "
                    f"of {len(table)} measured cases, all listed below.", rows_of(cpu_wins),
                    explanation="\n".join(lines), question=q)


def trust(results: pd.DataFrame) -> Finding:
    q = "Can these numbers be trusted?"
    found = analysis_validity.validity_findings(results)
    if not found:
        return unanswered(KIND, "trust", q, "There are no successful results yet.",
                          "Run `benchsite run`.", question=q)
    overall = found[0]
    lines = [f"- {f.answer}" for f in found[1:]]
    return answered(KIND, "trust", q, overall.answer, overall.evidence,
                    explanation="\n".join(lines) or overall.explanation, question=q)


QUESTIONS: list[Callable[[pd.DataFrame], Finding]] = [
    training_speed, inference_speed, from_which_size, transfers, batch_size, memory_needed,
    cpu_cores, several_gpus, cost_energy, techniques, when_cpu, trust,
]
