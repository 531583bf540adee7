"""The FAQ: the questions people ask about PyTorch on CPU vs GPU, answered with this store's
numbers. Each answer leads with one sentence, then the numbers and their uncertainty; where
the store cannot answer (no GPU measured, no energy counter), it says so and what to run.

Answers read the tables (speedups, crossovers, rows) and the findings of the other analyses,
never their code: the FAQ takes ``tables`` and ``findings`` (see :mod:`benchsite.site.analyse`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import (
    RUN_GPU,
    answered,
    by_host,
    case_text,
    crossover_case,
    declared_models,
    describe_crossover,
    faster,
    host_order,
    info_value,
    kind_of_workload,
    median_of,
    model_line,
    models_sentence,
    ratio,
    reasons_text,
    rows_of,
    short_answer,
    speedup_summary,
    speedups_of,
    technique_label,
    unanswered,
    with_case,
)

if TYPE_CHECKING:
    from benchsite.tables import Tables

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


def faq_findings(tables: Tables, findings: list[Finding]) -> list[Finding]:
    return [question(tables, findings) for question in QUESTIONS]


def reply(
    key: str,
    q: str,
    lead: str,
    bullets: list[str],
    evidence: list[str],
    more: str = "",
    **fields: Any,
) -> Finding:
    """An answer: ``lead``, at most eight distinct bullets, the rest behind "More"."""
    answer, explanation = short_answer(lead, bullets, more)
    return answered(KIND, key, q, answer, evidence, explanation=explanation, question=q, **fields)


def of_kind(findings: list[Finding], kind: str) -> list[Finding]:
    """The findings of ``kind`` that cite rows (not the "not measured" ones)."""
    return [f for f in findings if f.kind == kind and f.evidence]


def _speed(tables: Tables, kind: str, key: str, question: str) -> Finding:
    table = speedups_of(tables, kind)
    if table.empty:
        return unanswered(
            KIND,
            key,
            question,
            f"Not measured: no {kind} workload was run on both "
            "a CPU and a GPU of the same machine.",
            RUN_GPU,
            question=question,
        )
    sentence, lines = speedup_summary(table)
    models = model_answers(tables, kind)
    lead = f"For {kind} in this store, {sentence}."
    if not models.empty:
        lead += f" For a model like yours: {models_sentence(models)}."
    return reply(
        key,
        question,
        lead,
        [f"- {model_line(row)}." for row in models.itertuples()] + lines,
        rows_of(table),
        strength="strong",
    )


def model_answers(tables: Tables, kind: str) -> pd.DataFrame:
    """The one-screen answer of each model of ``kind`` (its default case at its realistic
    size) whose workload declared its unit: ResNet-50 in images/s, a decoder in tokens/s, a
    user's ``--model`` in what it said one item is."""
    answers = declared_models(tables.answers)
    return answers[answers["workload"].map(kind_of_workload) == kind]


def training_speed(tables: Tables, findings: list[Finding]) -> Finding:
    return _speed(
        tables,
        "training",
        "training-speed",
        "How much faster is training a model like mine on a GPU than on a CPU?",
    )


def inference_speed(tables: Tables, findings: list[Finding]) -> Finding:
    return _speed(
        tables,
        "inference",
        "inference-speed",
        "How much faster is inference of a model like mine on a GPU than on a CPU?",
    )


def _crossings(tables: Tables, copies: bool | None = False) -> list[Any]:
    """The usable crossovers (never a suspect one), without copies by default."""
    table = tables.crossovers
    return [
        c
        for c in table.itertuples()
        if not c.suspect and (copies is None or c.include_transfer == copies)
    ]


def from_which_size(tables: Tables, findings: list[Finding]) -> Finding:
    q = "From which model or batch size on does the GPU pay off?"
    items = _crossings(tables)
    if not items:
        return unanswered(
            KIND,
            "crossover",
            q,
            "Not measured: no size- or batch-swept workload was run on both a CPU and a GPU.",
            RUN_GPU,
            question=q,
        )
    by_outcome = {
        o: [c for c in items if c.outcome == o] for o in ("crosses", "gpu-always", "cpu-always")
    }
    sized = tables.byte_sized
    bullets = [describe_crossover(c, c.workload in sized) for c in by_outcome["crosses"]]
    if by_outcome["gpu-always"]:
        bullets.append(
            "The GPU wins at every measured size, from the smallest, for "
            + ", ".join(_named(c, axis=False) for c in by_outcome["gpu-always"])
            + "."
        )
    if by_outcome["cpu-always"]:
        bullets.append(
            "The CPU wins at every measured size for "
            + ", ".join(_named(c, axis=False) for c in by_outcome["cpu-always"])
            + "."
        )
    devices = ", ".join(sorted({c.gpu_label for c in items}))
    lead = (
        "It depends on the work: small cases stay on the CPU, larger ones go to the GPU "
        if by_outcome["crosses"]
        else "On the measured sizes there is no crossover "
    )
    lead += f"(GPU: {devices}; copies not timed)."
    return reply(
        "crossover",
        q,
        lead,
        bullets,
        [r for c in items for r in c.evidence],
        "Each size named is a measured one: the GPU wins there and at every larger "
        "measured size." + _suspect_crossings(tables),
    )


