"""Recommendations: short, actionable advice that follows from the measurements, each with its
evidence and its limits ("Train this MLP on the GPU from batch 16 up: 80× faster (CI 75–85×).
Below batch 4 the CPU is as fast.").
"""

from __future__ import annotations

import pandas as pd
from benchsite.plugins import (
    analysis_batch_scaling,
    analysis_cpu_threads,
    analysis_crossover,
    analysis_techniques,
)
from benchsite.plugins._answers import RUN_GPU, answered, speedups_of, unanswered
from benchsite.plugins._findings import (
    case_text,
    faster,
    number_text,
    percent,
    ratio,
    ratio_ci,
    with_case,
)
from benchsite.plugins._speedups import kind_of_workload

from benchsite import Analysis, Finding, hookimpl

KIND = "recommendation"
WORTH_IT = 1.2  # a technique is recommended when it makes the work at least this much faster
VERB = {"training": "Train", "inference": "Run inference of", "other": "Run"}


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="recommendations",
            description="Actionable advice from the findings, each with its evidence and limits.",
            analyze=recommendation_findings,
        )
    ]


def recommendation_findings(results: pd.DataFrame) -> list[Finding]:
    found = device_choice(results) + batch_choice(results) + technique_choice(results)
    found += thread_choice(results)
    return found


def device_choice(results: pd.DataFrame) -> list[Finding]:
    """Per workload and GPU: where to run it, from the crossover and the best speedup."""
    table = speedups_of(results)
    if table.empty:
        return [unanswered(KIND, "measure-a-gpu", "Measure a GPU before choosing one",
                           "This store holds no GPU result, so it cannot recommend a device.",
                           RUN_GPU)]
    crossings = {(c.host, c.gpu_label, c.workload, c.case): c
                 for c in analysis_crossover.crossover_table(results) if not c.include_transfer}
    table = table[~table["include_transfer"]]
    out = []
    for (host, gpu, workload), group in table.groupby(["host", "gpu_label", "workload"]):
        best = group.loc[group["speedup"].idxmax()]
        case = case_text(best.params, skip=[str(best.axis), "include_transfer"])
        crossing = crossings.get((host, gpu, workload, case))
        out.append(_device_advice(group, best, crossing))
    return out


def _device_advice(group: pd.DataFrame, best: pd.Series, crossing: object) -> Finding:
    verb = VERB[kind_of_workload(str(best.workload))]
    skip = [str(best.axis), "include_transfer"]
    target = with_case(str(best.workload), case_text(best.params, skip=skip))
    gain = ratio_ci(best.speedup, best.low, best.high)
    evidence = list(group["cpu_row"]) + list(group["gpu_row"])
    outcome = getattr(crossing, "outcome", None)
    if best.high < 1 or outcome == "cpu-always":
        text = (f"Keep {target} on the CPU: the {best.gpu_label} is slower in every measured case "
                f"(at best {ratio(best.speedup)}).")
    elif outcome == "crosses":
        below = crossing.below  # type: ignore[attr-defined]
        text = (f"{verb} {target} on the {best.gpu_label} from {crossing.axis} "  # type: ignore[attr-defined]
                f"≈ {number_text(crossing.value)} up: up to {gain} faster. At {crossing.axis} "  # type: ignore[attr-defined]
                f"{number_text(below[0])} and below the CPU is as fast or faster (there the GPU is "
                f"{faster(below[1])}).")
    else:
        text = (f"{verb} {target} on the {best.gpu_label}: {gain} faster in the best case "
                f"({case_text(best.params)})" + _limit(group) + ".")
    return answered(KIND, f"device-{best.host}-{best.gpu_device}-{best.workload}",
                    f"{best.workload}: which device", text, evidence, workload=str(best.workload),
                    explanation="Limits: measured on the sizes listed in the speedup finding; "
                    "precision " + ", ".join(sorted(set(group["precision"]))) + " on both "
                    "devices; data already on the GPU (copies not timed).", strength="strong")


def _limit(group: pd.DataFrame) -> str:
    worst = group.loc[group["speedup"].idxmin()]
    if len(group) == 1:
        return ""
    return f", {faster(worst.speedup)} in the worst ({case_text(worst.params)})"


def batch_choice(results: pd.DataFrame) -> list[Finding]:
    """Per workload and device: the batch beyond which throughput stops growing."""
    out = []
    for s in analysis_batch_scaling.saturation_table(results):
        if s.batch is None:
            continue
        out.append(answered(
            KIND, f"batch-{s.host}-{s.device}-{s.workload}-{s.case}",
            f"{s.workload}: batch size on the {s.device}",
            f"On the {s.device}, use batch {s.batch:.0f} for {with_case(s.workload, s.case)}: "
            f"larger batches add less than {percent(analysis_batch_scaling.GROWTH)} throughput "
            "per step and only cost memory and latency.", s.evidence, workload=s.workload,
            explanation="Limit: only the measured batch sizes were tried; a batch between two "
            "measured ones may do as well.",
        ))  # fmt: skip
    return out


def technique_choice(results: pd.DataFrame) -> list[Finding]:
    """Techniques that clearly pay (CI above 1.2×) on a device, and their cost."""
    groups: dict[tuple, list] = {}
    for e in analysis_techniques.technique_effects(results):
        groups.setdefault((e.technique, str(e.value), e.device, e.workload), []).append(e)
    out = []
    for (technique, _, device, workload), items in groups.items():
        best = max(items, key=lambda e: e.low)
        memory = [e.memory_saved for e in items if e.memory_saved is not None]
        if best.low >= WORTH_IT:
            name = analysis_techniques.label(technique, best.value)
            out.append(answered(
                KIND, f"technique-{technique}-{best.value}-{device}-{workload}",
                f"{workload}: use {name} on the {device}",
                f"Use {name} for {workload} on the {device}: "
                f"{analysis_techniques.summary(items)}.", [r for e in items for r in e.evidence],
                workload=workload, explanation="Limit: check accuracy yourself; benchsite "
                "measures speed, not model quality.",
            ))  # fmt: skip
        elif technique == "checkpointing" and memory and max(memory) > 0.1:
            out.append(answered(
                KIND, f"technique-checkpointing-{device}-{workload}",
                f"{workload}: gradient checkpointing only when memory is short",
                f"Use gradient checkpointing for {workload} on the {device} only when the batch "
                f"does not fit: it saves {percent(max(memory))} of peak memory but makes the "
                f"step {analysis_techniques.summary(items)}.",
                [r for e in items for r in e.evidence], workload=workload,
            ))  # fmt: skip
    return out


def _threads(count: int) -> str:
    return "1 thread" if count == 1 else f"{count} threads"


def thread_choice(results: pd.DataFrame) -> list[Finding]:
    """Where the CPU does not scale with threads: say why and what to change."""
    out = []
    for curve in analysis_cpu_threads.thread_curves(results):
        if analysis_cpu_threads.scales(curve):
            continue
        top, best = curve.iloc[-1], curve.loc[curve["speedup"].idxmax()]
        reason = analysis_cpu_threads.why_not_scaling(top, best)
        out.append(answered(
            KIND, f"threads-{top.host}-{top.series}", f"CPU threads for {top.series}",
            f"Use about {_threads(int(best.threads_param))} for {top.series} on {top.host}: more "
            f"add nothing ({ratio(top.speedup)} at {int(top.threads_param)} threads). "
            f"Why: {reason}", curve["row_id"], workload=analysis_cpu_threads.WORKLOAD,
        ))  # fmt: skip
    return out
