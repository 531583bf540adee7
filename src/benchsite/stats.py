"""Summary statistics of timing samples, and the distribution-free confidence interval of the
median that decides when to stop sampling.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Summary:
    """Statistics of per-call times in seconds."""

    n_samples: int
    median_s: float
    mean_s: float
    std_s: float
    min_s: float
    q1_s: float
    q3_s: float
    iqr_s: float
    ci_low_s: float
    ci_high_s: float
    rel_ci: float

    def as_row(self) -> dict[str, float | int]:
        return asdict(self)


def summarize(samples: Sequence[float]) -> Summary:
    """Summarise samples; ``rel_ci`` is the CI's half-width relative to the median."""
    if not samples:
        raise ValueError("no samples to summarise")
    ordered = sorted(samples)
    median = statistics.median(ordered)
    q1, q3 = quantile(ordered, 0.25), quantile(ordered, 0.75)
    low, high = median_ci(ordered)
    return Summary(
        n_samples=len(ordered),
        median_s=median,
        mean_s=statistics.fmean(ordered),
        std_s=statistics.stdev(ordered) if len(ordered) > 1 else 0.0,
        min_s=ordered[0],
        q1_s=q1,
        q3_s=q3,
        iqr_s=q3 - q1,
        ci_low_s=low,
        ci_high_s=high,
        rel_ci=(high - low) / 2 / median if median > 0 else math.inf,
    )


def quantile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of sorted values (numpy's default method)."""
    position = (len(ordered) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def median_ci(ordered: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Confidence interval of the median from order statistics (no distribution assumed).

    The number of samples below the true median is Binomial(n, 1/2); the interval is the pair of
    order statistics that covers at least ``confidence`` of that distribution. With fewer than
    six samples no such pair exists at 95%, and the range of the samples is returned.
    """
    n = len(ordered)
    lower, upper = median_ci_ranks(n, confidence)
    return ordered[lower], ordered[upper]


def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int]:
    """Zero-based ranks (lower, upper) of the median's confidence interval for ``n`` samples."""
    alpha = 1 - confidence
    if n > 400:  # normal approximation; exact sums get slow and agree to a rank
        half = Z95 * math.sqrt(n) / 2
        return max(0, math.floor(n / 2 - half)), min(n - 1, math.ceil(n / 2 + half))
    cumulative, lower = 0.0, 0
    for k in range(n + 1):
        cumulative += math.comb(n, k) / 2**n
        if cumulative > alpha / 2:
            lower = k
            break
    lower = max(0, lower - 1) if lower > 0 else 0
    upper = n - 1 - lower
    return lower, upper


def bootstrap_ratio_ci(
    numerator: Sequence[float],
    denominator: Sequence[float],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Ratio of medians with a percentile-bootstrap confidence interval: (ratio, low, high)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    num, den = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    ratio = float(np.median(num) / np.median(den))
    num_medians = np.median(rng.choice(num, (resamples, num.size)), axis=1)
    den_medians = np.median(rng.choice(den, (resamples, den.size)), axis=1)
    ratios = num_medians / den_medians
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return ratio, float(low), float(high)
