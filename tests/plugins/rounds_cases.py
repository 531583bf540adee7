"""Test workloads for rounds and per-case memory; loaded with ``-p tests/plugins/rounds_cases.py``.

- ``level-by-process``: sleeps 5 ms a call in one worker process and 10 ms in the next (the level
  is chosen at setup from a counter file, ``BENCHSITE_TEST_ROUNDS_LOG``, one line per setup):
  steady within a process, different between processes;
- ``level-steady``: sleeps 5 ms a call in every process (it logs its setups to the same file);
- ``memory-hoard``: keeps 256 MiB (written, so resident) alive in the worker after its case
  ended, as an allocator's cache would; ``memory-tiny``: a case that needs almost nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from benchsite import Case, Device, Workload, hookimpl

HOARD_BYTES = 256 * 2**20
_hoard: list[bytearray] = []


def _log_setup(name: str) -> int:
    """Append ``name pid`` to the log; return how many setups of ``name`` it held before."""
    log = Path(os.environ["BENCHSITE_TEST_ROUNDS_LOG"])
    lines = log.read_text().splitlines() if log.exists() else []
    with log.open("a") as out:
        out.write(f"{name} {os.getpid()}\n")
    return sum(1 for line in lines if line.split()[0] == name)


def _sleeper(seconds: float) -> Case:
    return Case(run=lambda: time.sleep(seconds), items=1)


def _setup_by_process(device: Device, params: dict[str, Any]) -> Case:
    earlier = _log_setup("level-by-process")
    return _sleeper(0.005 if earlier % 2 == 0 else 0.010)


def _setup_steady(device: Device, params: dict[str, Any]) -> Case:
    _log_setup("level-steady")
    return _sleeper(0.005)


def _setup_hoard(device: Device, params: dict[str, Any]) -> Case:
    block = bytearray(HOARD_BYTES)
    block[::4096] = b"\1" * len(block[::4096])  # every page written: resident
    _hoard.append(block)  # outlives the case, in this worker
    return Case(run=lambda: sum(block[:: 2**20]), items=1)


def _setup_tiny(device: Device, params: dict[str, Any]) -> Case:
    return Case(run=lambda: sum(range(100)), items=1)


@hookimpl
def register_workloads() -> list[Workload]:
    def workload(name: str, setup: Any) -> Workload:
        return Workload(name=name, description=f"test case: {name}", setup=setup, params={"n": [1]})

    return [
        workload("level-by-process", _setup_by_process),
        workload("level-steady", _setup_steady),
        workload("memory-hoard", _setup_hoard),
        workload("memory-tiny", _setup_tiny),
    ]
