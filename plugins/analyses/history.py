"""Did anything change since last time? The newest run of each case against its earlier runs.

Only like is compared with like: the same host, device, case and device fingerprint (same
model, driver, PyTorch build...). The newest run's samples are compared with the pooled samples
of the earlier runs by a Mann-Whitney U test; a change is reported when it is both
statistically clear (p < 0.01) and large enough to matter (the median moved by at least 5%),
so a report run on a schedule lists what really changed, with its history.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
from benchsite.plugins._shared.charts import line_chart
from benchsite.plugins._shared.findings import (
    case_text,
    column_groups,
    device_label,
    finding,
    percent,
)

from benchsite import Analysis, Finding, hookimpl
from benchsite.tables import Tables

ALPHA = 0.01
MIN_EFFECT = 0.05
KEYS = ["host", "device", "case_key", "fingerprint"]


@dataclass(frozen=True)
class Change:
    """The newest run of one case against the earlier ones: ``change`` is the relative change
    of the median time (+ = slower); ``verdict`` regression, improvement or unchanged."""

    host: str
    device: str
    workload: str
    case: str
    change: float
    p_value: float
    verdict: str
    runs: int
    history: tuple[tuple[str, float], ...]  # (run id, median s), oldest first
    evidence: tuple[str, ...]


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="history",
            description="Newest run vs earlier runs per case: regressions and improvements.",
            analyze=history_findings,
        )
    ]


def changes(tables: Tables) -> list[Change]:
    return _changes(tables)


@dataclass(frozen=True)
class CaseRuns:
    """One case's rows across runs, oldest first, one list per column."""

    run_id: list[str]
    samples_s: list[Sequence[float]]
    median_s: list[float]
    row_id: list[str]
    host: list[str]
    device: list[str]
    device_model: list[str]
    workload: list[str]
    p: list[dict]

    def newest(self) -> SimpleNamespace:
        """The newest row, with attribute access like a row of ``itertuples``."""
        return SimpleNamespace(**{name: getattr(self, name)[-1] for name in CASE_COLUMNS})


CASE_COLUMNS = tuple(column.name for column in fields(CaseRuns))


def _changes(tables: Tables) -> list[Change]:
    """Every case measured in two runs or more: its newest run against the earlier ones (ok
    rows with samples, of every run)."""
    rows = tables.rows[tables.rows["ok"].to_numpy(bool)]
    rows = rows[rows["samples_s"].map(lambda s: s is not None and len(s) > 0).to_numpy(bool)]
    if rows.empty:
        return []
    # one sort and one grouping pass: stores fed on a schedule hold tens of thousands of cases
    rows = rows.sort_values([*KEYS, "timestamp"], kind="stable")
    runs = rows.groupby(KEYS, observed=True, sort=False)["run_id"].transform("nunique")
    rows = rows[(runs >= 2).to_numpy()]
    cases = [CaseRuns(**case) for case in column_groups(rows, KEYS, CASE_COLUMNS)]
    return [compare_runs(case, tested) for case, tested in zip(cases, _test_all(cases), strict=True)]


def compare_runs(group: CaseRuns, tested: tuple[float, float] | None = None) -> Change:
    """Compare the newest run in ``group`` (one case, oldest first) with the earlier ones;
    ``tested`` is (change, p-value) when :func:`_test_all` already worked it out."""
    run_ids = [str(run_id) for run_id in group.run_id]
    change, p_value = tested or _test(group)
    verdict = "unchanged"
    if p_value < ALPHA and abs(change) >= MIN_EFFECT:
        verdict = "regression" if change > 0 else "improvement"
    head = group.newest()
    return Change(
        host=str(head.host), device=device_label(head), workload=str(head.workload),
        case=case_text(head.p), change=change, p_value=p_value, verdict=verdict,
        runs=len(set(run_ids)),
        history=tuple(zip(run_ids, map(float, group.median_s), strict=True)),
        evidence=tuple(map(str, group.row_id)),
    )  # fmt: skip


