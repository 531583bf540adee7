"""``matmul``: a square matrix product, C = A @ B, over sizes and precisions.

The building block of every dense layer. Its TFLOP/s is the device's practical compute ceiling
(bf16 and TF32 on tensor cores, strict fp32 on the CUDA cores or the CPU's vector units), and
the size at which the GPU overtakes the CPU is the first answer to "from which size on does the
GPU pay?". With ``include_transfer`` every call also copies A and B from ordinary (pageable)
host memory to the GPU and C back: what a caller whose data lives on the host really pays, and
why the GPU's crossover moves to larger sizes for such callers. Declares 2·n³ FLOPs per call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl
from benchsite.toolkit.precision import (
    apply_tf32,
    check_emulated_bf16,
    check_precision,
    tensor_dtype,
)

SIZES = [16, 64, 256, 1024, 2048, 4096, 8192]
TRANSFER_SIZES = [64, 256, 1024, 4096, 8192]


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="matmul",
            description=(
                "Square matrix product C = A @ B (2·n³ FLOPs), inputs on the device; with "
                "include_transfer=true, A and B copied host→device and C back in every call."
            ),
            setup=setup_matmul,
            params=[
                # n=16 is launch overhead in every precision: one precision says it; at n=64
                # and 256 a GPU call is still launch-bound, where bf16 alone shows what a lower
                # precision does there (the full suite must fit in 25 minutes on one H200)
                {"size": SIZES[:1], "precision": ["fp32"]},
                {"size": SIZES[1:3], "precision": ["fp32", "bf16"]},
                {"size": SIZES[3:], "precision": ["fp32", "tf32", "bf16", "fp16"]},
                {"size": TRANSFER_SIZES, "precision": ["fp32"], "include_transfer": [True]},
            ],
            quick=[
                {"size": [16, 64, 256, 1024], "precision": ["fp32"]},
                {"size": [64, 256], "precision": ["bf16"]},
                {"size": [256, 1024], "precision": ["fp32"], "include_transfer": [True]},
            ],
            tags=("compute", "size-sweep"),
            axis="size",
        )
    ]


def setup_matmul(device: Device, params: dict[str, Any]) -> Case:
    import torch

    size, precision = int(params["size"]), params.get("precision", "fp32")
    include_transfer = bool(params.get("include_transfer", False))
    check_precision(device, precision)
    check_emulated_bf16(device, precision, 2.0 * size**3)
    if include_transfer and device.kind == "cpu":
        raise SkipCase("no transfer on the CPU: its data already lives in host memory")
    # seeded inputs made where they will live: on the host for a transfer, else on the device
    home = "cpu" if include_transfer else device.name
    generator = torch.Generator(home).manual_seed(0)
    a, b = (
        torch.randn(size, size, generator=generator, dtype=tensor_dtype(precision), device=home)
        for _ in range(2)
    )
    restore_tf32 = apply_tf32(device, precision)
    run = _with_transfer(device, a, b) if include_transfer else _on_device(a, b)
    return Case(
        run=run,
        flops=2.0 * size**3,
        bytes=3.0 * size * size * a.element_size(),
        items=1,
        teardown=restore_tf32,
    )


def _on_device(a: Any, b: Any) -> Callable[[], Any]:
    """C = A @ B into a preallocated output: nothing but the product is timed."""
    import torch

    out = torch.empty_like(a)
    return lambda: torch.matmul(a, b, out=out)


def _with_transfer(device: Device, a_host: Any, b_host: Any) -> Callable[[], Any]:
    """Copy A and B from pageable host memory, multiply, copy C back: a naive caller's call."""
    import torch

    def call() -> Any:
        a = a_host.to(device.name)
        b = b_host.to(device.name)
        return torch.matmul(a, b).cpu()

    return call
