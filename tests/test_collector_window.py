"""What docs/plugins.md and the ``Collector`` docstring say of a collector's window, checked in a
real run: ``start`` and ``stop`` run in the case's own worker process and thread, with the
case's thread count set, after its setup and warm-up, and before its teardown; the calls they
bracket are the timed samples."""

from __future__ import annotations

import json
import os

PROBE = """
import os
import threading

import torch

from benchsite import Case, Collector, Workload, hookimpl

SEEN = {"calls": 0, "teardown": 0}


def setup(device, params):
    SEEN.update(setup_pid=os.getpid(), setup_thread=threading.get_ident(), calls=0)

    def run():
        SEEN["calls"] += 1
        SEEN["run_thread"] = threading.get_ident()

    def teardown():
        SEEN["teardown"] += 1

    return Case(run=run, threads=1, teardown=teardown)


def start(device):
    before = SEEN["calls"]
    pid, thread, threads = os.getpid(), threading.get_ident(), torch.get_num_threads()
    teardowns = SEEN["teardown"]

    def stop():
        return {
            "calls_before": before,
            "calls_during": SEEN["calls"] - before,
            "same_process": float(pid == SEEN["setup_pid"] and pid == os.getpid()),
            "same_thread": float(thread == SEEN["setup_thread"] == SEEN["run_thread"]),
            "threads": threads,
            "torn_down_before_stop": SEEN["teardown"] - teardowns,
            "pid": pid,
        }

    return stop


@hookimpl
def register_workloads():
    return [Workload(name="window-probe", description="counts calls", setup=setup,
                     params={"n": [1]}, devices=("cpu",))]


@hookimpl
def register_collectors():
    return [Collector(name="window", description="what the window holds", start=start)]
"""


def test_a_collector_brackets_the_timed_samples_in_the_cases_process_and_thread(
    tmp_path, run_workloads
):
    plugin = tmp_path / "window_probe.py"
    plugin.write_text(PROBE)
    report, rows = run_workloads("window-probe", plugins=(str(plugin),))
    assert report.statuses == {"ok": 1}
    row = rows.iloc[0]
    seen = {k[len("window.") :]: v for k, v in json.loads(row["metrics"]).items() if "window." in k}
    assert seen["pid"] != os.getpid()  # a worker process, not the run's
    assert seen["same_process"] == 1.0 and seen["same_thread"] == 1.0
    assert seen["threads"] == 1  # the case's own thread count is in effect
    assert seen["calls_before"] == row["warmup_calls"] > 0  # warm-up before the window
    assert seen["torn_down_before_stop"] == 0  # teardown after it
    timed = row["n_samples"] * row["calls_per_sample"]
    assert seen["calls_during"] >= timed  # every sample (of every pass) inside
    assert seen["calls_during"] % row["calls_per_sample"] == 0  # and nothing but samples
