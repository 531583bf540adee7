"""Two distributed test workloads of one world size that this machine cannot run, for the
planning of skips: one needs more CPU ranks than any machine here has, the other runs only on
CUDA. Loaded with ``-p tests/plugins/distributed_kinds.py``; never shipped; nothing launches."""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl


def _setup(device: Device, params: dict[str, Any]) -> Case:
    return Case(run=lambda: None)


@hookimpl
def register_workloads() -> list[Workload]:
    grid = {"world_size": [4096]}
    return [
        Workload(
            name="dist-huge",
            description="Needs 4096 ranks.",
            setup=_setup,
            params=grid,
            distributed=True,
        ),
        Workload(
            name="dist-cuda-only",
            description="Runs only on CUDA devices.",
            setup=_setup,
            params=grid,
            devices=("cuda",),
            distributed=True,
        ),
    ]
