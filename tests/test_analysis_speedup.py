"""Speedup and crossover on constructed results with known answers."""

from __future__ import annotations

import math

import pytest
from analysis_frames import frame, ids, row
from benchsite.plugins.analyses.crossover import crossover_findings
from benchsite.plugins.analyses.speedup import speedup_findings

from benchsite.tables import Tables


def test_known_speedup_with_its_confidence_interval(tmp_path):
    results = frame(
        [
            row("mlp-train", "cpu", 64e-3, {"batch": 256}),
            row("mlp-train", "cuda:0", 1e-3, {"batch": 256}),
        ],
        tmp_path,
    )
    (found,) = speedup_findings(Tables.of(results))
    assert found.numbers["best_speedup"] == pytest.approx(64.0)
    low, high = found.numbers["best_ci"]
    assert 60 < low < 64 < high < 68  # ±2% spread on each side gives a narrow interval
    assert set(found.evidence) == set(results["row_id"])
    assert "64× faster" in found.answer
    assert "fp32 on both devices" in found.explanation
    assert "transfers not included" in found.explanation


def test_rows_of_one_case_that_declare_different_work_are_no_pair(tmp_path):
    # a distributed workload sizes its model by device kind: same parameters, other work
    params = {"model": "transformer", "world_size": 1}
    results = frame(
        [
            row("ddp-train", "cpu", 15e-3, params, flops=3.5e8, items=8),
            row("ddp-train", "cuda:0", 127e-3, params, flops=4.5e13, items=16),
            row("mlp-train", "cpu", 8e-3, {"batch": 256}, flops=1e9),
            row("mlp-train", "cuda:0", 1e-3, {"batch": 256}, flops=1e9),
        ],
        tmp_path,
    )
    pairs = Tables.of(results).speedups
    assert list(pairs["workload"]) == ["mlp-train"]
    assert pairs["speedup"].iloc[0] == pytest.approx(8.0, rel=0.05)


def test_best_and_worst_case_and_failures_are_not_evidence(tmp_path):
    rows = [row("mlp-train", "cpu", 1e-3 * b, {"batch": b}) for b in (1, 16, 256)]
    rows += [row("mlp-train", "cuda:0", 2e-3, {"batch": b}) for b in (1, 16, 256)]
    rows.append(row("mlp-train", "cuda:0", 1e-3, {"batch": 4096}, status="error"))
    rows.append(row("mlp-train", "cpu", 1e-3, {"batch": 4096}))
    results = frame(rows, tmp_path)
    (found,) = speedup_findings(Tables.of(results))
    assert found.numbers["best_speedup"] == pytest.approx(128.0)
    assert found.numbers["worst_speedup"] == pytest.approx(0.5)
    assert "2× slower" in found.answer
    assert not ids(results, status="error") & set(found.evidence)


def test_cpu_only_store_says_plainly_that_no_gpu_was_measured(tmp_path):
    results = frame([row("matmul", "cpu", 1e-3, {"size": 64})], tmp_path)
    (found,) = speedup_findings(Tables.of(results))
    assert found.strength == "none" and found.evidence == ()
    assert "Only the CPU was measured" in found.answer
    assert "benchsite run" in found.explanation


def _matmul(size: int, cpu: float, gpu: float, transfer_gpu: float) -> list[dict]:
    params = {"size": size, "precision": "fp32"}
    return [
        row("matmul", "cpu", cpu, {**params, "include_transfer": False}),
        row("matmul", "cuda:0", gpu, {**params, "include_transfer": False}),
        row("matmul", "cuda:0", transfer_gpu, {**params, "include_transfer": True}),
    ]


def test_known_crossover_interpolated_log_log_with_and_without_transfers(tmp_path):
    # speedups without copies: 0.5× at 64, 2× at 256, 8× at 1024 → crossing at 128 exactly;
    # with copies: 0.25× at 256, 4× at 1024 → crossing at 512 exactly
    rows = _matmul(64, 1.0, 2.0, 8.0) + _matmul(256, 2.0, 1.0, 8.0) + _matmul(1024, 8.0, 1.0, 2.0)
    results = frame(rows, tmp_path)
    crossings = {c.include_transfer: c for c in Tables.of(results).crossovers.itertuples()}
    assert crossings[False].outcome == "crosses"
    assert crossings[False].crossover == pytest.approx(128.0)
    assert crossings[False].below == (64.0, pytest.approx(0.5))
    assert crossings[True].crossover == pytest.approx(512.0)
    (found,) = crossover_findings(Tables.of(results))
    # prose names measured sizes (the interpolated crossover is no size anyone ran)
    assert "from size 256 on" in found.answer and "from size 1,024 on" in found.answer
    assert "≈" not in found.answer
    assert "Interpolated" in found.explanation and "near 128" in found.explanation
    assert len(found.evidence) == len(rows)


def test_crossover_when_one_device_always_wins(tmp_path):
    rows = [row("mlp-train", "cpu", 1.0, {"batch": b}) for b in (1, 4)]
    rows += [row("mlp-train", "cuda:0", 0.5, {"batch": b}) for b in (1, 4)]
    rows += [row("lstm-infer", "cpu", 0.5, {"batch": b}) for b in (1, 4)]
    rows += [row("lstm-infer", "cuda:0", 1.0, {"batch": b}) for b in (1, 4)]
    results = frame(rows, tmp_path)
    outcomes = {c.workload: c for c in Tables.of(results).crossovers.itertuples()}
    assert outcomes["mlp-train"].outcome == "gpu-always"
    assert outcomes["lstm-infer"].outcome == "cpu-always"
    assert outcomes["mlp-train"].crossover == 1.0  # from the smallest measured batch on
    assert math.isnan(outcomes["lstm-infer"].crossover)
