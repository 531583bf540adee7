"""Statistics of samples and the adaptive sampling loop."""

from __future__ import annotations

import math
import random
from typing import ClassVar

import pytest

from benchsite.measure.sampling import MeasureSettings, measure_case
from benchsite.records import Case, Device, Timer
from benchsite.stats import (
    bootstrap_ratio_ci,
    bootstrap_ratio_cis,
    median_ci_ranks,
    quantile,
    summarize,
)


@pytest.mark.parametrize(
    ("n", "ranks"),
    # exact binomial ranks (zero-based) of the 95% CI of the median, from published tables
    [(5, (0, 4)), (6, (0, 5)), (10, (1, 8)), (20, (5, 14)), (50, (17, 32)), (100, (39, 60))],
)
def test_median_ci_ranks_match_the_binomial_tables(n, ranks):
    assert median_ci_ranks(n) == ranks


def test_median_ci_covers_the_true_median_about_95_percent_of_the_time():
    rng = random.Random(1)
    covered = 0
    for _ in range(2000):
        stats = summarize([rng.expovariate(1.0) for _ in range(30)])
        covered += stats.ci_low_s <= math.log(2) <= stats.ci_high_s
    assert 0.93 < covered / 2000 < 0.985


def test_summary_statistics():
    stats = summarize([4.0, 1.0, 3.0, 2.0, 5.0])
    assert (stats.median_s, stats.min_s, stats.mean_s) == (3.0, 1.0, 3.0)
    assert (stats.q1_s, stats.q3_s, stats.iqr_s) == (2.0, 4.0, 2.0)
    assert quantile([1.0, 2.0], 0.5) == 1.5


def test_bootstrap_ratio_ci_brackets_the_ratio():
    rng = random.Random(2)
    slow = [10 + rng.gauss(0, 0.5) for _ in range(40)]
    fast = [2 + rng.gauss(0, 0.1) for _ in range(40)]
    ratio, low, high = bootstrap_ratio_ci(slow, fast)
    assert low < ratio < high and 4.5 < ratio < 5.5


def test_bootstrap_of_many_pairs_gives_exactly_the_one_by_one_numbers():
    rng = random.Random(3)
    counts = [(7, 7), (7, 7), (8, 6), (1, 5), (21, 40), (2, 2), (300, 3)] * 20

    def draw(n: int) -> list[float]:
        return [round(rng.lognormvariate(0, 0.3), rng.choice([1, 6])) for _ in range(n)]

    pairs = [(draw(a), draw(b)) for a, b in counts]
    pairs += [([1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 3.0]), ([1.0, math.nan, 2.0], [1.0, 2.0])]
    batched = bootstrap_ratio_cis(pairs, resamples=500, chunk=16)
    for (numerator, denominator), got in zip(pairs, batched, strict=True):
        want = bootstrap_ratio_ci(numerator, denominator, resamples=500)
        assert got == want or all(map(math.isnan, [*got, *want]))


class ScriptedTimer(Timer):
    """A timer whose blocks take a scripted time per call, so sampling is deterministic."""

    per_call: ClassVar[list[float]] = []
    calls = 0

    def start(self) -> None:
        self.begin = ScriptedTimer.calls

    def stop(self) -> None:
        self.count = ScriptedTimer.calls - self.begin

    def elapsed(self) -> float:
        return self.count * ScriptedTimer.per_call[min(ScriptedTimer.calls, len(self.per_call) - 1)]


def scripted_case() -> Case:
    def run() -> None:
        ScriptedTimer.calls += 1

    return Case(run=run)


def scripted_device() -> Device:
    return Device(name="cpu", kind="cpu", info={}, fingerprint="x", timer=ScriptedTimer)


def test_sampling_stops_once_the_median_is_known_within_the_target():
    ScriptedTimer.per_call, ScriptedTimer.calls = [0.001], 0
    settings = MeasureSettings(min_samples=7, warmup_s=0.0, budget_s=60, min_time_s=0.0)
    result = measure_case(scripted_case(), scripted_device(), settings)
    assert result.converged and len(result.samples_s) == 7
    assert result.calls_per_sample == 20  # 20 ms per sample at 1 ms per call
    assert result.summary.median_s == pytest.approx(0.001)


def test_sampling_goes_on_for_the_minimum_time_even_when_converged():
    ScriptedTimer.per_call, ScriptedTimer.calls = [0.001], 0
    settings = MeasureSettings(
        min_samples=7, warmup_s=0.0, budget_s=60, min_time_s=0.01, max_samples=10**6
    )
    result = measure_case(scripted_case(), scripted_device(), settings)
    assert result.converged and len(result.samples_s) > 7


def test_sampling_stops_at_the_budget_when_noise_never_settles():
    rng = random.Random(3)
    ScriptedTimer.per_call = [rng.uniform(0.001, 0.004) for _ in range(100_000)]
    ScriptedTimer.calls = 0
    settings = MeasureSettings(rel_ci=0.001, warmup_s=0.0, budget_s=0.05)
    result = measure_case(scripted_case(), scripted_device(), settings)
    assert not result.converged and len(result.samples_s) >= settings.min_samples_in_budget
    assert result.measure_s < 1.0
