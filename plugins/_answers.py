"""Building blocks shared by the FAQ, recommendations and claims: summaries of the speedup
table (:attr:`benchsite.tables.Tables.speedups`), and findings that either cite their rows or
say plainly that the store cannot answer (strength ``none``, no evidence, and what to run).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
from benchsite.plugins._findings import case_text, finding, not_measured, ratio, ratio_ci

from benchsite.tables import Tables

RUN_GPU = (
    "Run `benchsite run` on a machine with a CUDA GPU (or Apple MPS) into this store and "
    "rebuild the site."
)


def answered(kind: str, key: str, title: str, answer: str, evidence: Iterable[str],
             **fields: Any) -> Any:
    """A FAQ/recommendation/claim finding backed by rows (evidence must not be empty)."""
    evidence = list(evidence)
    assert evidence, f"{kind} {key} states a measured answer without evidence"
    return finding(kind, [key], title, answer, evidence=evidence, **fields)


def unanswered(kind: str, key: str, title: str, why: str, what_to_run: str,
               **fields: Any) -> Any:
    """A finding the store cannot back: says why and what to run; rendered "not measured"."""
    return not_measured(kind, [key], title, f"{why} {what_to_run}".strip(), **fields)


def speedups_of(tables: Tables, kind: str | None = None) -> pd.DataFrame:
    """The usable pairs of the speedup table (never a suspect one), optionally only
    ``training`` or ``inference`` workloads."""
    table = tables.speedups
    table = table[~table["suspect"].astype(bool)]
    if kind is None or table.empty:
        return table
    return table[table["workload"].map(kind_of_workload) == kind]


def kind_of_workload(name: str) -> str:
    """``training``, ``inference`` or ``other`` from the workload name's suffix."""
    if name.endswith("-train") or name.startswith("ddp-"):
        return "training"
    if name.endswith("-infer"):
        return "inference"
    return "other"


def speedup_summary(table: pd.DataFrame) -> tuple[str, list[str]]:
    """(one sentence, bullet lines) summarising speedups per GPU: range, median, best case."""
    sentences, lines = [], []
    for label, group in table.groupby("gpu_label", sort=True):
        best = group.loc[group["speedup"].idxmax()]
        worst = group.loc[group["speedup"].idxmin()]
        median = float(group["speedup"].median())
        sentences.append(
            f"the {label} is {ratio(worst.speedup)} to {ratio(best.speedup)} as fast as the "
            f"CPU (median {ratio(median)} over {len(group)} cases)"
        )
        lines.append(
            f"- {label}: best {best.workload} ({case_text(best.params)}) at "
            f"{ratio_ci(best.speedup, best.low, best.high)}; worst {worst.workload} "
            f"({case_text(worst.params)}) at {ratio_ci(worst.speedup, worst.low, worst.high)}."
        )
    lines.append(f"- Precisions compared: {', '.join(sorted(set(table['precision'])))} (the same "
                 "on both devices in each pair); " + transfers_sentence(table) + ".")
    return "; ".join(sentences), lines


def transfers_sentence(table: pd.DataFrame) -> str:
    values = set(table["include_transfer"])
    if values == {False}:
        return "GPU times exclude host↔device copies (data already on the GPU)"
    if values == {True}:
        return "GPU times include host↔device copies"
    return "cases with host↔device copies in the GPU time are counted separately"


def rows_of(table: pd.DataFrame) -> list[str]:
    """The CPU and GPU row ids of a speedup table."""
    return list(table["cpu_row"]) + list(table["gpu_row"])
