"""Whole runs through the real CLI: Ctrl-C keeps finished cases, --resume finishes the rest,
two processes write into one store at once, user errors are one line with exit status 2."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsite.store import parts as store
from tests.conftest import CASEBOOK, patience


def benchsite_cli(*args: str, **kwargs) -> subprocess.Popen:
    command = [sys.executable, "-m", "benchsite.cli.app", *args]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # however pytest started
    )


def wait_for_rows(results: Path, count: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + patience(timeout_s)
    while time.monotonic() < deadline:
        if len(list(results.glob("host=*/run=*/part-*.parquet"))) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} stored cases after {timeout_s} s")


@pytest.mark.slow
def test_ctrl_c_keeps_finished_cases_and_resume_finishes_the_rest(results_dir):
    args = (
        "run",
        "-w",
        "case-sleep",
        "-d",
        "cpu",
        "-p",
        CASEBOOK,
        "--budget",
        "0.2",
        "--rounds",
        "1",  # a case's rounds on --resume: tests/test_rounds.py
        "--results",
        str(results_dir),
        "--host",
        "testhost",
    )
    process = benchsite_cli(*args)
    wait_for_rows(results_dir, 2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=patience(60))
    assert process.returncode == 130, err
    assert "benchsite run --resume" in out
    kept = store.read_results(results_dir)
    assert 2 <= len(kept) < 4 and set(kept["status"]) == {"ok"}

    resumed = benchsite_cli(*args, "--resume")
    out, err = resumed.communicate(timeout=patience(120))
    assert resumed.returncode == 0, err
    assert f"{len(kept)} of 4 cases already stored" in out
    rows = store.read_results(results_dir)
    assert len(rows) == 4 and rows["case_key"].is_unique
    assert rows["run_id"].nunique() == 1
    assert set(kept["row_id"]) <= set(rows["row_id"])  # nothing finished was lost or redone


@pytest.mark.slow
def test_two_processes_write_into_one_store_at_once(results_dir):
    args = (
        "run",
        "-w",
        "case-add",
        "-d",
        "cpu",
        "-p",
        CASEBOOK,
        "--budget",
        "0.2",
        "--rounds",
        "1",
        "--results",
        str(results_dir),
    )
    first = benchsite_cli(*args, "--host", "alpha")
    second = benchsite_cli(*args, "--host", "beta")
    for process in (first, second):
        _, err = process.communicate(timeout=patience(120))
        assert process.returncode == 0, err
    rows = store.read_results(results_dir)
    assert sorted(rows.groupby("host")["status"].count().items()) == [("alpha", 2), ("beta", 2)]
    assert rows["run_id"].nunique() == 2


def test_user_errors_are_one_line_with_exit_status_2(results_dir):
    cases = [
        (("run", "-w", "no-such-workload", "--results", str(results_dir)), "no workload matches"),
        (("run", "-d", "tpu:7", "--results", str(results_dir)), "no device matches"),
        (("run", "--quick", "--full"), "exclude each other"),
        (("run", "--resume", "--results", str(results_dir)), "nothing to resume"),
        (("run", "-p", "missing_plugin_file.py"), "does not exist"),
        (("results", "--results", str(results_dir)), "holds no results"),
    ]
    for args, expected in cases:
        process = benchsite_cli(*args, env={**os.environ, "COLUMNS": "200"})
        _, err = process.communicate(timeout=patience(60))
        assert process.returncode == 2, (args, err)
        assert expected in err and "Traceback" not in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
