"""The Mann-Whitney U test (two-sided, normal approximation with tie and continuity
corrections): does one set of timing samples tend to be larger than another?

Timing samples are skewed and have outliers, so a rank test fits them better than a t-test.
With the sample counts benchsite keeps (tens to hundreds) the normal approximation is accurate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def mann_whitney_u(first: Sequence[float], second: Sequence[float]) -> tuple[float, float]:
    """(U of ``first``, two-sided p-value); p = 1 when either side is empty or all are tied."""
    n1, n2 = len(first), len(second)
    if not n1 or not n2:
        return math.nan, 1.0
    ranks, tie_term = _ranks([*first, *second])
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    n = n1 + n2
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return u1, 1.0
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return u1, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _ranks(values: list[float]) -> tuple[list[float], float]:
    """Mid-ranks of ``values`` (ties share their average rank) and Σ(t³ − t) over tie groups."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    tie_term, start = 0.0, 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        ties = end - start + 1
        tie_term += ties**3 - ties
        start = end + 1
    return ranks, tie_term
