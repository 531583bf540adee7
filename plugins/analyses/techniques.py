"""What does each technique buy? Mixed precision, TF32, pinned memory, ``channels_last``,
gradient checkpointing, pruning and ``torch.compile``, each measured against its baseline.

A technique is a parameter of a workload; its effect is the ratio of the baseline's median
time to the technique's, between two rows of the same host, device, workload and every other
parameter (like with like), with its 95% interval: :meth:`benchsite.tables.Tables.effects`
(a suspect comparison is said to be suspect, with the reasons). Gradient checkpointing also reports the
memory it saves; ``torch.compile`` reports its compile time and the number of calls after which
the compile time is paid back: compile_s / (t_eager − t_compiled). Techniques that clearly pay
get a recommendation.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import (
    TECHNIQUES,
    answered,
    case_words,
    device_label,
    faster,
    finding,
    median_of,
    memory_change,
    memory_saved,
    metric_value,
    percent,
    ratio,
    ratio_ci,
    reasons_text,
    seconds_text,
    strength_of_ratio,
    technique_label,
    technique_table,
)
from benchsite.units import plural

if TYPE_CHECKING:
    from benchsite.tables import Tables

WORTH_IT = 1.2  # a technique is recommended when it makes the work at least this much faster


@dataclass(frozen=True)
class Effect:
    """One technique row against its baseline row: ``speedup`` > 1 means the technique is faster."""

    technique: str
    value: Any
    host: str
    device: str
    workload: str
    case: str
    speedup: float
    low: float
    high: float
    memory_saved: float | None  # share of the baseline's peak memory saved
    compile_s: float | None
    breakeven_calls: float | None
    evidence: tuple[str, str]
    reasons: tuple[str, ...] = ()  # why it is suspect (empty: it is not)


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="techniques",
            description="Measured effect of precision, pinned memory, channels_last, "
            "checkpointing, pruning and torch.compile against their baselines.",
            analyze=technique_findings,
        )
    ]


def technique_effects(tables: Tables) -> list[Effect]:
    """Every technique row against its baseline, in :data:`TECHNIQUES` order."""
    out = []
    for name in TECHNIQUES:
        out += [effect(name, item) for item in technique_table(tables, name).itertuples()]
    return out


def effect(name: str, item: Any) -> Effect:
    """The effect of technique ``name``: ``item`` is its row of the effects table."""
    compile_s = metric_value(item.m, "compile_s") if name == "compile" else None
    saved_time = item.baseline_median_s - item.median_s
    breakeven = compile_s / saved_time if compile_s and saved_time > 0 else None
    return Effect(
        technique=name,
        value=item.value,
        host=str(item.host),
        device=device_label(SimpleNamespace(device=item.device, device_model=item.device_model)),
        workload=str(item.workload),
        case=str(item.case),
        speedup=item.speedup,
        low=item.low,
        high=item.high,
        memory_saved=memory_saved(item),
        compile_s=compile_s,
        breakeven_calls=breakeven,
        evidence=(str(item.baseline_row), str(item.row_id)),
        reasons=tuple(item.reasons),
    )


def technique_findings(tables: Tables) -> list[Finding]:
    grouped: dict[tuple[str, str, str, str, str], list[Effect]] = {}
    for item in technique_effects(tables):
        key = (item.technique, str(item.value), item.host, item.device, item.workload)
        grouped.setdefault(key, []).append(item)
    found = [_finding(items, items[0].workload in tables.byte_sized) for items in grouped.values()]
    return found + [a for items in grouped.values() if (a := technique_advice(items))]


# techniques that change the numbers a model computes; pinned memory, channels_last, compile
# and checkpointing compute the same result (up to floating-point order), so carry no such limit
ACCURACY_LIMIT = {
    "precision": "Limit: lower precision can change the model's results; check its accuracy "
    "yourself (benchsite measures speed, not model quality).",
    "sparsity": "Limit: pruning removes weights and changes the model's results; check its "
    "accuracy yourself (benchsite measures speed, not model quality).",
}


def technique_advice(items: list[Effect]) -> Finding | None:
    """A recommendation where a technique clearly pays on a device (its usable cases' best
    interval above :data:`WORTH_IT`), or, for checkpointing, where it saves memory."""
    usable = [e for e in items if not e.reasons]
    if not usable:
        return None
    head, best = usable[0], max(usable, key=lambda e: e.low)
    memory = [e.memory_saved for e in usable if e.memory_saved is not None]
    evidence = [r for e in usable for r in e.evidence]
    if best.low >= WORTH_IT:
        name = technique_label(head.technique, best.value)
        return answered(
            "recommendation",
            f"technique-{head.technique}-{best.value}-{head.device}-{head.workload}",
            f"{head.workload}: use {name} on the {head.device}",
            f"Use {name} for {head.workload} on the {head.device}: {summary(usable)}.",
            evidence,
            workload=head.workload,
            explanation=ACCURACY_LIMIT.get(head.technique, ""),
        )
    if head.technique == "checkpointing" and memory and max(memory) > 0.1:
        return answered(
            "recommendation",
            f"technique-checkpointing-{head.device}-{head.workload}",
            f"{head.workload}: gradient checkpointing only when memory is short",
            f"Use gradient checkpointing for {head.workload} on the {head.device} only when the "
            f"batch does not fit: it saves {percent(max(memory))} of peak memory but makes the "
            f"step {summary(usable)}.",
            evidence,
            workload=head.workload,
        )
    return None


def summary(items: list[Effect]) -> str:
    """The effect over the cases, e.g. ``1.9× faster (median of 4 cases, 1.5×–2.3×)``; of two
    cases both (``1.5× and 1.8× slower``): a median of two would hide one of them."""
    speedups = sorted(e.speedup for e in items)
    if len(items) == 1:
        e = items[0]
        return f"{faster(e.speedup)} ({ratio_ci(e.speedup, e.low, e.high)} speed ratio)"
    if len(items) == 2:
        return f"{faster(speedups[0])} and {faster(speedups[1])} (2 cases)"
    return (
        f"{faster(median_of(speedups))} (median of {len(items)} cases; from "
        f"{ratio(speedups[0])} to {ratio(speedups[-1])})"
    )


def _finding(items: list[Effect], in_bytes: bool) -> Finding:
    """The effect of one technique on one workload and device, stated from its usable cases (of
    every case where all are flagged, and then said first, as the speedup finding does)."""
    head = items[0]
    name = technique_label(head.technique, head.value)
    suspect = [e for e in items if e.reasons]
    usable = [e for e in items if not e.reasons]
    ranked = usable or items
    answer = f"On the {head.device} ({head.host}), {name} makes {head.workload} {summary(ranked)}."
    extra = _extras(ranked)
    if extra:
        answer += " " + extra
    reasons = reasons_text(dict.fromkeys(r for e in suspect for r in e.reasons))
    if not usable:
        answer = f"Suspect: every case is {reasons}. {answer}"
    elif suspect:
        answer += f" Left out: {len(suspect)} of {plural(len(items), 'case')}, {reasons}."
    best = max(ranked, key=lambda e: e.speedup)
    return finding(
        "technique",
        [head.technique, head.value, head.host, head.device, head.workload],
        f"{head.workload}: {name} on the {head.device}",
        answer,
        explanation=_table(items, in_bytes),
        numbers={
            "technique": head.technique,
            "value": head.value,
            "median_speedup": median_of(e.speedup for e in ranked),
            "suspect": not usable,
            "best_speedup": best.speedup,
            "best_ci": [best.low, best.high],
            "memory_saved": _typical([e.memory_saved for e in ranked]),
            "compile_s": _typical([e.compile_s for e in ranked]),
            "breakeven_calls": _typical([e.breakeven_calls for e in ranked]),
        },
        evidence=[row for e in items for row in e.evidence],
        scope={"hosts": [head.host], "devices": [head.device], "workloads": [head.workload]},
        strength=strength_of_ratio(best.low, best.high, len(ranked)) if usable else "weak",
        workload=head.workload,
    )


def _typical(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return median_of(present) if present else None


def _extras(items: list[Effect]) -> str:
    saved = [e.memory_saved for e in items if e.memory_saved is not None]
    compile_s = _typical([e.compile_s for e in items])
    parts = []
    if len(saved) == 1:
        parts.append(f"Peak memory {memory_change(saved[0])}.")
    elif 1 < len(saved) <= 3:
        words = ", ".join(memory_change(v) for v in sorted(saved, reverse=True))
        parts.append(f"Peak memory, case by case: {words}.")
    elif saved:
        parts.append(
            f"Peak memory {memory_change(median_of(saved))} (median of {len(saved)} cases; "
            f"from {memory_change(max(saved))} to {memory_change(min(saved))})."
        )
    if compile_s is not None:
        breakeven = _typical([e.breakeven_calls for e in items])
        payback = (
            f"paid back after about {breakeven:,.0f} calls"
            if breakeven is not None
            else "never paid back, since the compiled step is not faster"
        )
        parts.append(f"Compiling takes {seconds_text(compile_s)}, {payback}.")
    return " ".join(parts)


def _table(items: list[Effect], in_bytes: bool) -> str:
    lines = ["| case | speed ratio (95% CI) | peak memory |", "|---|---|---|"]
    for e in items:
        memory = memory_change(e.memory_saved) if e.memory_saved is not None else "not measured"
        lines.append(
            f"| {case_words(e.case, in_bytes)} | {ratio_ci(e.speedup, e.low, e.high)} | {memory} |"
        )
    lines.append("")
    lines.append(
        "Speed ratio = baseline median time / technique median time (above 1× the technique "
        "is faster), between rows that differ only in this parameter."
    )
    return "\n".join(lines)
