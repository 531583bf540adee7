"""How much faster is the GPU than the CPU? One finding per host, GPU and workload.

Each case measured on both devices gives a speedup with its 95% interval, as
:attr:`benchsite.tables.Tables.speedups` defines them; the finding names the best and the worst
usable case (a suspect pair is listed as such, with its reasons, never as best or worst), and
always states the precision of both sides and whether the GPU time includes host↔device
copies, because a speedup without those two facts cannot be compared with anything.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.charts import ratio_chart
from benchsite.toolkit.findings import (
    case_text,
    faster,
    finding,
    not_measured,
    ratio,
    ratio_ci,
    seconds_text,
    strength_of_ratio,
    suspect_lines,
    transfer_text,
)

if TYPE_CHECKING:
    from benchsite.tables import Tables

NO_GPU_ADVICE = (
    "Run `benchsite run` on a machine with a CUDA GPU (or Apple MPS) into the same store, then "
    "rebuild the site: every workload is then measured on both the CPU and the GPU."
)


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="speedup",
            description="GPU over CPU per workload and case, ratio of medians with a 95% CI.",
            analyze=speedup_findings,
        )
    ]


def speedup_findings(tables: Tables) -> list[Finding]:
    table = tables.speedups
    if table.empty:
        return [no_gpu_finding(tables)]
    groups = table.groupby(["host", "device", "workload"], sort=True)
    return [
        workload_speedup(group, str(workload) in tables.byte_sized)
        for (_, _, workload), group in groups
    ]


def no_gpu_finding(tables: Tables) -> Finding:
    """Said plainly: the store holds no case measured on both a CPU and a GPU."""
    rows = tables.ok
    kinds = sorted(set(rows["device_kind"].astype(str))) if not rows.empty else []
    if not kinds:
        held = "The store holds no successful measurement yet."
    elif kinds == ["cpu"]:
        held = "Only the CPU was measured: no GPU was found on the machines that ran."
    else:
        held = "No case was measured on both a CPU and a GPU of the same host."
    return not_measured(
        "speedup",
        ["no-gpu"],
        "GPU vs CPU speedup: not measured",
        f"No GPU speedup can be given from this store. {held}",
        explanation=NO_GPU_ADVICE,
    )


def workload_speedup(group: pd.DataFrame, in_bytes: bool = False) -> Finding:
    """The speedup range of one workload on one GPU of one host: best and worst usable case
    (of every case where all are suspect, and then said so)."""
    first = group.iloc[0]
    usable = group[~group["suspect"]]
    ranked = usable if not usable.empty else group
    best, worst = ranked.loc[ranked["speedup"].idxmax()], ranked.loc[ranked["speedup"].idxmin()]
    words = functools.partial(case_text, in_bytes=in_bytes)
    answer = headline(first, best, worst, len(ranked), words)
    if usable.empty:
        answer = f"Suspect: every case is flagged (see below). {answer}"
    lines = [
        f"- Best case, {words(best.params)}: {ratio_ci(best.speedup, best.low, best.high)} "
        f"({seconds_text(best.cpu_median_s)} on the CPU vs {seconds_text(best.gpu_median_s)}).",
        f"- Worst case, {words(worst.params)}: {ratio_ci(worst.speedup, worst.low, worst.high)}.",
        f"- Precision: {_precisions(group)} on both devices; {_transfers(group)}.",
        *suspect_lines(group, in_bytes),
    ]
    return finding(
        "speedup",
        [first.host, first.device, first.workload],
        f"{first.workload}: {first.gpu_label} vs CPU",
        answer,
        explanation="\n".join(lines),
        numbers=_numbers(group, best, worst, words),
        evidence=list(group["cpu_row"]) + list(group["gpu_row"]),
        scope={
            "hosts": [first.host],
            "devices": [first.gpu_label, first.cpu_label],
            "workloads": [first.workload],
        },
        strength=strength_of_ratio(best.low, best.high, len(ranked))
        if not usable.empty
        else "weak",
        chart=_chart(group, in_bytes),
        workload=first.workload,
    )


def headline(
    first: pd.Series,
    best: pd.Series,
    worst: pd.Series,
    cases: int,
    words: Callable[..., str] = case_text,
) -> str:
    """One sentence: how much faster, on which devices, best and worst case."""
    where = f"On {first.host}, {first.workload} runs"
    devices = f"on the {first.gpu_label} than on the {first.cpu_label}"
    if cases == 1:
        return f"{where} {faster(best.speedup)} {devices}."
    if worst.speedup >= 1:
        return (
            f"{where} {ratio(worst.speedup)} to {ratio(best.speedup)} faster {devices} "
            f"({cases} cases; best: {words(best.params)})."
        )
    if best.speedup < 1:
        return (
            f"{where} slower {devices} in all {cases} cases "
            f"({ratio(1 / best.speedup)} to {faster(worst.speedup)})."
        )
    return (
        f"{where} up to {faster(best.speedup)} {devices} ({words(best.params)}), but in its "
        f"worst case ({words(worst.params)}) the GPU is {faster(worst.speedup)}."
    )


def _precisions(group: pd.DataFrame) -> str:
    return ", ".join(sorted(set(group["precision"])))


def _transfers(group: pd.DataFrame) -> str:
    values = set(group["include_transfer"])
    if values == {True, False}:
        return "cases with and without host↔device copies in the GPU time are listed separately"
    return transfer_text({"include_transfer": values == {True}})


def _numbers(
    group: pd.DataFrame, best: pd.Series, worst: pd.Series, words: Callable[..., str]
) -> dict[str, object]:
    return {
        "suspect": {
            row: list(reasons)
            for row, reasons, flagged in zip(
                group["gpu_row"], group["reasons"], group["suspect"], strict=True
            )
            if flagged
        },
        "best_speedup": best.speedup,
        "best_ci": [best.low, best.high],
        "best_case": words(best.params),
        "worst_speedup": worst.speedup,
        "worst_ci": [worst.low, worst.high],
        "worst_case": words(worst.params),
        "cases": len(group),
        "precisions": sorted(set(group["precision"])),
        "include_transfer": sorted(bool(v) for v in set(group["include_transfer"])),
    }


def _chart(group: pd.DataFrame, in_bytes: bool = False) -> object:
    if group["axis_value"].isna().any():
        return None
    data = pd.DataFrame(
        {
            "x": group["axis_value"],
            "value": group["speedup"],
            "low": group["low"],
            "high": group["high"],
            "case": [
                case_text(p, skip=[str(a)])
                for p, a in zip(group["params"], group["axis"], strict=True)
            ],
        }
    )
    axis = str(group["axis"].iloc[0])
    chart = ratio_chart(
        data.rename(columns={"x": axis}), axis, "GPU speedup over CPU", "case", in_bytes
    )
    return chart
