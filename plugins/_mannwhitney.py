"""The Mann-Whitney U test (two-sided, normal approximation with tie and continuity
corrections): does one set of timing samples tend to be larger than another?

Timing samples are skewed and have outliers, so a rank test fits them better than a t-test.
With the sample counts benchsite keeps (tens to hundreds) the normal approximation is accurate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


def mann_whitney_u(first: Sequence[float], second: Sequence[float]) -> tuple[float, float]:
    """(U of ``first``, two-sided p-value); p = 1 when either side is empty or all are tied."""
    n1, n2 = len(first), len(second)
    if not n1 or not n2:
        return math.nan, 1.0
    midranks, tie_term = _midranks([*first, *second])
    u1 = sum(midranks[value] for value in first) - n1 * (n1 + 1) / 2
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