def _suspect_crossings(tables: Tables) -> str:
    """Lines for the crossovers left out because they rest on a suspect pair."""
    return "".join(
        f"\n- Left out, {reasons_text(c.reasons)}: {describe_crossover(c)}"
        for c in tables.crossovers.itertuples()
        if c.suspect and not c.include_transfer
    )


def _named(c: Any, axis: bool = True) -> str:
    """``matmul (bf16) size`` — a crossover's case (and axis) in few words."""
    named = with_case(c.workload, crossover_case(c))
    return f"{named} {c.axis}" if axis else named


def transfers(tables: Tables, findings: list[Finding]) -> Finding:
    q = "Do host↔device copies eat the GPU's gain?"
    pinned = [f for f in of_kind(findings, "technique") if f.numbers.get("technique") == "pinned"]
    pairs = _with_and_without(_crossings(tables, copies=None))
    if not pairs and not pinned:
        return unanswered(
            KIND,
            "transfers",
            q,
            "Not measured: no GPU case was timed both with "
            "and without copies, and no transfer case was run.",
            RUN_GPU,
            question=q,
        )
    lines, evidence = [], []
    for without, with_copies in pairs:
        sized = without.workload in tables.byte_sized
        lines.append(
            f"{describe_crossover(without, sized)} {describe_crossover(with_copies, sized)}"
        )
        evidence += [*without.evidence, *with_copies.evidence]
    lines += [first_sentence(f.answer) for f in pinned]
    evidence += [r for f in pinned for r in f.evidence]
    lead = (
        "Yes, at small sizes: counting the copies moves the point where the GPU wins to "
        "larger sizes."
        if pairs
        else "Copies matter; pinned memory changes their speed."
    )
    return reply("transfers", q, lead, lines, evidence)


def first_sentence(text: str) -> str:
    """The first paragraph of a finding's answer (its lead, without its table or bullets)."""
    return text.split("\n")[0].strip()


def _with_and_without(items: list) -> list[tuple]:
    by_key = {
        (c.host, c.gpu_label, c.workload, crossover_case(c), c.include_transfer): c for c in items
    }
    return [
        (c, by_key[(*k[:4], True)])
        for k, c in by_key.items()
        if not k[4] and (*k[:4], True) in by_key
    ]


def _lines(found: list[Finding]) -> list[str]:
    return [first_sentence(f.answer) for f in found]


def _evidence(found: list[Finding]) -> list[str]:
    return [r for f in found for r in f.evidence]


def batch_size(tables: Tables, findings: list[Finding]) -> Finding:
    q = "Which batch size should I use?"
    found = of_kind(findings, "batch-scaling")
    if not found:
        return unanswered(
            KIND,
            "batch-size",
            q,
            "Not measured: no batch-swept workload has results.",
            "Run `benchsite run -w mlp-train -w cnn-train`.",
            question=q,
        )
    found = by_host(found, host_order(tables))
    return reply(
        "batch-size",
        q,
        "Use the batch where throughput stops growing: beyond it a "
        "bigger batch buys little speed and costs memory.",
        _lines(found),
        _evidence(found),
    )


def memory_needed(tables: Tables, findings: list[Finding]) -> Finding:
    q = "How much memory do I need, and is GPU memory the limit?"
    found = of_kind(findings, "memory")
    if not found:
        return unanswered(
            KIND,
            "memory",
            q,
            "Not measured: no result carries memory metrics.",
            "Run `benchsite run -w max-batch -w mlp-train` with the memory collector enabled.",
            question=q,
        )
    found = by_host(found, host_order(tables))
    verdicts = [f.numbers["verdict"] for f in found if f.numbers.get("compared")]
    lead = verdicts[0] if verdicts else "Memory grows with the batch, per workload and device:"
    if not any("largest_models" in f.numbers for f in found):  # what was measured: the batch
        note = "Model size was not measured (`benchsite run -w max-model` measures it)."
        lead = f"{lead} {note}" if verdicts else f"{note} {lead}"
    return reply("memory", q, lead, _lines(found), _evidence(found))


