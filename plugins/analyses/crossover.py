"""From which size on does the GPU pay? The crossover of each size- or batch-swept workload.

The crossovers are :attr:`benchsite.tables.Tables.crossovers`: for each series of cases that
differ only in the swept parameter, the smallest value from which the GPU is faster at every
larger measured value, interpolated on log-log axes between the two measured values around it.
Series timed with host↔device copies (``include_transfer``) get their own crossover, shown next
to the one without. A crossover that rests on a suspect pair says so, with the reasons.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import (
    crossover_case,
    describe_crossover,
    finding,
    number_text,
    ratio,
    reasons_text,
    with_case,
)

if TYPE_CHECKING:
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
        case = crossover_case(c, c.workload in tables.byte_sized)
        grouped.setdefault((c.host, c.gpu_label, c.workload, case), []).append(c)
    ok = tables.ok
    host_bound = set(ok["row_id"][[HOST_BOUND in flags for flags in ok["flags"]]].astype(str))
    return [
        _finding(
            sorted(items, key=lambda c: c.include_transfer),
            key[3],
            key[2] in tables.byte_sized,
            host_bound,
        )
        for key, items in grouped.items()
    ]


HOST_BOUND = "host-bound"  # the validity flag: the host's launch rate sets the GPU's time
HOST_BOUND_NOTE = (
    "Some GPU times here are host-bound: the host's launch rate sets them, and it moves from "
    "one process and one machine to the next. The crossover uses the host time, which a "
    "caller's loop pays, so it can move between runs of the same machine kind; the workload "
    "page shows the GPU's own time beside each such case."
)


def _finding(
    items: list[Any], case: str, in_bytes: bool, host_bound: set[str] = frozenset()
) -> Finding:
    head = items[0]
    answer = " ".join(describe_crossover(c, in_bytes) for c in items)
    suspect = [c for c in items if c.suspect]
    if suspect and len(suspect) == len(items):
        answer = f"Suspect ({reasons_text(_reasons(suspect))}): {answer}"
    explanation = "\n".join(f"- {_detail(c, in_bytes)}" for c in items)
    if host_bound & {str(row) for c in items for row in c.evidence}:
        explanation += f"\n\n{HOST_BOUND_NOTE}"
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


def _detail(c: Any, in_bytes: bool) -> str:
    copies = "With copies" if c.include_transfer else "Without copies"
    flagged = f" Suspect: {reasons_text(c.reasons)}." if c.suspect else ""
    value = functools.partial(number_text, in_bytes=in_bytes and c.axis == "size")
    if c.outcome != "crosses":
        return (
            f"{copies}: measured from {c.axis} {value(c.first[0])} ({ratio(c.first[1])}) to "
            f"{value(c.last[0])} ({ratio(c.last[1])}).{flagged}"
        )
    return (
        f"{copies}: at {c.axis} {value(c.below[0])} the GPU runs at {ratio(c.below[1])} of the "
        f"CPU's speed, at {value(c.above[0])} at {ratio(c.above[1])}. Interpolated on log-log "
        f"axes, the two are equally fast near {value(round(c.crossover))}: an estimate between "
        f"the measured sizes, not a measurement.{flagged}"
    )
