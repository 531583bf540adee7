"""Distributed test workloads whose rank 1 fails for real: it raises, or it hangs forever.

Loaded with ``-p tests/plugins/distributed_faults.py``; never shipped. Every rank first writes
its pid and its launcher's pid into the folder given as the ``pid_dir`` parameter, so that a
test can check afterwards that none of them is left running.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from benchsite import Case, Device, Workload, hookimpl


def _rank_and_record(params: dict[str, Any]) -> int:
    import torch.distributed as dist

    rank = dist.get_rank()
    folder = Path(params["pid_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"rank-{rank}.pid").write_text(f"{os.getpid()} {os.getppid()}")
    return rank


def _setup_raises(device: Device, params: dict[str, Any]) -> Case:
    rank = _rank_and_record(params)
    calls = []

    def run() -> None:
        calls.append(1)
        if rank == 1 and len(calls) > 2:
            raise RuntimeError("rank 1 gives up on purpose")
        time.sleep(0.001)

    return Case(run=run)


def _setup_hangs(device: Device, params: dict[str, Any]) -> Case:
    rank = _rank_and_record(params)

    def run() -> None:
        time.sleep(3600 if rank == 1 else 0.001)

    return Case(run=run)


@hookimpl
def register_workloads() -> list[Workload]:
    grid = {"world_size": [2], "pid_dir": ["pids"]}
    return [
        Workload(name=name, description=text, setup=setup, params=grid, distributed=True)
        for name, text, setup in [
            ("dist-rank-raises", "Rank 1 raises during the timed calls.", _setup_raises),
            ("dist-rank-hangs", "Rank 1 sleeps for an hour in its first call.", _setup_hangs),
        ]
    ]