def _test(group: CaseRuns) -> tuple[float, float]:
    """(relative change of the median, Mann-Whitney p-value): the newest run's samples against
    the pooled samples of the earlier runs."""
    newest_run = str(group.run_id[-1])
    new_samples, old_samples = [], []
    for run_id, values in zip(group.run_id, group.samples_s, strict=True):
        (new_samples if str(run_id) == newest_run else old_samples).extend(map(float, values))
    change = statistics.median(new_samples) / statistics.median(old_samples) - 1
    return change, mann_whitney_u(new_samples, old_samples)[1]


def _test_all(cases: list[CaseRuns]) -> list[tuple[float, float]]:
    """:func:`_test` of every case, the same numbers, with one sort of all their samples
    instead of one per case (thousands of cases). A non-finite sample, which a measurement
    never stores, sends every case the one-by-one way."""
    rows = [(index, str(run_id) == str(case.run_id[-1]), samples)
            for index, case in enumerate(cases)
            for run_id, samples in zip(case.run_id, case.samples_s, strict=True)]  # fmt: skip
    if not rows:
        return []
    sizes = [len(samples) for _, _, samples in rows]
    values = np.concatenate([samples for _, _, samples in rows]).astype(float, copy=False)
    if not np.isfinite(values).all():
        return [_test(case) for case in cases]
    case_of = np.repeat([index for index, _, _ in rows], sizes)
    newest = np.repeat([is_new for _, is_new, _ in rows], sizes)
    new_medians = _medians(values[newest], case_of[newest], len(cases))
    old_medians = _medians(values[~newest], case_of[~newest], len(cases))
    changes = (new_medians / old_medians - 1).tolist()
    tests = mann_whitney_u_many(values, case_of, newest)
    return [(change, p_value) for change, (_, p_value) in zip(changes, tests, strict=True)]


