"""Crash safety (issue 19): kills at every step of a store write, corrupt and foreign parts, one
writer per run, workers that die with their parent, pre-flight checks, resume and retry,
configuration errors, SIGINT however benchsite was started, and command-line edges.

Kills are real signals: the store's fault points (``BENCHSITE_FAULT``, :mod:`benchsite.store.faults`)
make a real writer process send itself SIGKILL (or SIGSTOP) at the step named.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsite.errors import ConfigError, StoreError
from benchsite.host import config
from benchsite.measure.runner import RunOptions, plan_cases, run_benchmarks, select_devices
from benchsite.store import parts as store
from tests.conftest import CASEBOOK, FAST_RUN, patience

BENCHSITE = str(Path(sys.executable).parent / "benchsite")
FAST = (*FAST_RUN, "--host", "h")


def default_sigint() -> None:
    """Children start with Ctrl-C handled by default, however this test process was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli(*args: str, fault: str | None = None, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "1000", **kwargs.pop("env", {})}
    env.pop("BENCHSITE_FAULT", None)
    if fault:
        env["BENCHSITE_FAULT"] = fault
    kwargs.setdefault("preexec_fn", default_sigint)
    return subprocess.Popen(
        [BENCHSITE, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **kwargs,
    )


def finish(process: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=patience(timeout))
    return process.returncode, out, err


def assert_one_line_error(process: subprocess.Popen, expected: str) -> None:
    code, _, err = finish(process)
    assert code == 2 and expected in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def a_row(row_id: str, **values) -> dict:
    row = {"row_id": row_id, "run_id": "run1", "host": "h", "workload": "w", "status": "ok"}
    return {**row, "device": "cpu", "case_key": f"w?{row_id}", **values}


def store_of_parts(root: Path, count: int = 3) -> Path:
    for index in range(count):
        store.write_rows(root, "h", "run1", [a_row(f"r{index}")])
    return store.run_dir(root, "h", "run1")


def compact_in_child(root: Path, fault: str) -> subprocess.Popen:
    code = f"from benchsite.store import parts; parts.compact_run({str(root)!r}, 'h', 'run1')"
    env = {**os.environ, "BENCHSITE_FAULT": fault}
    return subprocess.Popen([sys.executable, "-c", code], env=env, preexec_fn=default_sigint)


def assert_rows_once(root: Path, expected: set[str]) -> None:
    rows = store.read_results(root)
    assert sorted(rows["row_id"]) == sorted(expected), rows["row_id"].tolist()


# -- compaction and writes: a kill at any step ---------------------------------------------------


@pytest.mark.parametrize(
    "fault", ["compact:after-write", "compact:after-rename", "compact:after-unlink"]
)
def test_kill_during_compaction_leaves_every_row_once(tmp_path, fault):
    folder = store_of_parts(tmp_path)
    child = compact_in_child(tmp_path, fault)
    assert child.wait(timeout=patience(60)) == -signal.SIGKILL
    assert_rows_once(tmp_path, {"r0", "r1", "r2"})  # readable, no duplicate, nothing lost
    store.tidy_run(folder)  # what a resumed run does when it takes the lock ...
    store.compact_run(tmp_path, "h", "run1")  # ... and at its end
    assert [p.name for p in folder.glob("*parquet*")] == [p.name for p in folder.glob("part-*")]
    assert len(list(folder.glob("part-*.parquet"))) == 1
    assert_rows_once(tmp_path, {"r0", "r1", "r2"})


def test_kill_during_a_second_compaction_after_a_first_was_killed(tmp_path):
    """The superseded record is transitive: any subset of older parts that survives is skipped."""
    store_of_parts(tmp_path, 2)
    assert compact_in_child(tmp_path, "compact:after-rename").wait(timeout=patience(60)) == -9
    store.write_rows(tmp_path, "h", "run1", [a_row("r9")])
    assert compact_in_child(tmp_path, "compact:after-unlink").wait(timeout=patience(60)) == -9
    assert_rows_once(tmp_path, {"r0", "r1", "r9"})


def test_a_reader_during_compaction_sees_every_row_once(tmp_path):
    store_of_parts(tmp_path)
    child = compact_in_child(tmp_path, "compact:after-rename=STOP")  # stopped mid-compaction
    try:
        wait_until_stopped(child.pid)
        assert len(list(store.run_dir(tmp_path, "h", "run1").glob("part-*"))) == 4
        assert_rows_once(tmp_path, {"r0", "r1", "r2"})
    finally:
        child.send_signal(signal.SIGCONT)
        assert child.wait(timeout=patience(60)) == 0
    assert_rows_once(tmp_path, {"r0", "r1", "r2"})


def test_repeated_row_ids_are_read_once(tmp_path):
    store.write_rows(tmp_path, "h", "run1", [a_row("same")])
    store.write_rows(tmp_path, "h", "run1", [a_row("same")])
    assert_rows_once(tmp_path, {"same"})


@pytest.mark.parametrize("fault", ["write:after-write@2", "compact:after-rename"])
def test_a_run_killed_at_any_step_resumes_to_every_case_once(results_dir, fault):
    args = ("run", "-w", "case-add", *FAST, "--results", str(results_dir))
    code, _, err = finish(cli(*args, fault=fault))
    assert code == -signal.SIGKILL, err
    code, _, err = finish(cli(*args, "--resume"))  # the dead run's lock is taken over
    assert code == 0, err
    rows = store.read_results(results_dir)
    assert len(rows) == 2 and rows["case_key"].is_unique and rows["run_id"].nunique() == 1
    assert list(results_dir.glob("host=h/run=*/.part-*")) == []  # dead writer's temp cleaned
    assert len(list(results_dir.glob("host=h/run=*/part-*.parquet"))) == 1


# -- one writer per run --------------------------------------------------------------------------


def test_a_second_resume_of_the_same_run_is_refused(results_dir):
    args = ("run", "-w", "case-add", *FAST, "--results", str(results_dir))
    assert finish(cli(*args, fault="write:after-rename"))[0] == -signal.SIGKILL  # 1 of 2 stored
    first = cli(*args, "--resume", fault="write:after-write=STOP")  # stops holding the lock
    try:
        wait_until_stopped(first.pid)
        second = cli(*args, "--resume")
        assert_one_line_error(second, f"is being written by process {first.pid}")
    finally:
        first.send_signal(signal.SIGCONT)
        code, _, err = finish(first)
    assert code == 0, err
    rows = store.read_results(results_dir)
    assert len(rows) == 2 and rows["case_key"].is_unique


def wait_until_stopped(pid: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + patience(timeout_s)
    while psutil.Process(pid).status() != psutil.STATUS_STOPPED:
        assert time.monotonic() < deadline, "the writer never reached its fault point"
        time.sleep(0.05)


# -- workers die with their parent ---------------------------------------------------------------


def test_no_worker_outlives_a_killed_run(results_dir):
    run = cli("run", "-w", "case-hang", *FAST, "--timeout", "120", "--results", str(results_dir))
    workers: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + patience(120)
        while not workers:  # the measuring worker, not multiprocessing's resource tracker
            assert time.monotonic() < deadline and run.poll() is None, "no worker started"
            workers = [p for p in psutil.Process(run.pid).children() if is_worker(p)]
            time.sleep(0.2)
        time.sleep(1.0)  # inside the hanging case
        run.kill()
        run.wait(timeout=patience(30))
        _, alive = psutil.wait_procs(workers, timeout=patience(10))
        assert alive == [], f"orphaned workers: {alive}"
    finally:
        for worker in workers:
            if worker.is_running():
                worker.kill()


def is_worker(process: psutil.Process) -> bool:
    try:
        return "spawn_main" in " ".join(process.cmdline())
    except psutil.Error:
        return False


# -- corrupt, foreign and newer parts ------------------------------------------------------------


def bad_parts(root: Path) -> dict[str, Path]:
    folder = store_of_parts(root, 2)
    good = next(folder.glob("part-*.parquet"))
    truncated = folder / "part-truncated.parquet"
    truncated.write_bytes(good.read_bytes()[:-100])
    foreign = folder / "part-foreign.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), foreign)
    garbage = store.run_dir(root, "h", "run2") / "part-garbage.parquet"
    garbage.parent.mkdir()
    garbage.write_text("not parquet")
    return {"truncated": truncated, "foreign": foreign, "garbage": garbage}


def test_a_corrupt_or_foreign_part_is_skipped_with_a_warning_naming_it(tmp_path):
    from benchsite.errors import StoreWarning

    bad = bad_parts(tmp_path)
    with pytest.warns(StoreWarning) as caught:
        assert_rows_once(tmp_path, {"r0", "r1"})
    named = " ".join(str(warning.message) for warning in caught)
    assert all(str(path) in named for path in bad.values()), named


def test_store_check_lists_and_quarantines_bad_parts_without_deleting(tmp_path):
    bad = bad_parts(tmp_path)
    code, out, err = finish(cli("store", "check", "--results", str(tmp_path)))
    assert code == 1 and all(str(path) in out for path in bad.values()), out + err
    code, out, err = finish(cli("store", "check", "--results", str(tmp_path), "--quarantine"))
    assert code == 0, err
    moved = sorted(p.name for p in (tmp_path / "quarantine").rglob("part-*"))
    assert moved == sorted(path.name for path in bad.values())
    assert finish(cli("store", "check", "--results", str(tmp_path)))[0] == 0
    assert_rows_once(tmp_path, {"r0", "r1"})


def test_leftovers_of_dead_writers_are_removed_but_not_a_live_writers(tmp_path):
    from benchsite.store import check as store_check
    from benchsite.store import runlock as locks

    dead = store_of_parts(tmp_path, 1) / ".part-x.parquet.tmp-999999"
    dead.write_bytes(b"half a file")
    live_run = store.run_dir(tmp_path, "h", "live")
    live_run.mkdir()
    live = live_run / ".part-y.parquet.tmp-1"
    live.write_bytes(b"being written")
    with locks.run_lock(live_run):  # a writer of that run is alive
        assert store_check.tidy_store(tmp_path) == 1
    assert not dead.exists() and live.exists()


def test_a_store_of_a_newer_schema_is_refused_in_one_line(tmp_path):
    table = store.to_table([a_row("new")]).replace_schema_metadata(
        {"benchsite.schema_version": str(store.SCHEMA_VERSION + 1)}
    )
    folder = store.run_dir(tmp_path, "h", "run1")
    folder.mkdir(parents=True)
    pq.write_table(table, folder / "part-new.parquet")
    assert_one_line_error(cli("store", "check", "--results", str(tmp_path)), "newer benchsite")
    with pytest.raises(StoreError, match="newer benchsite"):
        store.read_results(tmp_path)


def test_a_store_without_timestamps_reads_and_resumes(tmp_path):
    from benchsite.store import resume

    store.write_rows(tmp_path, "h", "run1", [a_row("r0", profile="quick")])
    store.write_rows(tmp_path, "h", "run2", [a_row("r1", run_id="run2", profile="quick")])
    assert store.read_results(tmp_path)["timestamp"].isna().all()
    assert len(store.list_runs(tmp_path)) == 2
    found = resume.find_run(tmp_path, "h", [("cpu", "w?r0"), ("cpu", "w?x")], "quick", False)
    assert found.run_id == "run1" and found.done == {("cpu", "w?r0")}


# -- pre-flight: before any case is measured ------------------------------------------------------


@pytest.mark.parametrize(
    "results, host, expected",
    [
        ("a-file", "h", "is a file, not a folder"),
        ("/proc/benchsite-results", "h", "cannot write into"),
        ("store", "x" * 300, "more than 128"),
        ("store", "bad/host", "must start with a letter or digit"),
    ],
)
def test_pre_flight_refuses_in_one_line_before_measuring(tmp_path, results, host, expected):
    (tmp_path / "a-file").write_text("")
    where = results if results.startswith("/") else str(tmp_path / results)
    run = cli("run", "-w", "case-add", "-p", CASEBOOK, "--results", where, "--host", host)
    assert_one_line_error(run, expected)
    assert list(tmp_path.rglob("part-*")) == []


def test_pre_flight_refuses_a_nearly_full_disk(tmp_path, monkeypatch):
    import shutil
    from types import SimpleNamespace

    monkeypatch.setattr(shutil, "disk_usage", lambda path: SimpleNamespace(free=1024))
    with pytest.raises(StoreError, match="MiB free"):
        run_benchmarks(casebook_options(tmp_path, "case-add"))
    assert list(tmp_path.rglob("part-*")) == []


# -- resume and retry ----------------------------------------------------------------------------


def casebook_options(results: Path, workload: str, **changes) -> RunOptions:
    return RunOptions(
        results=results,
        workloads=(workload,),
        devices=("cpu",),
        plugins=(CASEBOOK,),
        budget_s=0.05,
        host="h",
        rounds=1,  # the rounds' rows on resume: tests/test_rounds.py
        **changes,
    )


def stored_case(results: Path, run_id: str, workload: str, case_key: str, minute: int) -> None:
    """A row of ``run_id`` as a run of ``workload`` stores it, at ``minute`` past midnight."""
    import pandas as pd

    when = pd.Timestamp("2026-12-01T00:00:00Z") + pd.Timedelta(minutes=minute)
    row = a_row(f"{run_id}-row", run_id=run_id, case_key=case_key, workload=workload)
    store.write_rows(results, "h", run_id, [{**row, "profile": "quick", "timestamp": when}])


def test_resume_continues_the_interrupted_run_of_the_selection(results_dir):
    from benchsite.host.manager import load_plugins
    from benchsite.measure.runner import select_workloads

    plugins = load_plugins((CASEBOOK,))
    workloads = select_workloads(plugins, ["case-sleep"])
    plan = plan_cases(workloads, select_devices(plugins, ["cpu"]), "quick")
    stored_case(results_dir, "interrupted", "case-sleep", plan[0].case_key, minute=0)
    stored_case(results_dir, "finished-other", "case-add", "case-add?{}", minute=1)  # newer
    report = run_benchmarks(casebook_options(results_dir, "case-sleep", resume=True))
    assert report.run_id == "interrupted"
    rows = store.read_results(results_dir)
    continued = rows[rows["run_id"] == "interrupted"]
    assert sorted(continued["case_key"]) == sorted(planned.case_key for planned in plan)


def test_retry_failed_measures_failed_rows_again(results_dir):
    options = casebook_options(results_dir, "case-raise")
    run_benchmarks(options)
    before = store.read_results(results_dir)
    assert list(before["status"]) == ["error"]
    run_benchmarks(replace(options, resume=True))  # nothing missing: nothing measured
    assert list(store.read_results(results_dir)["row_id"]) == list(before["row_id"])
    run_benchmarks(replace(options, resume=True, retry_failed=True))
    after = store.read_results(results_dir)
    assert len(after) == 1 and after["row_id"][0] != before["row_id"][0]
    assert after["run_id"][0] == before["run_id"][0]


# -- configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            b"[max_batch]\ncpu_memory_budget_gb = 32\n",
            ":2: max_batch.cpu_memory_budget_gb: unknown key",
        ),
        (
            b'[max_batch]\ncpu_memory_budget_gib = "32"\n',
            ":2: max_batch.cpu_memory_budget_gib: must be a number",
        ),
        (b"[cost.usd_per_hour]\ncpu = true\n", ":2: cost.usd_per_hour.cpu: must be a number"),
        (b"[costs]\n", ":1: costs: unknown section"),
        (b"[cost\n", "is not valid TOML"),
        (b'x = "\xff"\n', "is not UTF-8 text"),
    ],
)
def test_a_wrong_configuration_is_one_error_naming_file_key_and_line(tmp_path, text, expected):
    import benchsite.plugins.collectors.cost
    import benchsite.plugins.workloads.max_batch  # noqa: F401 - declares [max_batch]

    path = tmp_path / "benchsite.toml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as error:
        config.check(path)
    assert str(path) in str(error.value) and expected in str(error.value)


