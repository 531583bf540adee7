"""Reruns: a case's spread over runs of the same hardware model, shown beside its value and
counted as no change by ``benchsite compare``; and ``benchmarks/reproducibility.py`` on two real
CPU stores."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchsite.measure.runner import RunOptions, run_benchmarks
from benchsite.site.views import case_table
from benchsite.store import parts as store
from benchsite.tables import Tables
from benchsite.tables import compare as comparing
from benchsite.tables.reruns import run_medians
from tests.analysis_frames import frame, row
from tests.conftest import CASEBOOK, TESTS


def _runs(tmp_path, medians: list[float], **columns):
    rows = [
        row("matmul", "cuda:0", median, {"size": 16}, run=run, host=f"lease-{run}", **columns)
        for run, median in enumerate(medians)
    ]
    return Tables.of(frame(rows, tmp_path))


def test_the_spread_of_three_runs_is_shown_beside_the_current_value(tmp_path):
    tables = _runs(tmp_path, [9e-6, 24e-6, 12e-6])
    (spread,) = tables.reruns.to_dict("records")
    assert (spread["runs"], spread["hosts"]) == (3, 3)
    assert (spread["low_s"], spread["high_s"]) == (9e-6, 24e-6)
    current = tables.current[tables.current["host"] == "lease-2"]
    (shown,) = case_table(current, {}, reruns=tables.reruns).rows
    assert "9 µs – 24 µs over 3 runs" in shown.notes


def test_a_difference_inside_the_other_runs_spread_is_no_change(tmp_path):
    tables = _runs(tmp_path, [9e-6, 24e-6, 12e-6, 18e-6])
    sides = comparing.side(tables.rows, "lease-2"), comparing.side(tables.rows, "lease-3")
    plain = comparing.compare(*sides)
    assert plain["change"].tolist() == ["slower"]  # 18 µs against 12 µs, tight samples
    table = comparing.compare(*sides, medians=run_medians(tables.rows))
    assert table["within_reruns"].tolist() == [True] and table["change"].tolist() == ["same"]
    assert comparing.regressions(table, 0.05).empty
    # outside what the other runs gave (9-24 µs): a change
    outside = _runs(tmp_path / "b", [9e-6, 24e-6, 12e-6, 40e-6])
    sides = comparing.side(outside.rows, "lease-2"), comparing.side(outside.rows, "lease-3")
    table = comparing.compare(*sides, medians=run_medians(outside.rows))
    assert table["change"].tolist() == ["slower"] and not table["within_reruns"].any()


def test_few_samples_and_host_bound_cases_say_so_in_words(tmp_path):
    rows = [
        row("cnn-train", "cpu", 0.5, {"batch": 8}, samples=[0.49, 0.5, 0.52]),
        row("matmul", "cuda:0", 16e-6, {"size": 16}, device_median_s=3e-6),
    ]
    from benchsite.plugins.analyses import validity

    tables = Tables.of(validity.prepare_results(frame(rows, tmp_path)))
    ordered = tables.current.sort_values("workload")
    cnn, matmul = case_table(ordered, {}).rows
    assert any(note.startswith("n = 3:") and "75%" in note for note in cnn.notes)
    assert "host-bound" in matmul.flags
    assert any("GPU&#x27;s own time is 3 µs" in note for note in matmul.notes)


@pytest.mark.slow  # two runs and a script
def test_reproducibility_compares_two_quick_cpu_stores(tmp_path):
    stores = []
    for name in ("a", "b"):
        options = RunOptions(
            results=tmp_path / name,
            workloads=("case-add",),
            devices=("cpu",),
            plugins=(CASEBOOK,),
            rounds=1,
            budget_s=0.2,
        )
        run_benchmarks(options)
        stores.append(str(tmp_path / name))
    script = TESTS.parent / "benchmarks" / "reproducibility.py"
    done = subprocess.run(
        [sys.executable, str(script), *stores], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    (line,) = [text for text in done.stdout.splitlines() if text.startswith("cpu:")]
    assert line.startswith("cpu: 2 cases in both;")
    assert "agree within 5%" in line and "overlapping intervals" in line
    worst = done.stdout.split("worst 10 pairs")[1].splitlines()[1:]
    assert len(worst) == 2 and all("case-add" in text for text in worst)
    assert len(store.read_results(stores[0])) == 2


def test_a_crossover_among_host_bound_sizes_says_so(tmp_path):
    from benchsite.plugins.analyses import crossover, validity

    cpu = {16: 1e-6, 64: 20e-6, 256: 900e-6}
    gpu = {16: (9e-6, 3e-6), 64: (12e-6, 4.2e-6), 256: (16e-6, 8.5e-6)}
    rows = [row("matmul", "cpu", t, {"size": n}) for n, t in cpu.items()]
    rows += [
        row("matmul", "cuda:0", t, {"size": n}, device_median_s=own) for n, (t, own) in gpu.items()
    ]
    tables = Tables.of(validity.prepare_results(frame(rows, tmp_path)))
    (found,) = crossover.crossover_findings(tables)
    assert "host-bound" in found.explanation and "uses the host time" in found.explanation
