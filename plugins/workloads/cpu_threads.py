"""``cpu-threads``: three representative CPU cases at 1, 2, 4, … threads, up to every core.

A matmul (1024², compute-bound), a 3×3 convolution (64 channels, 56×56, batch 8) and an MLP
training step (batch 256) are timed with the thread count pinned. The curve shows how well the
CPU's cores add up (and where memory bandwidth or synchronization stops them), whether the
cores the machine reports are really usable (a container's affinity or CPU quota shows up as a
flat tail, and cases above the usable count are skipped with the reason), and so how many
cores a CPU-side comparison really had.
"""

from __future__ import annotations

import os
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl
from benchsite.toolkit.cases import matmul_case, mlp_spec
from benchsite.toolkit.machine import affinity_cores
from benchsite.toolkit.models import mlp_train_flops
from benchsite.toolkit.steps import ModelSpec, infer_case, train_case

OPS = ["matmul", "conv", "mlp-step"]


def thread_counts(cores: int | None = None) -> list[int]:
    """Powers of two up to the machine's logical CPUs, plus the usable and logical counts."""
    logical = cores or os.cpu_count() or 1
    usable = affinity_cores()
    powers = [2**k for k in range(logical.bit_length()) if 2**k <= logical]
    return sorted({*powers, min(usable, logical), logical})


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="cpu-threads",
            description=(
                "Matmul 1024², 3×3 conv (64 ch, 56×56, batch 8) and an MLP training step "
                "(batch 256) at 1, 2, 4, … threads up to every core."
            ),
            setup=setup_cpu_threads,
            params={"op": OPS, "threads": thread_counts()},
            quick={"op": OPS, "threads": thread_counts()[:2]},
            tags=("cpu", "threads"),
            devices=("cpu",),
            axis="threads",
        )
    ]


def setup_cpu_threads(device: Device, params: dict[str, Any]) -> Case:
    threads, op = int(params["threads"]), params["op"]
    usable = int(device.info.get("usable_cpus") or os.cpu_count() or 1)
    if threads > usable:
        raise SkipCase(f"{threads} threads asked, but only {usable} cores are usable here")
    if op == "matmul":
        case = matmul_case(device, {"size": 1024, "precision": "fp32"})
    elif op == "conv":
        case = infer_case(device, {}, conv_spec())
    elif op == "mlp-step":
        case = train_case(
            device, {"batch": 256, "precision": "fp32"}, mlp_spec(256, mlp_train_flops(256))
        )
    else:
        raise SkipCase(f"unknown op {op!r}: use one of {', '.join(OPS)}")
    case.threads = threads
    return case


def conv_spec(batch: int = 8, channels: int = 64, side: int = 56) -> ModelSpec:
    """One 3×3 convolution layer (a ResNet stage's workhorse) as an inference call."""
    import torch

    return ModelSpec(
        build=lambda: torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False),
        inputs=lambda: (torch.randn(batch, channels, side, side), torch.zeros(batch)),
        loss=torch.nn.functional.mse_loss,
        items=batch,
    )