def cpu_cores(tables: Tables, findings: list[Finding]) -> Finding:
    q = "Does my CPU use all its cores?"
    curves = [f for f in of_kind(findings, "cpu-threads") if "scales" in f.numbers]
    rows = tables.ok
    cpu = rows[rows["device_kind"] == "cpu"] if not rows.empty else rows
    if cpu.empty:
        return unanswered(
            KIND,
            "cpu-cores",
            q,
            "Not measured: no CPU result in the store.",
            "Run `benchsite run -w cpu-threads`.",
            question=q,
        )
    lines, evidence = _core_lines(cpu, host_order(tables))
    lead = lines[0][2:]
    lines += [first_sentence(f.answer) for f in by_host(curves, host_order(tables))]
    evidence += _evidence(curves)
    if not curves:
        lines.append("- Thread scaling was not measured: run `benchsite run -w cpu-threads`.")
    lead += threads_lead(curves)
    return reply("cpu-cores", q, lead, lines[1:], evidence)


def threads_lead(curves: list[Finding]) -> str:
    """`` But 2 of 6 measured ops stay below half of linear scaling (7.6× and 4.4× on 16
    threads)``: what the thread curves show, in words their speedups bear out."""
    flat = [f for f in curves if not f.numbers.get("scales")]
    if not flat:
        return ""
    still = [f for f in flat if f.numbers["speedup"] >= 1.5]
    none = [f for f in flat if f.numbers["speedup"] < 1.5]
    parts = []
    if still:
        gains = " and ".join(
            f"{ratio(f.numbers['speedup'])} on {f.numbers['threads']} threads" for f in still
        )
        parts.append(f"{len(still)} speed up but stay below half of linear scaling ({gains})")
    if none:
        parts.append(f"{len(none)} do not speed up with more threads")
    return f" Of {len(curves)} measured ops, " + "; ".join(parts) + "."


def _core_lines(cpu: pd.DataFrame, order: dict[str, int]) -> tuple[list[str], list[str]]:
    lines, evidence = [], []
    groups = sorted(
        cpu.groupby("host", observed=True, sort=True), key=lambda item: order.get(str(item[0]), 0)
    )
    for host, group in groups:
        row = group.iloc[-1]
        logical, usable = info_value(row, "logical_cpus"), info_value(row, "usable_cpus")
        flagged = group[group["row_id"].isin(_flagged(cpu, "cpu-not-all-cores"))]
        text = (
            f"- On {host}, the process may use {usable} of the {logical} logical CPUs"
            + (
                " (affinity or a cgroup quota limits it)"
                if usable and logical and usable < logical
                else ""
            )
            + f"; {len(group) - len(flagged)} of {len(group)} CPU cases used them all."
        )
        lines.append(text)
        evidence += [str(row.row_id), *flagged["row_id"]]
    return lines, evidence


def _flagged(rows: pd.DataFrame, code: str) -> set[str]:
    return set(rows["row_id"][rows["flags"].map(lambda f: code in f).to_numpy(bool)])


def several_gpus(tables: Tables, findings: list[Finding]) -> Finding:
    q = "What do several GPUs buy?"
    # what several devices buy per host (scaling, memory, all-reduce), not each case's curve
    found = [f for f in of_kind(findings, "multi-gpu") if "efficiency" not in f.numbers]
    if not found:
        return unanswered(
            KIND,
            "multi-gpu",
            q,
            "Not measured: no multi-GPU result in the store.",
            "Run `benchsite run -w ddp-train -w fsdp-train -w pipeline-train "
            "-w allreduce` on a machine with several GPUs.",
            question=q,
        )
    return reply(
        "multi-gpu",
        q,
        first_sentence(found[0].answer),
        _lines(found[1:]),
        [r for f in found for r in f.evidence],
    )


def cost_energy(tables: Tables, findings: list[Finding]) -> Finding:
    q = "What does it cost, in energy and money?"
    found = of_kind(findings, "energy-cost")
    if not found:
        return unanswered(
            KIND,
            "cost",
            q,
            "Unavailable: no device in this store reported an energy counter or a price.",
            "GPU energy needs NVML; CPU energy needs "
            "RAPL; prices come from a cost table in `benchsite.toml`.",
            question=q,
        )
    # the same case on both devices first: a device measured alone answers "which is cheaper"
    found = by_host(sorted(found, key=lambda f: not f.numbers.get("same_case")), host_order(tables))
    return reply("cost", q, cost_lead(found), _lines(found), _evidence(found))


