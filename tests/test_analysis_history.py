"""Runs over time: a known regression is found, noise is not, a new fingerprint is said, and
the history finding, the Runs pages and `benchsite compare` agree on every verdict."""

from __future__ import annotations

import random

import pytest
from analysis_frames import frame, row
from benchsite.plugins.analyses.history import changes, history_findings

from benchsite.tables import Tables
from benchsite.tables.compare import compare as compare_sides
from benchsite.tables.compare import regressions, side


def test_known_regression_and_unchanged_case(tmp_path):
    rows = [row("matmul", "cpu", 1e-3, {"size": 256}, run=r) for r in (0, 1)]
    rows.append(row("matmul", "cpu", 1.2e-3, {"size": 256}, run=2))  # newest: 20% slower
    rows += [row("matmul", "cpu", 1e-3, {"size": 512}, run=r) for r in (0, 1, 2)]
    tables = Tables.of(frame(rows, tmp_path))
    (change,) = changes(tables)
    assert change.case == "size 256" and change.verdict == "regression"
    assert change.change == pytest.approx(0.2) and change.low > 0.05
    assert len(change.history) == 3 and change.same_hardware
    found = history_findings(tables)
    assert found[0].numbers == {"cases": 2, "regressions": 1, "improvements": 0}
    assert len(found[0].evidence) == 2  # the newest run's rows of the cases it counts
    (regression,) = [f for f in found if f.id.startswith("history-regression")]
    assert "20% slower than in the run before" in regression.answer
    assert len(regression.evidence) == 3 and regression.strength == "strong"


def test_an_improvement_is_found_and_a_small_clear_change_is_not(tmp_path):
    rows = [
        row("matmul", "cpu", 1e-3, {"size": 256}, run=0),
        row("matmul", "cpu", 0.8e-3, {"size": 256}, run=1),  # 20% faster
        row("matmul", "cpu", 1e-3, {"size": 512}, run=0),
        row("matmul", "cpu", 1.02e-3, {"size": 512}, run=1),
    ]  # clear, but only 2%
    found = {c.case: c.verdict for c in changes(Tables.of(frame(rows, tmp_path)))}
    assert found == {"size 256": "improvement"}


def test_noise_alone_is_no_change(tmp_path):
    rng = random.Random(3)
    rows = [
        row(
            "mlp-train",
            "cpu",
            1e-3,
            {"batch": b},
            run=r,
            samples=[rng.lognormvariate(-6.9, 0.05) for _ in range(41)],
        )
        for r in range(4)
        for b in (1, 4, 16, 64, 256)
    ]
    tables = Tables.of(frame(rows, tmp_path))
    assert changes(tables) == []
    assert history_findings(tables)[0].numbers["regressions"] == 0


def test_a_change_that_comes_with_a_new_fingerprint_says_so(tmp_path):
    rows = [
        row("matmul", "cpu", 1e-3, {"size": 256}, run=0, fingerprint="old-driver"),
        row("matmul", "cpu", 2e-3, {"size": 256}, run=1, fingerprint="new-driver"),
    ]
    (change,) = changes(Tables.of(frame(rows, tmp_path)))
    assert change.verdict == "regression" and not change.same_hardware
    (finding,) = [
        f
        for f in history_findings(Tables.of(frame(rows, tmp_path)))
        if f.id.startswith("history-regression")
    ]
    assert "fingerprint changed" in finding.answer and finding.strength == "moderate"


def test_history_runs_page_and_compare_share_one_verdict(tmp_path):
    """One definition: the newest run's regressions are the same cases in the history finding,
    in the Runs pages' counts (Tables.run_changes) and in `benchsite compare PREVIOUS NEWEST`."""
    rng = random.Random(8)
    rows = []
    for size in (64, 128, 256, 512, 1024, 2048):
        for run, factor in enumerate((1.0, 1.0, {256: 1.3, 1024: 1.06, 2048: 0.7}.get(size, 1.0))):
            rows.append(
                row(
                    "matmul",
                    "cpu",
                    size * 1e-6 * factor,
                    {"size": size},
                    run=run,
                    samples=[size * 1e-6 * factor * rng.lognormvariate(0, 0.01) for _ in range(31)],
                )
            )
    tables = Tables.of(frame(rows, tmp_path))
    history = {c.case for c in changes(tables) if c.verdict == "regression"}
    newest = tables.run_changes[tables.run_changes["newest"]]
    (count,) = newest["regressions"]
    both = compare_sides(side(tables.rows, "run-001"), side(tables.rows, "run-002"))
    compared = {f"size {int(v):,}" for v in regressions(both, 0.05)["axis_value"]}
    assert history == compared == {"size 256", "size 1,024"} and count == 2
    assert {c.case for c in changes(tables) if c.verdict == "improvement"} == {"size 2,048"}
