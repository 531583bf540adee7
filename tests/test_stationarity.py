"""Samples that move while measured: the stationarity test, the interval that survives
correlation, re-sampling a drifting case, the device's own time, and the validity flags."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import pytest
from analysis_frames import frame, row

from benchsite.host.manager import load_plugins
from benchsite.measure.outcome import Outcome, Status
from benchsite.measure.sampling import MeasureSettings, measure_case
from benchsite.measure.stationarity import detect_drift, early_late_shift
from benchsite.records import Case, Device, Timer
from benchsite.site.analyse import prepare_results
from benchsite.stats import median_ci, median_ci_correlated


def ar1(rng: np.random.Generator, n: int, phi: float, sd: float = 0.03) -> np.ndarray:
    """A stationary AR(1) series of standard deviation ``sd`` around 0."""
    noise = rng.normal(0, sd * math.sqrt(1 - phi * phi), n)
    series = np.empty(n)
    series[0] = rng.normal(0, sd)
    for i in range(1, n):
        series[i] = phi * series[i - 1] + noise[i]
    return series


def fired(make, count: int = 25) -> int:
    """How many of ``count`` series from ``make(rng)`` the test calls drifting."""
    rng = np.random.default_rng(7)
    return sum(detect_drift(list(make(rng))).stationary is False for _ in range(count))


def test_the_flag_fires_on_a_level_shift_and_on_a_trend():
    steps = np.arange(200)
    assert fired(lambda rng: 1 + rng.normal(0, 0.03, 200) + 0.1 * (steps > 70)) >= 24
    assert fired(lambda rng: 1 + rng.normal(0, 0.03, 200) + 0.1 * steps / 200) >= 24
    assert fired(lambda rng: 1 + ar1(rng, 200, 0.7) + 0.1 * (steps > 70)) >= 24


def test_the_flag_stays_quiet_on_independent_and_ar1_samples_without_a_shift():
    assert fired(lambda rng: 1 + rng.normal(0, 0.03, 200)) == 0
    assert fired(lambda rng: np.exp(rng.normal(0, 0.2, 500))) <= 1  # heavy noise, many samples
    assert fired(lambda rng: 1 + ar1(rng, 200, 0.5)) <= 1
    assert fired(lambda rng: 1 + ar1(rng, 200, 0.7)) <= 1


def test_a_tiny_real_shift_on_many_samples_does_not_fire():
    steps = np.arange(400)
    assert fired(lambda rng: 1 + rng.normal(0, 0.002, 400) + 0.02 * (steps > 200)) == 0


def test_shift_is_the_late_over_early_median_ratio():
    assert early_late_shift([1.0] * 20 + [2.0] * 30) == 2.0
    assert detect_drift([1.0] * 4).stationary is None  # too few to tell early from late


def test_every_series_whose_median_moved_a_tenth_is_flagged_whatever_its_noise():
    rng = np.random.default_rng(3)
    for n in (5, 8, 12, 30, 100):
        for _ in range(40):
            samples = list(np.exp(rng.normal(0, 0.2, n)))  # heavy independent noise
            drift = detect_drift(samples)
            moved = abs(drift.shift - 1) >= 0.10
            assert drift.stationary is False if moved else n >= 10 or drift.stationary, drift
    assert detect_drift([1.3, 1.0, 1.0, 1.0, 1.0, 1.0]).stationary is False  # slow first sample
    assert detect_drift([1.0, 1.02, 0.99, 1.01, 1.0, 1.0]).p_value is None  # under 10: no p


def coverage(make, count: int = 150) -> tuple[float, float]:
    """Share of ``count`` series (true median 10) whose interval covers 10: the correlated
    interval, and the order-statistic one that assumes independence."""
    rng = np.random.default_rng(11)
    ours = plain = 0
    for _ in range(count):
        samples = list(10 + make(rng))
        low, high = median_ci_correlated(samples)
        ours += low <= 10 <= high
        low, high = median_ci(sorted(samples))
        plain += low <= 10 <= high
    return ours / count, plain / count


def test_the_interval_covers_the_true_median_at_its_rate_for_iid_and_ar1_samples():
    ours, _ = coverage(lambda rng: rng.normal(0, 1, 100))
    assert 0.90 <= ours <= 0.99
    ours, plain = coverage(lambda rng: ar1(rng, 200, 0.7, sd=1.0))
    assert 0.89 <= ours <= 0.99
    assert plain < 0.8  # the independent-samples interval is far too narrow here


class SteppedTimer(Timer):
    """Per-call time of each block from a script indexed by the block number; a block of
    the n-th pass reads ``script(pass, block)``."""

    script: ClassVar = staticmethod(lambda block: 1e-3)
    blocks = 0

    def start(self) -> None:
        self.calls_before = SteppedTimer.calls

    calls = 0

    def stop(self) -> None:
        self.count = SteppedTimer.calls - self.calls_before

    def elapsed(self) -> float:
        SteppedTimer.blocks += 1
        return self.count * SteppedTimer.script(SteppedTimer.blocks)


def stepped(script, hold=None) -> tuple[Case, Device]:
    SteppedTimer.script, SteppedTimer.blocks, SteppedTimer.calls = staticmethod(script), 0, 0

    def run() -> None:
        SteppedTimer.calls += 1

    device = Device(
        name="gpu", kind="cuda", info={}, fingerprint="x", timer=SteppedTimer, hold=hold
    )
    return Case(run=run), device


SETTINGS = MeasureSettings(
    min_samples=60,
    warmup_s=0.0,
    budget_s=60,
    min_time_s=0.0,
    min_sample_s=1e-3,
    max_samples=60,
    rel_ci=1e-9,
)


def test_a_case_that_drifted_is_sampled_again_and_kept_when_it_settles():
    # warm-up takes a few blocks; the first pass (60 blocks) doubles after its 30th sample
    case, device = stepped(lambda block: 1e-3 if block < 40 or block > 62 else 2e-3)
    result = measure_case(case, device, SETTINGS)
    assert result.passes == 2 and result.drift.stationary is True
    assert result.summary.median_s == pytest.approx(1e-3)
    assert len(result.samples_s) == 60 and result.blocks_timed == 120  # both passes were timed


def test_a_case_that_keeps_drifting_is_stored_unstable_with_an_interval_over_both_levels():
    case, device = stepped(lambda block: 1e-3 * (1 + (block % 60 > 35)))
    result = measure_case(case, device, SETTINGS)
    assert result.passes == 2 and result.drift.stationary is False
    assert result.drift.shift == pytest.approx(2.0)
    assert result.summary.ci_low_s <= 1e-3 and result.summary.ci_high_s >= 2e-3


def test_a_launch_bound_gpu_case_also_gets_its_queued_device_time():
    quick = MeasureSettings(warmup_s=0.0, min_time_s=0.0)
    result = measure_case(*stepped(lambda block: 20e-6, hold=lambda seconds: lambda: True), quick)
    assert result.device_samples_s == [pytest.approx(20e-6)] * 15
    slow = measure_case(*stepped(lambda block: 80e-6, hold=lambda seconds: lambda: True), quick)
    assert slow.device_samples_s is None  # not launch-bound: no second timing
    never = measure_case(*stepped(lambda block: 20e-6, hold=lambda seconds: lambda: False), quick)
    assert never.device_samples_s is None  # the calls never queued in time


def test_an_outcome_round_trips_through_json_with_its_status_a_plain_string():
    failed = Outcome(Status.OOM, "CUDA out of memory", notices=["note"], world_size=2)
    back = Outcome.from_json(failed.to_json())
    assert back == failed and back.columns()["status"] == "oom"
    assert Status.OK == "ok" and isinstance(back.columns()["status"], str)


def test_unstable_and_busy_rows_are_flagged(tmp_path):
    busy_env = {"machine_busy": True, "logical_cpus": 16}
    rows = [
        row("steady", "cuda:0", 1e-3, {}, stationary=True, shift=1.0),
        row("drifted", "cuda:0", 1e-3, {}, stationary=False, shift=1.8),
        row("busy-before", "cpu", 1e-3, {}, environment=busy_env),
        row(
            "busy-during",
            "cuda:0",
            1e-3,
            {},
            environment={"logical_cpus": 16},
            metrics={"cpu.system_util_mean": 50.0, "cpu.process_util_mean": 100.0},
        ),
        row(
            "quiet",
            "cuda:0",
            1e-3,
            {},
            environment={"logical_cpus": 16},
            metrics={"cpu.system_util_mean": 7.0, "cpu.process_util_mean": 100.0},
        ),
    ]
    results = prepare_results(load_plugins(), frame(rows, tmp_path))
    flags = dict(zip(results["workload"], results["flags"], strict=True))
    assert flags["steady"] == () and flags["quiet"] == ()
    assert flags["drifted"] == ("unstable",)
    assert "busy" in flags["busy-before"] and flags["busy-during"] == ("busy",)


def test_a_correlated_skewed_series_interval_stays_inside_its_samples():
    """Batch medians of a series that sits at 1 ms with long stretches at 40 ms: the median's
    symmetric batch interval reached below zero (a negative time); it stays within the
    samples' range."""
    samples = ([1e-3] * 20 + [40e-3] * 12) * 3
    low, high = median_ci_correlated(samples)
    assert min(samples) <= low <= high <= max(samples)