def cost_lead(found: list[Finding]) -> str:
    """The cost answer's first sentence, from the findings' own comparisons: which device is
    cheaper per item in how many of the workloads compared on both, and energy likewise."""
    parts = []
    for key, what in (("cost_ratio", "costs less"), ("energy_ratio", "uses less energy")):
        ratios = [f.numbers[key] for f in found if f.numbers.get(key) is not None]
        if not ratios:
            continue
        gpu = sum(r > 1 for r in ratios)
        parts.append(
            f"the accelerator {what} in {gpu} of {len(ratios)} workloads compared "
            f"on both devices ({ratio(min(ratios))} to {ratio(max(ratios))} less)"
            if gpu == len(ratios)
            else f"the accelerator {what} in {gpu} of {len(ratios)} workloads "
            f"compared on both devices, the CPU in {len(ratios) - gpu}"
        )
    if not parts:
        return (
            "Not compared: no case has an energy or a cost figure on both a CPU and an "
            "accelerator; each line gives each device's own figures."
        )
    return "Per item, " + "; ".join(parts) + " (each line: the same case on each device)."


def techniques(tables: Tables, findings: list[Finding]) -> Finding:
    q = "Which techniques help: mixed precision, pinned memory, checkpointing, compile?"
    found = of_kind(findings, "technique")
    if not found:
        return unanswered(
            KIND,
            "techniques",
            q,
            "Not measured: no workload was run with and without a technique.",
            "Run `benchsite run --full`.",
            question=q,
        )
    lines = _technique_lines(found)
    if not lines:
        return reply(
            "techniques",
            q,
            "Not answered: every case measured with and without a "
            "technique is flagged (see each technique's finding).",
            [],
            _evidence(found),
        )
    return reply(
        "techniques",
        q,
        "Each technique's effect depends on the device; measured against the same case without it:",
        lines,
        _evidence(found),
    )


def _technique_lines(found: list[Finding]) -> list[str]:
    """One line per technique and device: the typical effect over its workloads (the findings'
    ``median_speedup``), not one line per workload; a finding whose every case is flagged
    (``suspect``) is left out, as suspect numbers are left out of every answer."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for f in found:
        if f.numbers.get("suspect"):
            continue
        key = (f.numbers["technique"], str(f.numbers["value"]), (f.scope["devices"] or [""])[0])
        groups.setdefault(key, []).append(f)
    lines = []
    for (technique, _, device), items in groups.items():
        gains = sorted(f.numbers["median_speedup"] for f in items)
        lines.append(
            f"- {technique_label(technique, items[0].numbers['value'])} on the "
            f"{device}: {effect_words(gains)}."
        )
    return lines


def effect_words(gains: list[float]) -> str:
    """``1.8× faster (median of 8 workloads; from 1.3× to 3.4×)``; of one or two workloads each
    (a median of two would hide one)."""
    if len(gains) == 1:
        return f"{faster(gains[0])} (1 workload)"
    if len(gains) == 2:
        return f"{faster(gains[0])} and {faster(gains[1])} (2 workloads)"
    return (
        f"{faster(median_of(gains))} (median of {len(gains)} workloads; from {ratio(gains[0])} "
        f"to {ratio(gains[-1])})"
    )


def when_cpu(tables: Tables, findings: list[Finding]) -> Finding:
    q = "When should I use the CPU?"
    table = speedups_of(tables)
    if table.empty:
        return unanswered(
            KIND,
            "when-cpu",
            q,
            "Not measured: no case was run on both a CPU and a GPU, so this store cannot tell.",
            RUN_GPU,
            question=q,
        )
    cpu_wins = table[table["high"] < 1]
    if cpu_wins.empty:
        return answered(
            KIND,
            "when-cpu",
            q,
            "In this store the GPU is never clearly slower: the CPU wins no measured case.",
            rows_of(table),
            question=q,
        )
    sized = tables.byte_sized
    lines = [
        f"{r.workload} ({case_text(r.params, in_bytes=r.workload in sized)}): the GPU is "
        f"{faster(r.speedup)}"
        for r in cpu_wins.sort_values("speedup").itertuples()
    ]
    return reply(
        "when-cpu",
        q,
        f"For small work: the CPU is faster in {len(cpu_wins)} of "
        f"{len(table)} measured cases, the clearest first.",
        lines,
        rows_of(cpu_wins),
    )


def trust(tables: Tables, findings: list[Finding]) -> Finding:
    q = "Can these numbers be trusted?"
    found = [f for f in findings if f.kind == "validity"]
    if not found:
        return unanswered(
            KIND,
            "trust",
            q,
            "There are no successful results yet.",
            "Run `benchsite run`.",
            question=q,
        )
    overall = found[0]
    return reply(
        "trust",
        q,
        first_sentence(overall.answer),
        _lines(found[1:]),
        overall.evidence,
        overall.explanation if len(found) == 1 else "",
    )


QUESTIONS: list[Callable[[Tables, list[Finding]], Finding]] = [
    training_speed,
    inference_speed,
    from_which_size,
    transfers,
    batch_size,
    memory_needed,
    cpu_cores,
    several_gpus,
    cost_energy,
    techniques,
    when_cpu,
    trust,
]
