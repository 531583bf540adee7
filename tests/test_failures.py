"""Every failure status comes from a real failing case, and the run goes on after each."""

from __future__ import annotations

import json

import pandas as pd

from tests.conftest import CASEBOOK


def test_each_failure_becomes_a_row_and_the_run_continues(run_workloads):
    report, rows = run_workloads(
        "case-raise",
        "case-abort",
        "case-hang",
        "case-huge",
        "case-skip",
        "case-gpu-only",
        "case-add",
        plugins=(CASEBOOK,),
        timeout_s=4,
    )
    status = dict(zip(rows["workload"], rows["status"], strict=False))
    assert status["case-raise"] == "error"
    assert status["case-abort"] == "crash"
    assert status["case-hang"] == "timeout"
    assert status["case-huge"] == "oom"
    assert status["case-skip"] == "skipped"
    assert status["case-gpu-only"] == "skipped"
    assert status["case-add"] == "ok"  # measured after all the failures above
    errors = dict(zip(rows["workload"], rows["error"], strict=False))
    assert "ValueError: this case always fails" in errors["case-raise"]
    assert "SIGABRT" in errors["case-abort"]
    assert "timed out after 4 s" in errors["case-hang"]
    assert "needs hardware this machine lacks" in errors["case-skip"]
    assert "runs only on cuda" in errors["case-gpu-only"]
    assert report.statuses["ok"] == 2


def test_ok_rows_carry_samples_statistics_and_provenance(run_workloads):
    _, rows = run_workloads("case-add", plugins=(CASEBOOK,))
    row = rows.iloc[0]
    assert row["status"] == "ok" and pd.isna(row["error"])
    samples = list(row["samples_s"])
    assert len(samples) == row["n_samples"] >= 3
    assert row["ci_low_s"] <= row["median_s"] <= row["ci_high_s"]
    assert row["min_s"] == min(samples)
    assert row["calls_per_sample"] >= 1
    assert row["gbps"] > 0 and row["threads"] >= 1
    assert json.loads(row["params"]) == {"size": 1024}
    assert row["plugin"] == "casebook" and row["plugin_version"] == "local"
    assert json.loads(row["device_info"])["usable_cpus"] >= 1
    assert row["fingerprint"] and row["benchsite_version"]
