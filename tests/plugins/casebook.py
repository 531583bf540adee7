"""Test workloads that fail in every way the engine must survive, plus cheap ones that succeed.

Loaded with ``-p tests/plugins/casebook.py``; never shipped. Each failing case fails for real:
an exception, ``os.abort()``, a sleep past the timeout, an allocation larger than any machine.
"""

from __future__ import annotations

import os
import time
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl


def _setup_raise(device: Device, params: dict[str, Any]) -> Case:
    def run() -> None:
        raise ValueError("this case always fails")

    return Case(run=run)


def _setup_abort(device: Device, params: dict[str, Any]) -> Case:
    return Case(run=os.abort)


def _setup_hang(device: Device, params: dict[str, Any]) -> Case:
    return Case(run=lambda: time.sleep(3600))


def _setup_huge(device: Device, params: dict[str, Any]) -> Case:
    import torch

    return Case(run=lambda: torch.empty(2**50, dtype=torch.uint8))


def _setup_skip(device: Device, params: dict[str, Any]) -> Case:
    raise SkipCase("needs hardware this machine lacks")


def _setup_sleep(device: Device, params: dict[str, Any]) -> Case:
    seconds = float(params["seconds"])
    return Case(run=lambda: time.sleep(seconds), items=1)


def _setup_add(device: Device, params: dict[str, Any]) -> Case:
    import torch

    x = torch.ones(int(params["size"]), device=device.name)
    return Case(run=lambda: x.add_(1.0), bytes=2 * 4 * x.numel(), items=1)


def _workload(name: str, setup: Any, params: Any, **extra: Any) -> Workload:
    return Workload(
        name=name, description=f"test case: {name}", setup=setup, params=params, **extra
    )


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        _workload("case-raise", _setup_raise, {"n": [1]}),
        _workload("case-abort", _setup_abort, {"n": [1]}),
        _workload("case-hang", _setup_hang, {"n": [1]}),
        _workload("case-huge", _setup_huge, {"n": [1]}),
        _workload("case-skip", _setup_skip, {"n": [1]}),
        _workload("case-gpu-only", _setup_add, {"size": [16]}, devices=("cuda",)),
        _workload("case-sleep", _setup_sleep, {"seconds": [0.3, 0.3001, 0.3002, 0.3003]}),
        _workload("case-add", _setup_add, {"size": [1024, 4096]}, axis="size"),
    ]
