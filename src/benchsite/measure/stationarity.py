"""Did a case's level move while it was measured? A test of its samples, in time order.

The test compares the start of the series with its end, both ways round, on the logarithm of
the per-call times:

    late_vs_early = median(last half) - median(first fifth)
    end_vs_start  = median(last fifth) - median(first half)

so a level shift early or late, or a trend, makes one of them large. How large they get by chance
depends on how correlated the samples are, so each difference is divided by its standard error
from the data: the root sum of squares of the two segments' median errors, each the spread of a
circular moving-block bootstrap of the segment (:data:`RESAMPLES` resamples,
:func:`benchsite.stats.block_resample_positions`: blocks keep the short-range correlation) and at
least what independent samples of the series' noise would give. The larger ``|z|`` gives a
two-sided normal p-value, doubled for the two comparisons.

A series drifts when ``p < ALPHA`` **and** the level moved by at least :data:`EFFECT_FLOOR`
(5%): on many samples a real but tiny move is significant and does not matter. It also
drifts, whatever the p-value, when its stored ``shift`` (below) is 10% (:data:`SHIFT_LIMIT`) or
more either way: correlated samples can wander that far without the move being significant,
and a median whose own measurement moved by a tenth is not one number, whether the cause was a
drift or noise too heavy for the samples taken.
Series of fewer than :data:`MIN_SAMPLES` samples get no p-value; from 5 samples (where
``shift`` is defined) the shift rule applies.

``shift`` (stored per row, and what ``benchmarks/stability.py`` counts): the median of the last
half of the samples over the median of their first fifth.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from benchsite.stats import Summary, block_length, block_resample_positions

ALPHA = 0.01
EFFECT_FLOOR = 0.05
SHIFT_LIMIT = 0.10
MIN_SAMPLES = 10
RESAMPLES = 500


@dataclass(frozen=True)
class Drift:
    """What the test found: ``shift`` (late/early median ratio), its p-value and the verdict
    (``stationary`` is ``None`` when there were too few samples to test)."""

    shift: float | None
    p_value: float | None
    stationary: bool | None


def early_late_shift(samples: Sequence[float]) -> float | None:
    """Median of the last half over the median of the first fifth (``None``: under 5 samples)."""
    if len(samples) < 5:
        return None
    fifth, half = len(samples) // 5, len(samples) // 2
    early = statistics.median(samples[:fifth])
    return statistics.median(samples[half:]) / early if early > 0 else None


def detect_drift(samples: Sequence[float], seed: int = 0) -> Drift:
    """Test ``samples`` (in the order they were taken) for a level shift or trend."""
    shift = early_late_shift(samples)
    if shift is None or min(samples) <= 0:
        return Drift(shift, None, None)
    moved_a_tenth = abs(shift - 1) >= SHIFT_LIMIT
    if len(samples) < MIN_SAMPLES:
        return Drift(shift, None, not moved_a_tenth)
    import numpy as np

    logs = np.log(np.asarray(samples, dtype=float))
    length = block_length(logs)
    noise = _noise_scale(logs)
    n, fifth, half = logs.size, max(3, logs.size // 5), logs.size // 2
    pairs = ((logs[:fifth], logs[n - half :]), (logs[:half], logs[n - fifth :]))
    worst_z, moved = 0.0, 0.0
    for early, late in pairs:
        difference = float(np.median(late) - np.median(early))
        spread = math.hypot(
            _median_se(early, length, seed, noise), _median_se(late, length, seed + 1, noise)
        )
        worst_z = max(worst_z, abs(difference) / spread if spread > 0 else math.inf)
        moved = max(moved, abs(math.expm1(difference)))
    p_value = min(1.0, 2 * math.erfc(worst_z / math.sqrt(2)))  # two statistics: Bonferroni
    significant = p_value < ALPHA and moved >= EFFECT_FLOOR
    return Drift(shift, p_value, not (significant or moved_a_tenth))


def _median_se(segment: Any, length: int, seed: int, noise: float) -> float:
    """Standard error of a segment's median: the spread of its moving-block bootstrap, and at
    least what independent samples of the series' noise would give (``1.2533 σ / √m``; a
    bootstrap of a few samples underestimates it)."""
    import numpy as np

    positions = block_resample_positions(segment.size, RESAMPLES, seed, length)
    bootstrap = float(np.std(np.median(segment[positions], 1)))
    return max(bootstrap, 1.2533 * noise / math.sqrt(segment.size))


def _noise_scale(logs: Any) -> float:
    """Robust standard deviation of the samples' noise (log scale) from their first
    differences (MAD / √2), which a level shift or a trend barely moves."""
    import numpy as np

    differences = np.diff(logs)
    mad = float(np.median(np.abs(differences - np.median(differences))))
    return 1.4826 * mad / math.sqrt(2)


def honest_interval(summary: Summary, samples: Sequence[float], drift: Drift) -> Summary:
    """``summary`` with its interval widened, for a series that drifted, to cover both the
    early and the late level (first fifth, last half): the median of a moving series is not
    known better than where it moved."""
    if drift.stationary is not False:
        return summary
    fifth, half = max(1, len(samples) // 5), len(samples) // 2
    levels = (statistics.median(samples[:fifth]), statistics.median(samples[half:]))
    low, high = min(summary.ci_low_s, *levels), max(summary.ci_high_s, *levels)

    rel_ci = (high - low) / 2 / summary.median_s if summary.median_s > 0 else math.inf
    return replace(summary, ci_low_s=low, ci_high_s=high, rel_ci=rel_ci)
