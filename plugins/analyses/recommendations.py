"""Recommendations: which device to run each workload on, from the speedups and crossovers of
:class:`benchsite.tables.Tables`, each with its evidence and its limits ("Train this MLP on the
GPU from batch 16 up: 80× faster (CI 75–85×). Below batch 4 the CPU is as fast."). A suspect
pair or crossover never carries a recommendation.

Advice that follows from one analysis' own subject (which batch, which technique, how many
threads) is given by that analysis, as findings of kind ``recommendation``: the recommendations
page shows them all.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import (
    RUN_GPU,
    answered,
    case_text,
    crossover_case,
    faster,
    kind_of_workload,
    number_text,
    ratio,
    ratio_ci,
    speedups_of,
    unanswered,
    with_case,
)

if TYPE_CHECKING:
    from benchsite.tables import Tables

KIND = "recommendation"
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


def recommendation_findings(tables: Tables) -> list[Finding]:
    return device_choice(tables)


def device_choice(tables: Tables) -> list[Finding]:
    """Per workload and GPU: where to run it, from the crossover and the best usable speedup."""
    table = speedups_of(tables)
    if table.empty:
        return [
            unanswered(
                KIND,
                "measure-a-gpu",
                "Measure a GPU before choosing one",
                "This store holds no GPU result, so it cannot recommend a device.",
                RUN_GPU,
            )
        ]
    crossings = {
        (c.host, c.gpu_label, c.workload, crossover_case(c)): c
        for c in tables.crossovers.itertuples()
        if not c.include_transfer and not c.suspect
    }
    table = table[~table["include_transfer"]]
    out = []
    for (host, gpu, workload), group in table.groupby(["host", "gpu_label", "workload"]):
        best = group.loc[group["speedup"].idxmax()]
        case = case_text(best.params, skip=[str(best.axis), "include_transfer"])
        crossing = crossings.get((host, gpu, workload, case))
        out.append(_device_advice(group, best, crossing, workload in tables.byte_sized))
    return out


def _device_advice(
    group: pd.DataFrame, best: pd.Series, crossing: object, in_bytes: bool = False
) -> Finding:
    verb = VERB[kind_of_workload(str(best.workload))]
    skip = [str(best.axis), "include_transfer"]
    target = with_case(str(best.workload), case_text(best.params, skip=skip, in_bytes=in_bytes))
    gain = ratio_ci(best.speedup, best.low, best.high)
    evidence = list(group["cpu_row"]) + list(group["gpu_row"])
    outcome = getattr(crossing, "outcome", None)
    if best.high < 1 or outcome == "cpu-always":
        text = (
            f"Keep {target} on the CPU: the {best.gpu_label} is slower in every measured case "
            f"(at best {ratio(best.speedup)})."
        )
    elif outcome == "crosses":
        axis, below, above = crossing.axis, crossing.below, crossing.above  # type: ignore[attr-defined]
        size = functools.partial(number_text, in_bytes=in_bytes and axis == "size")
        text = (
            f"{verb} {target} on the {best.gpu_label} from {axis} {size(above[0])} up "
            f"(the smallest measured {axis} where it wins): up to {gain} faster. At {axis} "
            f"{size(below[0])} and below the CPU is as fast or faster (there the GPU is "
            f"{faster(below[1])})."
        )
    else:
        text = (
            f"{verb} {target} on the {best.gpu_label}: {gain} faster in the best case "
            f"({case_text(best.params, in_bytes=in_bytes)})" + _limit(group, in_bytes) + "."
        )
    return answered(
        KIND,
        f"device-{best.host}-{best.device}-{best.workload}",
        f"{best.workload}: which device",
        text,
        evidence,
        workload=str(best.workload),
        strength="strong",
    )  # its limits are said once, on the page


def _limit(group: pd.DataFrame, in_bytes: bool) -> str:
    worst = group.loc[group["speedup"].idxmin()]
    if len(group) == 1:
        return ""
    return f", {faster(worst.speedup)} in the worst ({case_text(worst.params, in_bytes=in_bytes)})"
