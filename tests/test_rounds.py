"""Rounds: each case measured in several worker processes, the interval covering the variation
between them, the ``irreproducible`` flag; memory that is each case's own; and the statistics
behind both (:func:`benchsite.stats.combine_rounds`)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from benchsite.plugins.analyses import validity

from benchsite.measure import rounds
from benchsite.measure.outcome import Outcome, Status
from benchsite.measure.runner import RunOptions, run_benchmarks
from benchsite.stats import chi2_sf, combine_rounds, interval_coverage, t975
from benchsite.store import parts as store
from tests.conftest import TESTS

ROUNDS_CASES = str(TESTS / "plugins" / "rounds_cases.py")


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *workloads: str, **extra) -> Path:
    monkeypatch.setenv("BENCHSITE_TEST_ROUNDS_LOG", str(tmp_path / "setups.log"))
    results = tmp_path / "results"
    options = RunOptions(
        results=results,
        workloads=workloads,
        devices=("cpu",),
        plugins=(ROUNDS_CASES,),
        host="testhost",
        **extra,
    )
    report = run_benchmarks(options)
    assert not report.interrupted
    return results


def _setups(tmp_path: Path) -> list[tuple[str, str]]:
    return [tuple(line.split()) for line in (tmp_path / "setups.log").read_text().splitlines()]


@pytest.mark.slow  # three worker processes
def test_a_level_that_moves_between_processes_widens_the_interval_and_is_flagged(
    tmp_path, monkeypatch
):
    results = _run(tmp_path, monkeypatch, "level-by-process", "level-steady")
    rows = store.read_results(results).set_index("workload")
    moving, steady = rows.loc["level-by-process"], rows.loc["level-steady"]
    # three rounds each, each round in another process; one process served both cases a round
    setups = _setups(tmp_path)
    pids = {name: [pid for n, pid in setups if n == name] for name in rows.index}
    assert all(len(found) == len(set(found)) == 3 for found in pids.values())
    assert pids["level-by-process"] == pids["level-steady"]
    assert moving["rounds"] == steady["rounds"] == 3
    assert len(moving["samples_s"]) == sum(moving["round_sizes"]) == moving["n_samples"]
    medians = sorted(moving["round_medians_s"])
    assert medians[-1] / medians[0] > 1.7  # 5 ms, 10 ms, 5 ms
    assert not moving["reproducible"] and steady["reproducible"]
    # the moving case's interval covers every round; the steady one stays narrow
    assert moving["ci_low_s"] <= medians[0] and moving["ci_high_s"] >= medians[-1]
    assert moving["rel_ci"] > 0.3
    if steady["round_spread"] < 1.1:  # a machine starved of CPU can still stall a round's sleeps
        assert steady["rel_ci"] < 0.1
    flagged = validity.prepare_results(store.read_results(results)).set_index("workload")
    assert "irreproducible" in flagged.loc["level-by-process", "flags"]
    assert "irreproducible" not in flagged.loc["level-steady", "flags"]


def test_memory_kept_by_one_case_is_not_in_the_next_cases_figures(tmp_path, monkeypatch):
    results = _run(tmp_path, monkeypatch, "memory-hoard", "memory-tiny", rounds=1)
    rows = store.read_results(results).set_index("workload")
    peak = {name: json.loads(rows.loc[name, "metrics"]) for name in rows.index}
    hoard = peak["memory-hoard"]["memory.cpu_peak_rss_bytes"]
    tiny = peak["memory-tiny"]["memory.cpu_peak_rss_bytes"]
    assert hoard > 200 * 2**20  # its own 256 MiB
    assert tiny < 32 * 2**20  # the hoard stayed resident in the worker but is not its own
    assert peak["memory-tiny"]["memory.per_case"] == 1


@pytest.mark.slow  # three worker processes
def test_an_interrupted_round_is_continued_on_resume(tmp_path, monkeypatch):
    """A stored row of one round is continued to three; its first round is kept as it was."""
    first = _run(tmp_path, monkeypatch, "level-steady", rounds=1)
    (before,) = store.read_results(first).to_dict("records")
    options = RunOptions(
        results=first,
        workloads=("level-steady",),
        devices=("cpu",),
        plugins=(ROUNDS_CASES,),
        host="testhost",
        resume=True,
    )
    run_benchmarks(options)
    (after,) = store.read_results(first).to_dict("records")
    assert after["run_id"] == before["run_id"] and after["rounds"] == 3
    assert after["round_medians_s"][0] == before["round_medians_s"][0]
    assert list(after["samples_s"])[: before["n_samples"]] == list(before["samples_s"])
    assert len({pid for _, pid in _setups(tmp_path)}) == 3


def test_rounds_interval_includes_the_between_process_spread():
    tight = [(0.99, 1.01), (1.19, 1.21), (0.99, 1.01)]
    found = combine_rounds([1.0, 1.2, 1.0], tight)
    assert found.median_s == 1.0 and found.spread == pytest.approx(1.2)
    assert found.p_value < 1e-6  # far beyond the within-round intervals
    assert found.ci_high_s - found.median_s > 0.2  # the t-interval of three round medians
    agreeing = combine_rounds([1.0, 1.001, 0.999], [(0.98, 1.02)] * 3)
    assert agreeing.p_value > 0.5 and rounds.reproducible(agreeing)
    # the within-round intervals are the floor: three equal medians are not known exactly
    assert agreeing.ci_low_s < 0.99 and agreeing.ci_high_s > 1.01
    assert rounds.reproducible(found) is False
    assert combine_rounds([1e-6, 5e-6, 1e-6], [(0.0, 2e-6)] * 3).ci_low_s == 0.0


def test_rounds_interval_covers_a_rerun_with_random_process_levels():
    """Monte Carlo: each process adds a level (sd 5%) on top of within-round noise (sd 1%);
    the combined interval of 3 rounds covers the true level about 95% of the time, where the
    within-round interval alone would cover it far less often."""
    rng = random.Random(4)
    covered = within_only = 0
    trials = 400
    for _ in range(trials):
        medians, intervals = [], []
        for _ in range(3):
            level = 1.0 * math.exp(rng.gauss(0, 0.05) + rng.gauss(0, 0.01))
            medians.append(level)
            intervals.append((level * 0.98, level * 1.02))
        found = combine_rounds(medians, intervals)
        covered += found.ci_low_s <= 1.0 <= found.ci_high_s
        centre = sorted(medians)[1]
        within_only += centre * 0.988 <= 1.0 <= centre * 1.012
    assert covered / trials >= 0.92
    assert within_only / trials < 0.5


def test_small_sample_statistics():
    assert interval_coverage(3) == pytest.approx(0.75)
    assert interval_coverage(1) == 0.0 and interval_coverage(10) >= 0.95
    assert t975(2) == pytest.approx(4.303, rel=1e-3) and t975(30) == pytest.approx(2.042, rel=5e-3)
    assert chi2_sf(5.991, 2) == pytest.approx(0.05, rel=1e-3)
    assert chi2_sf(7.815, 3) == pytest.approx(0.05, rel=1e-3)


def _round(median: float) -> Outcome:
    samples = [median * (1 + d) for d in (-0.01, 0.0, 0.01)] * 3
    measured = {
        "samples_s": samples,
        "median_s": median,
        "ci_low_s": median * 0.99,
        "ci_high_s": median * 1.01,
        "warmup_calls": 2,
        "measure_s": 0.1,
        "converged": True,
        "sampling_passes": 1,
        "metrics": {},
    }
    return Outcome(Status.OK, measured=measured)  # type: ignore[arg-type]


def test_extra_rounds_go_where_rounds_disagree_or_the_case_is_small_not_to_expensive_cases():
    policy = rounds.RoundPolicy(3, 5, cheap_s=10.0)
    tracker = rounds.Tracker(policy)
    steady, moving, small, costly = ("cpu", "a"), ("cpu", "b"), ("cpu", "c"), ("cpu", "d")
    for level in (1e-3, 1e-3, 1e-3):
        tracker.add(steady, _round(level))
    for level in (1e-3, 1.2e-3, 1e-3):
        tracker.add(moving, _round(level))
    for level in (5e-6, 5e-6, 5e-6):
        tracker.add(small, _round(level))
    tracker.add(costly, _round(1e-3), seconds=12.0)
    assert not tracker.due(steady) and tracker.due(moving) and tracker.due(small)
    assert not tracker.due(costly)  # its first round took longer than cheap_s: one round
    for _ in range(2):
        tracker.add(moving, _round(1e-3))
    assert not tracker.due(moving) and len(tracker.cases[moving].measured) == 5
