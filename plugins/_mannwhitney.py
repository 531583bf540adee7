"""The Mann-Whitney U test (two-sided, normal approximation with tie and continuity
corrections): does one set of timing samples tend to be larger than another?

Timing samples are skewed and have outliers, so a rank test fits them better than a t-test.
With the sample counts benchsite keeps (tens to hundreds) the normal approximation is accurate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any


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
