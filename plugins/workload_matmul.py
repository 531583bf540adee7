"""``matmul``: a square matrix product, C = A @ B, over sizes and precisions.

The building block of every dense layer. Its TFLOP/s is the device's practical compute ceiling,
and the size at which the GPU overtakes the CPU is the first answer to "from which size on does
the GPU pay?". Declares 2·n³ FLOPs per call.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl

DTYPES = {"fp32": "float32", "bf16": "bfloat16"}


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="matmul",
            description="Square matrix product C = A @ B (2·n³ FLOPs), inputs on the device.",
            setup=setup_matmul,
            params={"size": [64, 256, 1024, 2048, 4096, 8192], "dtype": list(DTYPES)},
            quick={"size": [64, 256, 512], "dtype": list(DTYPES)},
            tags=("compute", "size-sweep"),
            axis="size",
        )
    ]


def setup_matmul(device: Device, params: dict[str, Any]) -> Case:
    import torch

    size, dtype_name = int(params["size"]), params["dtype"]
    if dtype_name not in DTYPES:
        raise SkipCase(f"unknown dtype {dtype_name}")
    dtype = getattr(torch, DTYPES[dtype_name])
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=generator).to(device=device.name, dtype=dtype)
    b = torch.randn(size, size, generator=generator).to(device=device.name, dtype=dtype)
    out = torch.empty(size, size, device=device.name, dtype=dtype)
    return Case(
        run=lambda: torch.matmul(a, b, out=out),
        flops=2.0 * size**3,
        bytes=3.0 * size * size * a.element_size(),
        items=1,
    )
