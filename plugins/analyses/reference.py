"""What would a GPU buy me? The FAQ's answer from reference results, for a store without one.

With references beside the store (``benchsite build --reference``), this store's CPU against
a reference's accelerator on the same cases and parameters
(:attr:`benchsite.tables.Tables.cross_answers`), each number labelled with its reference, host,
date and benchsite version, the cases the reference lacks, and that the two devices sat in
different machines. With no reference and no accelerator in the store, the one command that
adds the shipped H200 results. A store that measured an accelerator itself and has no reference
gets no answer here (the FAQ's own speedup answers serve it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit import reference
from benchsite.toolkit.findings import answered, unanswered
from benchsite.units import plural, short_answer

if TYPE_CHECKING:  # the tables are loaded when a site is built, not with the plugins
    from benchsite.tables import Tables

KIND, KEY = "faq", "reference-gpu"
QUESTION = "What would a GPU buy me on this machine's work?"


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="reference",
            description="This store's CPU against a reference GPU on the same cases.",
            analyze=reference_findings,
        )
    ]


def reference_findings(tables: Tables) -> list[Finding]:
    if tables.references.empty:
        if reference.has_accelerator(tables):
            return []
        why = "This store measured no accelerator, and no reference results sit beside it."
        command = f"Run `{reference.ADD_REFERENCE}` to compare this CPU with an NVIDIA H200."
        return [unanswered(KIND, KEY, QUESTION, why, command, question=QUESTION)]
    lines = reference.lines_of(tables)
    labels = ", ".join(reference.labels(tables))
    if not lines:
        why = f"No case of this store's CPU was measured on an accelerator of {labels}."
        return [unanswered(KIND, KEY, QUESTION, why, "Run the reference's cases here.")]
    return [_answer(tables, lines, labels)]


def _answer(tables: Tables, lines: list[reference.ReferenceLine], labels: str) -> Finding:
    trusted = [one for one in lines if one.speedup != "–"]
    lead = (
        f"Measured on another machine (reference {labels}), on "
        f"{plural(len(lines), 'workload')} this CPU also ran: "
        + ("; ".join(f"{one.workload} {one.speedup}" for one in trusted) or "no trustworthy size")
        + "."
    )
    bullets = [f"{one.workload}: {one.text} ({one.interval}; {one.source})" for one in lines]
    lacking = reference.lacking_texts(tables.reference_lacks)
    more = reference.DIFFERENT_MACHINES
    if lacking:
        more += "\n\nCases the reference lacks:\n\n" + "\n".join(f"- {t}" for t in lacking)
    answer, explanation = short_answer(lead, bullets, more)
    return answered(
        KIND,
        KEY,
        QUESTION,
        answer,
        [one.cpu_row for one in lines],
        explanation=explanation,
        question=QUESTION,
        strength="moderate",
        numbers={"workloads": len(lines), "lacking": len(lacking)},
    )