def test_a_wrong_configuration_stops_the_run_before_measuring(tmp_path):
    (tmp_path / "benchsite.toml").write_text("[max_batch]\ncpu_memory_budget_gb = 32\n")
    run = cli("run", "-w", "case-add", *FAST, "--results", "r", cwd=tmp_path)
    assert_one_line_error(run, "benchsite.toml:2: max_batch.cpu_memory_budget_gb: unknown key")
    missing = cli("run", "-w", "case-add", *FAST, env={"BENCHSITE_CONFIG": str(tmp_path / "no")})
    assert_one_line_error(missing, "does not exist")
    assert list(tmp_path.rglob("part-*")) == []


# -- SIGINT however benchsite was started ----------------------------------------------------------


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_ctrl_c_interrupts_a_run_started_with_sigint_ignored(results_dir):
    run = cli(
        "run", "-w", "case-sleep", *FAST, "--results", str(results_dir), preexec_fn=ignore_sigint
    )
    deadline = time.monotonic() + patience(120)
    while not list(results_dir.glob("host=h/run=*/part-*.parquet")):
        assert time.monotonic() < deadline and run.poll() is None, "no case stored"
        time.sleep(0.1)
    run.send_signal(signal.SIGINT)
    code, out, err = finish(run)
    assert code == 130 and "benchsite run --resume" in out, err


