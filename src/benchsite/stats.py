"""Summary statistics of timing samples, and the confidence interval of the median that decides
when to stop sampling.

Samples taken one after another are correlated (a host-bound GPU loop runs fast or slow for
seconds at a time), so an interval that assumes independent samples is too narrow. The
interval here (:func:`median_ci_correlated`) is the distribution-free order-statistic interval
(exact for independent samples), widened to a batch-medians interval, which holds for
correlated samples, where they are correlated. The moving-block resampling helpers
serve the stationarity test (:mod:`benchsite.measure.stationarity`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

Z95 = 1.959963984540054
BATCHES = 8
T975_7 = 2.364624251592785  # Student's t, 97.5% quantile, 7 degrees of freedom (BATCHES - 1)
MIN_BATCH_SAMPLES = 16  # fewer: the order-statistic interval alone


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
    low, high = median_ci_correlated(samples)
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


def median_ci_correlated(samples: Sequence[float]) -> tuple[float, float]:
    """95% confidence interval of the median of samples in time order, valid when they are
    autocorrelated: the order-statistic interval (:func:`median_ci`, exact for independent
    samples), widened where consecutive samples are correlated (:func:`correlated`) to the
    batch-medians interval if that is wider.

    Batch medians: the series is cut into :data:`BATCHES` consecutive batches; their medians are
    nearly independent when a batch is longer than the correlation, so the median's standard
    error is their standard deviation over √:data:`BATCHES`, and the interval is the median ±
    Student's t (7 degrees of freedom) times that. Below :data:`MIN_BATCH_SAMPLES` samples only
    the order-statistic interval is used. The interval never leaves the samples' range (a
    time's interval is never negative). Its coverage of the true median, measured by
    Monte-Carlo runs: docs/measurement-history.md ("Coverage of a round's interval")."""
    ordered = sorted(samples)
    low, high = median_ci(ordered)
    if len(samples) < MIN_BATCH_SAMPLES or not correlated(samples):
        return low, high
    size = len(samples) // BATCHES
    medians = [statistics.median(samples[b * size : (b + 1) * size]) for b in range(BATCHES)]
    half = T975_7 * statistics.stdev(medians) / math.sqrt(BATCHES)
    median = statistics.median(ordered)
    # a symmetric interval around a skewed series' median can reach below zero: no time is
    # outside the range of the samples the median is taken from
    return max(ordered[0], min(low, median - half)), min(ordered[-1], max(high, median + half))


def interval_coverage(n: int) -> float:
    """The coverage of the order-statistic interval :func:`median_ci` gives ``n`` samples: at
    least 95% from 6 samples on; under 6, the range of the samples, which brackets the median
    with probability ``1 - 2^(1-n)`` (75% for 3 samples, 0 for one)."""
    if n < 1:
        return 0.0
    lower = median_ci_ranks(n)[0]
    below = sum(math.comb(n, k) for k in range(lower + 1)) / 2**n
    return max(0.0, 1 - 2 * below) if n >= 2 else 0.0


def correlated(samples: Sequence[float]) -> bool:
    """Whether consecutive samples are positively correlated beyond chance: their lag-1 rank
    correlation exceeds ``2 / √n`` (about a 2.5% chance for independent samples)."""
    import numpy as np

    if len(samples) < 4:
        return False
    return _lag1_rank_correlation(np.asarray(samples, dtype=float)) > 2 / math.sqrt(len(samples))


def block_resample_positions(n: int, resamples: int, seed: int, length: int) -> Any:
    """Positions (resamples × n) of circular moving-block resamples of ``n`` samples: blocks of
    ``length`` consecutive positions from random starts, laid end to end."""
    import numpy as np

    length = max(1, min(length, n))
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, n, size=(resamples, -(-n // length)))
    positions = (starts[:, :, None] + np.arange(length)) % n
    return positions.reshape(resamples, -1)[:, :n]


def block_length(samples: Sequence[float] | Any) -> int:
    """Block length for a moving-block bootstrap: ``n^(1/3)`` scaled for the series' lag-1
    autocorrelation ρ as Politis and White's rule does for an AR(1) series
    (``(2ρ / (1 − ρ²))^(2/3)``), at most a third of the samples.

    ρ is estimated from the first differences, whose lag-1 rank correlation is ``−(1 − ρ)/2``
    for an AR(1) series: a level shift or a trend barely moves it (it would make ρ of the
    values themselves look close to 1), so a drifting series gets short blocks and the
    stationarity test keeps its power."""
    import numpy as np

    values = np.asarray(samples, dtype=float)
    n = values.size
    if n < 4:
        return 1
    rho = min(max(1 + 2 * _lag1_rank_correlation(np.diff(values)), 0.0), 0.95)
    scale = max(1.0, (2 * rho / (1 - rho * rho)) ** (2 / 3))
    return int(min(max(1, n // 3), max(1, math.ceil(2 * n ** (1 / 3) * scale))))


def _lag1_rank_correlation(values: Any) -> float:

    ranks = values.argsort(kind="stable").argsort().astype(float)
    centred = ranks - ranks.mean()
    spread = float((centred * centred).sum())
    return float((centred[1:] * centred[:-1]).sum() / spread) if spread > 0 else 0.0


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


def bootstrap_ratio_cis(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    chunk: int = 4096,
) -> list[tuple[float, float, float]]:
    """:func:`bootstrap_ratio_ci` of every (numerator, denominator) pair: the same numbers, for
    thousands of pairs at once, resampled together rather than one pair at a time.

    Every pair's resampling starts from ``seed``, so the positions a resample picks depend only
    on the sample counts: pairs of equal counts share them and are resampled together, ``chunk``
    pairs at a time (see :func:`resampled_medians`). Pairs with no sample or a non-finite one
    take the one-by-one path."""
    import numpy as np

    tail = (1 - confidence) / 2 * 100
    results: dict[int, tuple[float, float, float]] = {}
    for counts, members in _by_sample_counts(pairs).items():
        if counts is None:
            for i in members:
                results[i] = bootstrap_ratio_ci(
                    *pairs[i], resamples=resamples, confidence=confidence, seed=seed
                )
            continue
        rng = np.random.default_rng(seed)  # the draws bootstrap_ratio_ci makes, in its order
        picks = (
            rng.choice(counts[0], (resamples, counts[0])),
            rng.choice(counts[1], (resamples, counts[1])),
        )
        for start in range(0, len(members), chunk):
            part = members[start : start + chunk]
            found = _ratio_cis([pairs[i] for i in part], picks, tail)
            results.update(zip(part, found, strict=True))
    return [results[i] for i in range(len(pairs))]


def _by_sample_counts(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
) -> dict[tuple[int, int] | None, list[int]]:
    """Pair indices by (numerator, denominator) sample counts; ``None``: empty or not finite."""
    import numpy as np

    groups: dict[tuple[int, int] | None, list[int]] = {}
    for index, (numerator, denominator) in enumerate(pairs):
        usable = len(numerator) and len(denominator)
        usable = usable and bool(np.isfinite([*numerator, *denominator]).all())
        key = (len(numerator), len(denominator)) if usable else None
        groups.setdefault(key, []).append(index)
    return groups


def _ratio_cis(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]], picks: tuple[Any, Any], tail: float
) -> list[tuple[float, float, float]]:
    """(ratio, low, high) of pairs of equal sample counts, resampled at ``picks``."""
    import numpy as np

    num = np.asarray([numerator for numerator, _ in pairs], dtype=float)
    den = np.asarray([denominator for _, denominator in pairs], dtype=float)
    ratios = np.median(num, axis=1) / np.median(den, axis=1)
    resampled = resampled_medians(num, picks[0]) / resampled_medians(den, picks[1])
    low, high = np.percentile(resampled, [tail, 100 - tail], axis=1)
    return list(zip(ratios.tolist(), low.tolist(), high.tolist(), strict=True))


def resampled_medians(samples: Any, picks: Any) -> Any:
    """The median of every row of ``samples`` (m × n, finite) resampled at ``picks`` (r × n
    positions): an m × r array equal to ``np.median(samples[:, picks], axis=2)``.

    A resample's median is an order statistic of what it picked. Sorting each row once turns a
    pick into a rank, and which rank is the k-th smallest pick depends only on the row's order
    (which position holds the smallest value, ...), not on its values. Rows are grouped by
    order — at a few samples per row many rows share one — and each order is solved once by
    counting, per resample, the picks at or below each rank."""
    import numpy as np

    count = samples.shape[1]
    order = np.argsort(samples, axis=1, kind="stable")
    ordered = np.take_along_axis(samples, order, axis=1)
    orders, which = np.unique(order, axis=0, return_inverse=True)
    # how often each resample picked each position (np.add.at says the same, more slowly)
    flat = (np.arange(len(picks))[:, None] * count + picks).ravel()
    tally = np.bincount(flat, minlength=len(picks) * count).reshape(len(picks), count)
    tally = tally.astype(np.min_scalar_type(count))
    lower = np.take_along_axis(ordered, _kth_ranks(tally, orders, (count - 1) // 2)[which], 1)
    if count % 2:
        return lower
    upper = np.take_along_axis(ordered, _kth_ranks(tally, orders, count // 2)[which], 1)
    return (lower + upper) / 2


def _kth_ranks(tally: Any, orders: Any, k: int) -> Any:
    """For each order (u × n positions, smallest value first) and resample (``tally``: r × n,
    how often each position was picked): the rank of the k-th smallest pick (0-based), u × r.
    It is the number of ranks with at most k picks at or below them."""
    import numpy as np

    by_position = np.ascontiguousarray(tally.T)  # n × r: one long vector per position
    at_or_below = np.zeros((len(orders), len(tally)), dtype=tally.dtype)  # counts fit: ≤ n
    ranks = np.zeros_like(at_or_below)
    for rank in range(orders.shape[1]):
        at_or_below += by_position[orders[:, rank]]
        ranks += at_or_below <= k
    return ranks


HOST_BOUND_SHARE = 0.5  # the GPU's own time under this share of the host time: host-bound


def host_bound(median_s: float | None, device_median_s: float | None) -> bool:
    """Whether the host sets a GPU case's time: the device's own time per call (its calls
    queued back to back) is under :data:`HOST_BOUND_SHARE` of the host-measured time, so the
    host's launch rate, which moves from one process and machine to the next, is the number."""
    if median_s is None or device_median_s is None or not median_s > 0:
        return False
    return device_median_s < HOST_BOUND_SHARE * median_s


