"""``copy`` and ``transfer``: how fast bytes move inside a device and between host and GPU.

``copy`` copies a buffer to another on the same device: read plus write, so it declares twice
the buffer size as bytes moved. Its GB/s is the memory bandwidth that bounds every elementwise
operation, normalization and optimizer step; small sizes stay in cache and show cache bandwidth
instead (the curve's knee is the last-level cache size).

``transfer`` copies between host memory and the GPU in one direction (``h2d`` or ``d2h``),
from ordinary pageable memory or from pinned (page-locked) memory. It is the price of feeding a
GPU from the host, and pinned versus pageable is the technique a reader can switch on
(``DataLoader(pin_memory=True)``) for a measured gain. GPU only: a CPU has no such transfer.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl

KIB, MIB, GIB = 2**10, 2**20, 2**30
SIZES = [4 * KIB, 64 * KIB, 1 * MIB, 16 * MIB, 256 * MIB, 1 * GIB]


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="copy",
            description="Device-to-same-device buffer copy; GB/s counts read + write.",
            setup=setup_copy,
            params={"size": SIZES},
            quick={"size": [4 * KIB, 1 * MIB, 64 * MIB]},
            tags=("memory", "size-sweep"),
            axis="size",
        ),
        Workload(
            name="transfer",
            description="Host↔GPU copy of one buffer, pageable vs pinned host memory; GB/s.",
            setup=setup_transfer,
            params={"size": SIZES[:-1], "pinned": [False, True], "direction": ["h2d", "d2h"]},
            quick={"size": [64 * KIB, 16 * MIB], "pinned": [False, True], "direction": ["h2d"]},
            tags=("memory", "transfer", "size-sweep"),
            devices=("cpu", "cuda"),
            axis="size",
        ),
    ]


def setup_copy(device: Device, params: dict[str, Any]) -> Case:
    import torch

    size = int(params["size"])
    source = torch.ones(size, dtype=torch.uint8, device=device.name)
    target = torch.empty_like(source)
    return Case(run=lambda: target.copy_(source), bytes=2.0 * size, items=1)


def setup_transfer(device: Device, params: dict[str, Any]) -> Case:
    import torch

    if device.kind != "cuda":
        raise SkipCase("no transfer on the CPU: host memory is the CPU's own memory")
    size, pinned = int(params["size"]), bool(params["pinned"])
    direction = params["direction"]
    if direction not in ("h2d", "d2h"):
        raise SkipCase(f"unknown direction {direction!r}: use h2d or d2h")
    host = torch.ones(size, dtype=torch.uint8, pin_memory=pinned)
    on_device = torch.ones(size, dtype=torch.uint8, device=device.name)
    source, target = (host, on_device) if direction == "h2d" else (on_device, host)
    # non_blocking lets a pinned copy run asynchronously, as a DataLoader would; the timer's
    # events and the block's synchronize still count every byte
    return Case(run=lambda: target.copy_(source, non_blocking=True), bytes=float(size), items=1)
