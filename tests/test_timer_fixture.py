"""The ``benchsite_timer`` fixture (benchsite.testing) in a user's own test suite, run by
pytester: it times a function on the chosen devices with the engine's sampling and stores a
row per device in the store ``--benchsite-results`` names; a function that raises is an error
row, not a failed test."""

from __future__ import annotations

import json

import torch  # noqa: F401 - imported once here: pytester's in-process run drops what it imports

from benchsite.store import parts as store
from benchsite.tables import Tables

USER_TESTS = """
import torch

def test_matmul(benchsite_timer):
    def setup(device):
        a = torch.ones(64, 64, device=device.name)
        return lambda: a @ a
    timed = benchsite_timer(setup, params={"n": 64})
    assert set(timed) == {"cpu"}
    assert 0 < timed["cpu"].ci_low_s <= timed["cpu"].median_s <= timed["cpu"].ci_high_s

def test_a_broken_function(benchsite_timer):
    def setup(device):
        raise ValueError("no such model")
    assert benchsite_timer(setup, name="broken") == {}
"""


def test_a_users_tests_feed_the_store(pytester, tmp_path):
    pytester.makeconftest('pytest_plugins = ["benchsite.testing"]')
    pytester.makepyfile(test_user=USER_TESTS)
    results = tmp_path / "store"
    ran = pytester.runpytest("--benchsite-results", str(results), "--benchsite-device", "cpu")
    ran.assert_outcomes(passed=2)
    rows = store.read_results(results).set_index("workload")
    assert set(rows.index) == {"test-matmul", "broken"} and rows["run_id"].nunique() == 1
    matmul, broken = rows.loc["test-matmul"], rows.loc["broken"]
    assert matmul["status"] == "ok" and matmul["device"] == "cpu"
    assert json.loads(matmul["params"]) == {"n": 64}
    assert len(matmul["samples_s"]) >= 5 and matmul["warmup_calls"] >= 2  # the engine's sampling
    assert broken["status"] == "error" and broken["error"] == "ValueError: no such model"
    assert list(Tables.of(store.read_results(results)).ok["workload"]) == ["test-matmul"]


def test_without_a_store_the_timer_measures_and_stores_nothing(pytester, tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHSITE_RESULTS", raising=False)
    pytester.makeconftest('pytest_plugins = ["benchsite.testing"]')
    pytester.makepyfile(test_user=USER_TESTS)
    pytester.runpytest("--benchsite-device", "cpu").assert_outcomes(passed=2)
    assert not list(pytester.path.rglob("*.parquet"))


def test_a_cpu_and_a_gpu_row_form_a_pair_as_the_guide_says(site_from_rows, tmp_path):
    """docs/plugins.md's GPU page without a GPU: a CPU row and an accelerator row of the same
    case make a speedup, and the workload's page is built."""
    from benchsite.testing import complete_row

    case = {"workload": "matmul", "params": {"size": 1024}, "bytes": 8192.0}
    rows = [
        {**case, "median_s": 4e-5},
        {**case, "median_s": 1e-5, "device": "cuda:0", "device_kind": "cuda"}
        | {"device_model": "NVIDIA H200"},
    ]
    store.write_rows(tmp_path / "s", "test-host", "r", [complete_row(r, "size") for r in rows])
    (pair,) = Tables.of(store.read_results(tmp_path / "s")).speedups.itertuples()
    assert pair.speedup == 4.0 and pair.gpu_label == "NVIDIA H200 (cuda:0)"
    out, _ = site_from_rows(rows)
    assert (out / "workloads" / "matmul.html").is_file()
