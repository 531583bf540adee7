"""The private tools every stage shares (``benchsite._infra``), one of each, each for real: the
lock between real processes, the atomic write under a failing writer, the signal mask with
real signals, the process pool, the usable cores against a cgroup folder, the one-line texts,
and the one set of failed statuses as the store, the site and ``--retry-failed`` see it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsite._infra import atomic, cores, lock, pool, signals, status, text
from benchsite.host.manager import load_plugins
from benchsite.measure import runner
from benchsite.measure.outcome import Measured, Outcome, Status
from benchsite.site import views
from benchsite.store import parts as store
from benchsite.store import resume
from benchsite.testing import complete_row

HOLD = """
import sys, time
from pathlib import Path
from benchsite._infra import lock
with lock.exclusive(Path(sys.argv[1]), lambda pid: RuntimeError(pid)):
    print("held", flush=True)
    time.sleep(60)
"""


class Busy(Exception):
    def __init__(self, pid: int | None) -> None:
        super().__init__(pid)
        self.pid = pid


def _holder(path: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


def test_the_lock_refuses_a_second_taker_naming_the_holder_and_outlives_no_holder(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".lock"
    holder = _holder(path)
    try:
        with pytest.raises(Busy) as refused, lock.exclusive(path, Busy):
            pass
        assert refused.value.pid == holder.pid
    finally:
        holder.kill()  # however the holder dies, the system releases its lock
        holder.wait()
    with lock.exclusive(path, Busy):
        assert lock.holder(path) == os.getpid()
        with pytest.raises(Busy), lock.exclusive(path, Busy):  # this process's own, too
            pass
    assert path.exists()  # never deleted: deleting a lock file races with the next taker


def test_the_atomic_write_replaces_whole_or_not_at_all(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    atomic.write_text(path, "old")
    with pytest.raises(RuntimeError), atomic.replacing(path, durable=True) as temp:
        temp.write_text("half a ne")
        raise RuntimeError("the writer fails")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["page.html"]
    seen = []
    with atomic.replacing(
        path, durable=True, before_replace=lambda: seen.append(path.read_text())
    ) as temp:
        temp.write_text("new")
        assert temp.name == f".page.html.tmp-{os.getpid()}" and path.read_text() == "old"
    assert seen == ["old"] and path.read_text() == "new"  # written whole, then renamed
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_held_signals_arrive_when_the_block_ends() -> None:
    arrived = []
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: arrived.append(time.time()))
    try:
        with signals.held(signal.SIGUSR1):
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.05)
            assert arrived == []  # held back
            left = time.time()
        assert len(arrived) == 1 and arrived[0] >= left
    finally:
        signal.signal(signal.SIGUSR1, previous)


CHILD = """
import os, signal, sys, time
from benchsite._infra import signals
signals.leave_interrupts_to_parent()
print("ready", flush=True)
time.sleep(1)
print("alive", flush=True)
"""


def test_a_child_that_leaves_interrupts_to_its_parent_survives_ctrl_c() -> None:
    """Started with SIGINT held (as a worker forked inside :func:`signals.held` is), the child
    unblocks and ignores it: a Ctrl-C to its group neither kills it nor stays pending."""
    with signals.held(signal.SIGINT):  # the child inherits the mask
        child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=30)
    assert child.returncode == 0 and out == "alive\n"


def _square(value: int) -> int:
    if value < 0:
        raise ValueError(f"negative: {value}")
    return value * value


def test_the_pool_returns_results_in_order_and_raises_what_a_call_raised() -> None:
    assert pool.in_processes(_square, [3, 1, 2], workers=2) == [9, 1, 4]
    with pytest.raises(ValueError, match="negative: -1"):
        pool.in_processes(_square, [1, -1, 2], workers=2)
    assert pool.forks() == (sys.platform == "linux")


@pytest.mark.parametrize(
    ("files", "quota"),
    [
        ({"cpu.max": "200000 100000\n"}, 2.0),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "150000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1.5),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
    ],
)
def test_usable_cores_are_the_affinity_capped_by_the_cgroup_quota(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], quota: float | None
) -> None:
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    monkeypatch.setattr(cores, "CGROUP", tmp_path)
    assert cores.cgroup_cpu_quota() == quota
    affinity = cores.affinity_cores()
    assert affinity == len(os.sched_getaffinity(0))
    expected = affinity if quota is None else max(1, min(affinity, int(quota)))
    assert cores.usable_cores() == expected


def test_first_line_is_the_first_line_or_the_type() -> None:
    assert text.first_line(OSError("  bad footer\nat byte 12\n")) == "bad footer"
    assert text.first_line(ValueError()) == "ValueError"


def test_failed_statuses_are_one_set_for_the_store_the_site_and_retries(tmp_path: Path) -> None:
    assert status.FAILED == {"error", "oom", "crash", "timeout"}
    assert resume.FAILED is status.FAILED and views.FAILED is status.FAILED
    rows = [
        complete_row({"workload": "w", "params": {"n": n}, "status": state, "host": "host-1"})
        for n, state in enumerate(["ok", "skipped", "error", "oom", "crash", "timeout"])
    ]
    store.write_rows(tmp_path, "host-1", "r1", rows)
    planned = [("cpu", row["case_key"]) for row in rows]
    found = resume.find_run(tmp_path, "host-1", planned, "quick", retry_failed=True)
    retried = {row["status"] for row in rows if ("cpu", row["case_key"]) in found.retry}
    assert retried == status.FAILED  # an out-of-memory case too is measured again
    (runs,) = store.list_runs(tmp_path).itertuples()
    assert (runs.cases, runs.ok, runs.failed) == (6, 1, 4)


def test_the_store_schema_is_the_one_list_of_result_columns(fake_device) -> None:
    """:data:`benchsite.store.parts.SCHEMA` declares every result column once: what a measured
    case fills (:class:`~benchsite.measure.outcome.Measured`) and what the runner adds to every
    row (:func:`~benchsite.measure.runner.build_row`) are exactly its columns, and
    docs/results-schema.md documents each of them."""
    plugins = load_plugins()
    registered = runner.select_workloads(plugins, ("matmul",))[0]
    planned = runner.plan_case(registered, fake_device, {"n": 64})
    options = runner.RunOptions()
    context = runner.RunContext(options, plugins, "run-1", "host-1", runner.SilentReporter())
    outcome = Outcome(Status.SKIPPED, "not here", ranks=[]).columns()  # ranks: a group's
    filled = set(runner.build_row(planned, outcome, context)) | set(Measured.__annotations__)
    assert filled == set(store.SCHEMA.names)
    documented = (Path(__file__).parents[1] / "docs" / "results-schema.md").read_text()
    assert [name for name in store.SCHEMA.names if f"`{name}`" not in documented] == []
