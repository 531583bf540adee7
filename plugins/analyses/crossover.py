"""From which size on does the GPU pay? The crossover of each size- or batch-swept workload.

The crossovers are :attr:`benchsite.tables.Tables.crossovers`: for each series of cases that
differ only in the swept parameter, the smallest value from which the GPU is faster at every
larger measured value, interpolated on log-log axes between the two measured values around it.
Series timed with host↔device copies (``include_transfer``) get their own crossover, shown next
to the one without. A crossover that rests on a suspect pair says so, with the reasons.
"""

from __future__ import annotations

from typing import Any

from benchsite.plugins._shared.findings import (
    crossover_case,
    describe_crossover,
    finding,
    number_text,
    ratio,
    reasons_text,
    with_case,
)

from benchsite import Analysis, Finding, hookimpl
from benchsite.tables import Tables


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="crossover",
            description="The smallest size or batch at which the GPU wins, with and without copies.",
            analyze=crossover_findings,
        )
    ]


def crossover_findings(tables: Tables) -> list[Finding]:
    crossings = tables.crossovers
    if crossings.empty:
        return []
    grouped: dict[tuple[str, str, str, str], list[Any]] = {}
    for c in crossings.itertuples():
        case = crossover_case(c)
        grouped.setdefault((c.host, c.gpu_label, c.workload, case), []).append(c)
    return [_finding(sorted(items, key=lambda c: c.include_transfer), key[3])
            for key, items in grouped.items()]


def _finding(items: list[Any], case: str) -> Finding:
    head = items[0]
    answer = " ".join(describe_crossover(c) for c in items)
    suspect = [c for c in items if c.suspect]
    if suspect and len(suspect) == len(items):
        answer = f"Suspect ({reasons_text(_reasons(suspect))}): {answer}"
    explanation = "\n".join(f"- {_detail(c)}" for c in items) + (
        "\n- Speedups between measured values are interpolated on log-log axes; the "
        "crossover is an estimate between the two measured values named, not a measurement."
    )
    return finding(
        "crossover",
        [head.host, head.gpu_label, head.workload, case],
        f"{with_case(head.workload, case)}: where the GPU starts to win",
        answer,
        explanation=explanation,
        numbers={_key(c): c.crossover if c.outcome == "crosses" else c.outcome for c in items},
        evidence=[row for c in items for row in c.evidence],
        scope={
            "hosts": [head.host],
            "devices": [head.gpu_label, head.cpu_label],
            "workloads": [head.workload],
        },
        strength=_strength(items),
        workload=head.workload,
    )


def _strength(items: list[Any]) -> str:
    if all(c.suspect for c in items):
        return "weak"
    return "moderate" if any(c.outcome == "crosses" for c in items) else "strong"


def _reasons(items: list[Any]) -> list[str]:
    return list(dict.fromkeys(r for c in items for r in c.reasons))


def _key(c: Any) -> str:
    return "with_transfer" if c.include_transfer else "without_transfer"


def _detail(c: Any) -> str:
    copies = "with copies" if c.include_transfer else "without copies"
    flagged = f" Suspect: {reasons_text(c.reasons)}." if c.suspect else ""
    if c.outcome != "crosses":
        return (
            f"{copies}: measured from {c.axis} {number_text(c.first[0])} ({ratio(c.first[1])}) to "
            f"{number_text(c.last[0])} ({ratio(c.last[1])}).{flagged}"
        )
    return (
        f"{copies}: at {c.axis} {number_text(c.below[0])} the GPU is at {ratio(c.below[1])} (the CPU "
        f"wins), at {number_text(c.above[0])} at {ratio(c.above[1])}; the crossover ≈ "
        f"{number_text(c.crossover)} lies between them.{flagged}"
    )