def _medians(values: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    """The median of each group's values (groups 0 to ``count`` − 1, none empty), as
    :func:`statistics.median` takes it: the middle value, or the mean of the middle two."""
    ordered = values[np.lexsort((values, groups))]
    sizes = np.bincount(groups, minlength=count)
    middle = np.cumsum(sizes) - sizes + sizes // 2
    return np.where(sizes % 2 == 1, ordered[middle], (ordered[middle - 1] + ordered[middle]) / 2)


def history_findings(tables: Tables) -> list[Finding]:
    found = changes(tables)
    if not found:
        return []
    findings = [_summary(found)]
    findings += [_change_finding(c) for c in found if c.verdict != "unchanged"]
    return findings


def _summary(found: list[Change]) -> Finding:
    worse = [c for c in found if c.verdict == "regression"]
    better = [c for c in found if c.verdict == "improvement"]
    answer = (
        f"Of {len(found)} cases measured in more than one run, the newest run is slower in "
        f"{len(worse)} and faster in {len(better)}; the rest are unchanged within noise."
    )
    return finding(
        "history",
        ["summary"],
        "What changed since the previous runs",
        answer,
        explanation=(
            f"A change counts when a Mann-Whitney U test on the samples gives p < {ALPHA} and "
            f"the median moved by at least {percent(MIN_EFFECT)}. Only runs with the same "
            "device fingerprint (model, driver, PyTorch build) are compared."
        ),
        numbers={"cases": len(found), "regressions": len(worse), "improvements": len(better)},
        evidence=[row for c in found for row in c.evidence[-1:]],
        strength="strong" if len(found) >= 5 else "moderate",
    )


def _change_finding(c: Change) -> Finding:
    slower = c.verdict == "regression"
    word = "slower" if slower else "faster"
    data = pd.DataFrame(
        [(i + 1, median * 1e3) for i, (_, median) in enumerate(c.history)],
        columns=["run", "median_ms"],
    )
    return finding(
        "history",
        [c.verdict, c.host, c.device, c.workload, c.case],
        f"{c.verdict.capitalize()}: {c.workload} ({c.case}) on the {c.device}",
        f"In the newest run on {c.host}, {c.workload} ({c.case}) on the {c.device} is "
        f"{percent(abs(c.change))} {word} than in the {c.runs - 1} earlier run(s) "
        f"(Mann-Whitney p = {c.p_value:.2g}).",
        explanation="Median per run, oldest first: "
        + ", ".join(f"{median * 1e3:.3g} ms" for _, median in c.history) + ".",
        numbers={"change": c.change, "p_value": c.p_value, "runs": c.runs},
        evidence=c.evidence,
        scope={"hosts": [c.host], "devices": [c.device], "workloads": [c.workload]},
        strength="strong" if c.p_value < ALPHA / 10 else "moderate",
        chart=line_chart(data, "run", "median_ms", "Median time per run", log_x=False),
        workload=c.workload,
    )


# -- the Mann-Whitney U test (two-sided, normal approximation with tie and continuity
# corrections): timing samples are skewed and have outliers, so a rank test fits them better
# than a t-test; with tens to hundreds of samples the normal approximation is accurate.


def mann_whitney_u(first: Sequence[float], second: Sequence[float]) -> tuple[float, float]:
    """(U of ``first``, two-sided p-value); p = 1 when either side is empty or all are tied."""
    n1, n2 = len(first), len(second)
    if not n1 or not n2:
        return math.nan, 1.0
    midranks, tie_term = _midranks([*first, *second])
    return _u_and_p(sum(midranks[value] for value in first), n1, n2, tie_term)


def mann_whitney_u_many(values: Any, groups: Any, first: Any) -> list[tuple[float, float]]:
    """:func:`mann_whitney_u` of many comparisons in one pass, the same numbers: ``values`` (an
    array of finite samples), ``groups`` (which comparison, 0 to k − 1, each sample belongs to;
    every one has samples on both sides) and ``first`` (whether a sample is in the first side).
    One sort of every sample instead of one per comparison: history compares thousands."""
    import numpy as np

    order = np.lexsort((values, groups))
    value, group, in_first = values[order], groups[order], first[order]
    starts = np.flatnonzero(np.r_[True, (group[1:] != group[:-1]) | (value[1:] != value[:-1])])
    ties = np.diff(np.r_[starts, len(value)])
    group_of_tie = group[starts]
    group_starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    below = starts - group_starts[group_of_tie]  # samples of the comparison below the tie
    midrank = np.repeat(below + (ties + 1) / 2, ties)  # exact: halves of small whole numbers
    k = int(group.max()) + 1
    rank_sums = np.bincount(group[in_first], weights=midrank[in_first], minlength=k)
    n1 = np.bincount(group[in_first], minlength=k)
    n2 = np.bincount(group, minlength=k) - n1
    tie_terms = np.bincount(group_of_tie, weights=ties**3 - ties, minlength=k)
    return [
        _u_and_p(float(rank_sum), int(a), int(b), float(tie_term))
        for rank_sum, a, b, tie_term in zip(rank_sums, n1, n2, tie_terms, strict=True)
    ]


def _u_and_p(rank_sum: float, n1: int, n2: int, tie_term: float) -> tuple[float, float]:
    """U of the first side from its rank sum, and the two-sided p-value."""
    u1 = rank_sum - n1 * (n1 + 1) / 2
    n = n1 + n2
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return u1, 1.0
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return u1, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _midranks(values: list[float]) -> tuple[dict[float, float], float]:
    """The mid-rank of each distinct value (tied values share their average rank, from 1) and
    Σ(t³ − t) over tie groups. One count and one sort: the history analysis runs this per case."""
    counts = Counter(values)
    midranks: dict[float, float] = {}
    tie_term, below = 0.0, 0
    for value in sorted(counts):
        ties = counts[value]
        midranks[value] = below + (ties + 1) / 2
        tie_term += ties**3 - ties
        below += ties
    return midranks, tie_term
