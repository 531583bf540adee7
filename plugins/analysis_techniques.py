"""What does each technique buy? Mixed precision, TF32, pinned memory, ``channels_last``,
gradient checkpointing, pruning and ``torch.compile``, each measured against its baseline.

A technique is a parameter of a workload; its effect is the ratio of the baseline's median
time to the technique's, between two rows of the same host, device, workload and every other
parameter (like with like), with a bootstrap 95% CI. Gradient checkpointing also reports the
memory it saves; ``torch.compile`` reports its compile time and the number of calls after which
the compile time is paid back: compile_s / (t_eager − t_compiled).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd
from benchsite.plugins._findings import (
    case_text,
    device_label,
    finding,
    keep,
    latest_ok,
    metric,
    per_frame,
    percent,
    ratio,
    ratio_ci,
    samples,
    seconds_text,
    strength_of_ratio,
    without,
)
from benchsite.plugins.analysis_memory import PEAK_METRIC

from benchsite import Analysis, Finding, hookimpl
from benchsite.stats import bootstrap_ratio_cis

# technique parameter → (baseline value, what the technique is called)
TECHNIQUES = {
    "precision": ("fp32", "lower precision"),
    "pinned": (False, "pinned (page-locked) host memory"),
    "channels_last": (False, "channels_last memory format"),
    "checkpointing": (False, "gradient checkpointing"),
    "sparsity": (0.0, "magnitude pruning"),
    "compile": (False, "torch.compile"),
}


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


def technique_effects(results: pd.DataFrame) -> list[Effect]:
    return per_frame("techniques", results, lambda: _effects(results))


# what an effect reads: itertuples costs per column, twice per technique
EFFECT_COLUMNS = ("host", "device", "device_kind", "device_model", "workload", "p", "m",
                  "median_s", "samples_s", "row_id")


def _effects(results: pd.DataFrame) -> list[Effect]:
    rows = latest_ok(results)[list(EFFECT_COLUMNS)]
    compared: list[tuple[str, Any, Any]] = []  # (technique, baseline row, row)
    for name, (baseline, _) in TECHNIQUES.items():
        if rows.empty:
            break
        with_param = keep(rows, "p", lambda p, name=name: name in p)
        bases = {_key(r, name): r for r in with_param.itertuples() if r.p[name] == baseline}
        for row in with_param.itertuples():
            base = bases.get(_key(row, name))
            if row.p[name] != baseline and base is not None:
                compared.append((name, base, row))
    cis = bootstrap_ratio_cis([(samples(base), samples(row)) for _, base, row in compared],
                              resamples=1000)
    return [effect(*item, ci) for item, ci in zip(compared, cis, strict=True)]


def _key(row: Any, name: str) -> tuple[str, str, str, str]:
    return (str(row.host), str(row.device), str(row.workload), without(row.p, name))


def effect(name: str, base: Any, row: Any, ci: tuple[float, float, float]) -> Effect:
    """The effect of technique ``name`` in ``row`` against ``base``; ``ci`` is the bootstrap
    (ratio, low, high) of their samples."""
    value, low, high = ci
    compile_s = metric(row, "compile_s") if name == "compile" else None
    saved_time = float(base.median_s) - float(row.median_s)
    breakeven = compile_s / saved_time if compile_s and saved_time > 0 else None
    return Effect(
        technique=name, value=row.p[name], host=str(row.host), device=device_label(row),
        workload=str(row.workload), case=without(row.p, name), speedup=value, low=low,
        high=high, memory_saved=_memory_saved(base, row), compile_s=compile_s,
        breakeven_calls=breakeven, evidence=(str(base.row_id), str(row.row_id)),
    )  # fmt: skip


def _memory_saved(base: Any, row: Any) -> float | None:
    key = PEAK_METRIC.get(str(row.device_kind), "")
    before, after = metric(base, key), metric(row, key)
    return 1 - after / before if before and after is not None else None


def technique_findings(results: pd.DataFrame) -> list[Finding]:
    grouped: dict[tuple[str, str, str, str, str], list[Effect]] = {}
    for item in technique_effects(results):
        key = (item.technique, str(item.value), item.host, item.device, item.workload)
        grouped.setdefault(key, []).append(item)
    return [_finding(items) for items in grouped.values()]


def label(technique: str, value: Any) -> str:
    """``bf16 instead of fp32``, ``torch.compile``."""
    baseline, name = TECHNIQUES[technique]
    if technique == "precision":
        return f"{value} instead of {baseline}"
    if technique == "sparsity":
        return f"{name} to {float(value) * 100:.0f}% sparsity"
    return name


def summary(items: list[Effect]) -> str:
    """The typical effect over the cases, e.g. ``1.9× faster (median of 4 cases, 1.5×–2.3×)``."""
    speedups = sorted(e.speedup for e in items)
    mid = speedups[len(speedups) // 2]
    direction = f"{ratio(mid)} faster" if mid >= 1 else f"{ratio(1 / mid)} slower"
    if len(items) == 1:
        e = items[0]
        return f"{direction} ({ratio_ci(e.speedup, e.low, e.high)} speed ratio)"
    return (
        f"{direction} (median of {len(items)} cases; from {ratio(speedups[0])} to "
        f"{ratio(speedups[-1])})"
    )


def _finding(items: list[Effect]) -> Finding:
    head = items[0]
    name = label(head.technique, head.value)
    answer = f"On the {head.device} ({head.host}), {name} makes {head.workload} {summary(items)}."
    extra = _extras(items)
    if extra:
        answer += " " + extra
    best = max(items, key=lambda e: e.speedup)
    return finding(
        "technique",
        [head.technique, head.value, head.host, head.device, head.workload],
        f"{head.workload}: {name} on the {head.device}",
        answer,
        explanation=_table(items),
        numbers={"technique": head.technique, "value": head.value,
                 "median_speedup": sorted(e.speedup for e in items)[len(items) // 2],
                 "best_speedup": best.speedup, "best_ci": [best.low, best.high],
                 "memory_saved": _typical([e.memory_saved for e in items]),
                 "compile_s": _typical([e.compile_s for e in items]),
                 "breakeven_calls": _typical([e.breakeven_calls for e in items])},
        evidence=[row for e in items for row in e.evidence],
        scope={"hosts": [head.host], "devices": [head.device], "workloads": [head.workload]},
        strength=strength_of_ratio(best.low, best.high, len(items)),
        workload=head.workload,
    )  # fmt: skip


def _typical(values: list[float | None]) -> float | None:
    present = sorted(v for v in values if v is not None)
    return present[len(present) // 2] if present else None


def _extras(items: list[Effect]) -> str:
    saved = _typical([e.memory_saved for e in items])
    compile_s = _typical([e.compile_s for e in items])
    parts = []
    if saved is not None:
        parts.append(f"It changes peak memory by {percent(-saved)} (typical case).")
    if compile_s is not None:
        breakeven = _typical([e.breakeven_calls for e in items])
        payback = (f"paid back after about {breakeven:,.0f} calls" if breakeven is not None
                   else "never paid back, since the compiled step is not faster")
        parts.append(f"Compiling takes {seconds_text(compile_s)}, {payback}.")
    return " ".join(parts)


def _table(items: list[Effect]) -> str:
    lines = ["| case | speed ratio (95% CI) | memory change |", "|---|---|---|"]
    for e in items:
        memory = percent(-e.memory_saved) if e.memory_saved is not None else "not measured"
        lines.append(f"| {case_words(e.case)} | {ratio_ci(e.speedup, e.low, e.high)} | {memory} |")
    lines.append("")
    lines.append(
        "Speed ratio = baseline median time / technique median time (above 1× the technique "
        "is faster), between rows that differ only in this parameter."
    )
    return "\n".join(lines)


def case_words(key: str) -> str:
    """A technique effect's ``case`` key (JSON of the other parameters) in words."""
    return case_text(json.loads(key)) or "default"