def test_ctrl_c_during_start_up_is_one_line_and_exit_130(results_dir):
    """Started with SIGINT ignored, benchsite catches it again first thing (before the Python
    interpreter's own start-up, a Ctrl-C is Python's, not benchsite's): interrupt right then."""
    run = cli(
        "run", "-w", "case-add", *FAST, "--results", str(results_dir), preexec_fn=ignore_sigint
    )
    deadline = time.monotonic() + patience(60)
    while not catches_sigint(run.pid):
        assert time.monotonic() < deadline and run.poll() is None, "SIGINT never caught"
        time.sleep(0.01)
    run.send_signal(signal.SIGINT)  # while importing the command line, pandas, the plugins
    code, _, err = finish(run)
    assert code == 130 and "Traceback" not in err, err
    assert err.strip() == "interrupted", err
    assert list(results_dir.rglob("part-*")) == []


def catches_sigint(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(
        next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16
    )
    return bool(caught & (1 << (signal.SIGINT - 1)))


# -- command-line edges ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, expected",
    [
        (("run", "--timeout", "nan"), "--timeout must be a positive number"),
        (("run", "--timeout", "inf"), "--timeout must be a positive number"),
        (("run", "--budget", "nan"), "--budget must be a positive number"),
        (("run", "--budget", "inf"), "--budget must be a positive number"),
        (("serve", "--port", "99999"), "--port must be between 0 and 65535"),
    ],
)
def test_command_line_edges_are_one_line_and_exit_2(tmp_path, args, expected):
    assert_one_line_error(
        cli(*args, "--results" if args[0] == "run" else "--site", str(tmp_path)), expected
    )
