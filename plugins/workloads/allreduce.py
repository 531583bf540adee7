"""``allreduce``: the collective that data parallelism waits on — every rank's buffer summed
and the sum returned to all — over message sizes, NCCL between GPUs, gloo between CPU processes.

Reports bandwidth as nccl-tests defines it: algorithm bandwidth ``algbw = size / time`` and bus
bandwidth ``busbw = algbw · 2(n − 1) / n``, the traffic each rank's link carries in a ring, which
is comparable with the link's peak whatever the rank count (metrics ``algbw_gbps`` and
``busbw_gbps``; the row's ``gbps`` is the bus bandwidth, from ``bytes`` = size · 2(n − 1) / n).
At world size 1 there is nothing to move: no bandwidth is reported, only the call's cost is
measured. Small messages show latency, large ones the link's bandwidth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl
from benchsite.toolkit.parallel import WORLD_SIZES, group_rank

SIZES = [2**12, 2**20, 2**24, 2**27, 2**30]
CPU_MAX_BYTES = 2**28  # gloo on the CPU: ~1 GB/s, larger messages only take longer


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="allreduce",
            description=(
                "All-reduce (sum) of a float32 buffer across the ranks, 4 KiB to 1 GiB "
                "(CPU: up to 256 MiB), NCCL on GPUs and gloo on the CPU; algorithm and bus "
                "bandwidth as nccl-tests defines them."
            ),
            setup=setup_allreduce,
            # one rank moves nothing (every size measured ~20 µs on an H200): not in the grid
            params={"size": SIZES, "world_size": [w for w in WORLD_SIZES if w > 1]},
            # one rank moves nothing, so quick runs measure only a real collective
            quick={"size": [2**20], "world_size": [2]},
            tags=("communication", "multi-gpu", "bandwidth"),
            devices=("cpu", "cuda"),
            axis="size",
            distributed=True,
        )
    ]


def bus_factor(world_size: int) -> float:
    """nccl-tests' all-reduce bus factor 2(n − 1)/n: the share of the buffer each rank's link
    sends (and receives) in a ring all-reduce."""
    return 2 * (world_size - 1) / world_size


def bandwidths(size: int, world_size: int) -> Callable[[float], dict[str, float]]:
    """algbw and busbw in GB/s from the measured seconds per call."""

    def derive(median_s: float) -> dict[str, float]:
        algbw = size / median_s / 1e9
        return {"algbw_gbps": algbw, "busbw_gbps": algbw * bus_factor(world_size)}

    return derive


def setup_allreduce(device: Device, params: dict[str, Any]) -> Case:
    import torch
    import torch.distributed as dist

    _, world_size = group_rank(params)
    size = int(params["size"])
    if device.kind == "cpu" and size > CPU_MAX_BYTES:
        raise SkipCase(f"gloo on the CPU is measured up to {CPU_MAX_BYTES // 2**20} MiB")
    buffer = torch.zeros(size // 4, dtype=torch.float32, device=device.name)  # zeros stay zeros

    def run() -> None:
        dist.all_reduce(buffer)

    bus_bytes = size * bus_factor(world_size)
    return Case(
        run=run,
        bytes=bus_bytes or None,
        metrics={"message_bytes": size},
        derived_metrics=bandwidths(size, world_size) if world_size > 1 else None,
    )
