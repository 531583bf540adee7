"""Runs over time: a known regression is found, noise is not, unlike runs are not compared."""

from __future__ import annotations

import pytest
from analysis_frames import frame, row
from benchsite.plugins._mannwhitney import mann_whitney_u
from benchsite.plugins.analysis_history import changes, history_findings


def test_mann_whitney_matches_the_textbook_values():
    u, p = mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert u == 0 and p == pytest.approx(0.01219, abs=1e-4)  # scipy, asymptotic, continuity
    assert mann_whitney_u([1, 2, 3], [1, 2, 3])[1] == 1.0
    assert mann_whitney_u([], [1.0]) [1] == 1.0


def test_known_regression_and_unchanged_case(tmp_path):
    rows = [row("matmul", "cpu", 1e-3, {"size": 256}, run=r) for r in (0, 1)]
    rows.append(row("matmul", "cpu", 1.2e-3, {"size": 256}, run=2))  # newest: 20% slower
    rows += [row("matmul", "cpu", 1e-3, {"size": 512}, run=r) for r in (0, 1, 2)]
    results = frame(rows, tmp_path)
    verdicts = {c.case: c for c in changes(results)}
    assert verdicts["size 256"].verdict == "regression"
    assert verdicts["size 256"].change == pytest.approx(0.2)
    assert verdicts["size 256"].runs == 3
    assert verdicts["size 512"].verdict == "unchanged"
    found = history_findings(results)
    assert found[0].numbers == {"cases": 2, "regressions": 1, "improvements": 0}
    (regression,) = [f for f in found if f.id.startswith("history-regression")]
    assert "20% slower" in regression.answer and len(regression.evidence) == 3


def test_small_change_below_the_minimum_effect_is_not_reported(tmp_path):
    rows = [row("matmul", "cpu", 1e-3, {"size": 256}, run=0),
            row("matmul", "cpu", 1.02e-3, {"size": 256}, run=1)]
    (change,) = changes(frame(rows, tmp_path))
    assert change.p_value < 0.01 and change.verdict == "unchanged"  # clear but only 2%


def test_runs_with_different_fingerprints_are_not_compared(tmp_path):
    rows = [row("matmul", "cpu", 1e-3, {"size": 256}, run=0, fingerprint="old-driver"),
            row("matmul", "cpu", 2e-3, {"size": 256}, run=1, fingerprint="new-driver")]
    assert changes(frame(rows, tmp_path)) == []