# -- rounds: one case measured in several processes ------------------------------------------------

T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)  # df 1..10
MEDIAN_SE = 1.2533  # the median of k normal values: standard error ~ 1.2533 sigma / sqrt(k)


def t975(df: int) -> float:
    """Student's t 97.5% quantile for ``df`` >= 1 degrees of freedom (1.96 + a small-sample
    correction beyond the table, within 0.5% of the exact value)."""
    if df <= len(T975):
        return T975[df - 1]
    return Z95 + 2.37 / df + 2.8 / df**2


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for X chi-squared with integer ``df`` >= 1 (closed forms: no SciPy needed)."""
    if x <= 0:
        return 1.0
    half = x / 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for j in range(1, df // 2):
            term *= half / j
            total += term
        return min(1.0, math.exp(-half) * total)
    total, term = math.erfc(math.sqrt(half)), math.sqrt(2 * x / math.pi) * math.exp(-half)
    for j in range(1, (df - 1) // 2 + 1):
        total += term
        term *= x / (2 * j + 1)
    return min(1.0, total)


@dataclass(frozen=True)
class RoundsSummary:
    """Several rounds of one case, combined: ``median_s`` is the median of the round medians,
    ``ci_low_s``/``ci_high_s`` the interval that includes the between-round variation,
    ``spread`` the largest round median over the smallest (1.0: all equal) and ``p_value`` the
    heterogeneity test's (null where a round has no within-round interval)."""

    medians_s: tuple[float, ...]
    median_s: float
    ci_low_s: float
    ci_high_s: float
    spread: float | None
    p_value: float | None


