"""Runs over time: a known regression is found, noise is not, unlike runs are not compared."""

from __future__ import annotations

import random

import numpy as np
import pytest
from analysis_frames import frame, row
from benchsite.plugins.analyses.history import (
    CaseRuns,
    _test,
    _test_all,
    changes,
    history_findings,
    mann_whitney_u,
    mann_whitney_u_many,
)

from benchsite.tables import Tables


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
    verdicts = {c.case: c for c in changes(Tables.of(results))}
    assert verdicts["size 256"].verdict == "regression"
    assert verdicts["size 256"].change == pytest.approx(0.2)
    assert verdicts["size 256"].runs == 3
    assert verdicts["size 512"].verdict == "unchanged"
    found = history_findings(Tables.of(results))
    assert found[0].numbers == {"cases": 2, "regressions": 1, "improvements": 0}
    (regression,) = [f for f in found if f.id.startswith("history-regression")]
    assert "20% slower" in regression.answer and len(regression.evidence) == 3


def test_small_change_below_the_minimum_effect_is_not_reported(tmp_path):
    rows = [row("matmul", "cpu", 1e-3, {"size": 256}, run=0),
            row("matmul", "cpu", 1.02e-3, {"size": 256}, run=1)]
    (change,) = changes(Tables.of(frame(rows, tmp_path)))
    assert change.p_value < 0.01 and change.verdict == "unchanged"  # clear but only 2%


def test_runs_with_different_fingerprints_are_not_compared(tmp_path):
    rows = [row("matmul", "cpu", 1e-3, {"size": 256}, run=0, fingerprint="old-driver"),
            row("matmul", "cpu", 2e-3, {"size": 256}, run=1, fingerprint="new-driver")]
    assert changes(Tables.of(frame(rows, tmp_path))) == []


def test_many_comparisons_at_once_give_exactly_the_one_by_one_numbers():
    rng = random.Random(4)
    sides = [([round(rng.lognormvariate(0, 0.2), digits) for _ in range(rng.randint(1, 15))],
              [round(rng.lognormvariate(0.02, 0.2), digits) for _ in range(rng.randint(1, 70))])
             for digits in [1, 2, 6] * 300]  # fmt: skip
    values = np.array([value for first, second in sides for value in first + second])
    groups = np.repeat(np.arange(len(sides)), [len(a) + len(b) for a, b in sides])
    first = np.array([i < len(a) for a, b in sides for i in range(len(a) + len(b))])
    assert mann_whitney_u_many(values, groups, first) == [mann_whitney_u(a, b) for a, b in sides]

    def case(runs: int) -> CaseRuns:
        samples = [[round(rng.lognormvariate(0, 0.1), 3) for _ in range(rng.randint(1, 8))]
                   for _ in range(runs)]  # fmt: skip
        run_ids = [*sorted(rng.choices(["r1", "r2", "r3"], k=runs - 1)), "r4"]
        n = len(run_ids)
        return CaseRuns(run_ids, samples, [1.0] * n, ["row"] * n, ["h"] * n, ["cpu"] * n,
                        ["CPU"] * n, ["w"] * n, [{}] * n)  # fmt: skip

    cases = [case(rng.randint(2, 6)) for _ in range(500)]
    assert _test_all(cases) == [_test(c) for c in cases]
