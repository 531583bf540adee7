"""An example third-party benchsite plugin, installed as its own distribution.

It adds a workload (``example-saxpy``: y = a·x + y over vector sizes) and a collector
(``example-wall``: host wall-clock seconds spent in the timed samples). It uses only the public
API: ``from benchsite import hookimpl, Workload, Case, Collector``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from benchsite import Case, Collector, Device, Workload, hookimpl


def setup_saxpy(device: Device, params: Mapping[str, Any]) -> Case:
    import torch

    size = int(params["size"])
    x = torch.rand(size, device=device.name)
    y = torch.rand(size, device=device.name)
    return Case(run=lambda: y.add_(x, alpha=2.0), flops=2.0 * size, bytes=12.0 * size, items=size)


def start_wall(device: Device) -> Callable[[], Mapping[str, float]]:
    started = time.perf_counter()
    return lambda: {"seconds": time.perf_counter() - started}


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="example-saxpy",
            description="y = a·x + y on float32 vectors (memory-bound).",
            setup=setup_saxpy,
            params={"size": [2**16, 2**20]},
            quick={"size": [2**16]},
            axis="size",
            tags=("example",),
        )
    ]


@hookimpl
def register_collectors() -> list[Collector]:
    return [
        Collector(
            name="example-wall",
            description="Host wall-clock seconds spent in the timed samples.",
            start=start_wall,
        )
    ]