def combine_rounds(
    medians: Sequence[float], intervals: Sequence[tuple[float, float]]
) -> RoundsSummary:
    """The median and 95% interval of a case measured in rounds (each in its own process),
    from each round's median and within-round interval; see ``docs/methodology.md``.

    The median is the median of the round medians. The interval is the wider, on each side, of
    (a) every round's own interval around the combined median, combined as for the median of
    independent rounds (``sqrt(sum h_i^2) / k`` times :data:`MEDIAN_SE`): what the interval
    would be were the processes alike; and (b) the random-effects interval of the round
    medians: ``median ± t(k-1) · MEDIAN_SE · s / sqrt(k)``, ``s`` their standard deviation,
    which includes the between-process variation. Never below 0. ``p_value`` is Cochran's Q
    test (on log times, each round weighted by its interval) that the rounds share one level."""
    k = len(medians)
    if k == 0:
        raise ValueError("no rounds to combine")
    median = statistics.median(medians)
    if k == 1:
        low, high = intervals[0]
        return RoundsSummary(tuple(medians), median, max(0.0, low), high, 1.0, None)
    lows = [m - low for m, (low, _) in zip(medians, intervals, strict=True)]
    highs = [high - m for m, (_, high) in zip(medians, intervals, strict=True)]
    within_low = MEDIAN_SE * math.sqrt(sum(h * h for h in lows)) / k
    within_high = MEDIAN_SE * math.sqrt(sum(h * h for h in highs)) / k
    between = t975(k - 1) * MEDIAN_SE * statistics.stdev(medians) / math.sqrt(k)
    low = max(0.0, median - max(within_low, between))
    high = median + max(within_high, between)
    spread = max(medians) / min(medians) if min(medians) > 0 else None
    return RoundsSummary(
        tuple(medians), median, low, high, spread, heterogeneity_p(medians, intervals)
    )


def heterogeneity_p(
    medians: Sequence[float], intervals: Sequence[tuple[float, float]]
) -> float | None:
    """Cochran's Q test that the rounds measured one level: on log times, each round's standard
    error its 95% interval's half-width / 1.96; ``None`` where a round has no interval width
    (one sample) or a time is not positive."""
    if min(medians) <= 0 or any(low <= 0 for low, _ in intervals):
        return None
    logs = [math.log(m) for m in medians]
    errors = [math.log(high / low) / 2 / Z95 for low, high in intervals]
    if min(errors) <= 0:
        return None
    weights = [1 / (e * e) for e in errors]
    centre = sum(w * x for w, x in zip(weights, logs, strict=True)) / sum(weights)
    q = sum(w * (x - centre) ** 2 for w, x in zip(weights, logs, strict=True))
    return chi2_sf(q, len(medians) - 1)
