"""``matmul``: a square matrix product, C = A @ B, over sizes and precisions.

The building block of every dense layer. Its TFLOP/s is the device's practical compute ceiling
(bf16 and TF32 on tensor cores, strict fp32 on the CUDA cores or the CPU's vector units), and
the size at which the GPU overtakes the CPU is the first answer to "from which size on does the
GPU pay?". With ``include_transfer`` every call also copies A and B from ordinary (pageable)
host memory to the GPU and C back: what a caller whose data lives on the host really pays, and
why the GPU's crossover moves to larger sizes for such callers. Declares 2·n³ FLOPs per call.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl
from benchsite.toolkit.cases import matmul_case

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
    return matmul_case(device, params)
