"""``ddp-train``: data parallelism — every GPU holds the whole model and a slice of the batch,
and ``DistributedDataParallel`` all-reduces the gradients during the backward pass.

The first answer to "what do several GPUs buy": with a fixed global batch (strong scaling) the
step should take 1/N of the time, with a fixed batch per GPU (weak scaling) N GPUs should do N
times the samples per second; the gap is the cost of the gradient all-reduce that the backward
pass could not hide. Items are the global batch, so samples/s and the scaling efficiency
(``T1 / (N · TN)`` strong, ``throughput_N / (N · throughput_1)`` weak) follow from the rows.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl
from benchsite.toolkit.parallel import SIZED_BY_DEVICE, WORLD_SIZES, data_parallel_case


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="ddp-train",
            description=(
                "Training steps (AdamW, bf16 autocast) of an MLP and of a transformer under "
                "DistributedDataParallel, one process per GPU (gloo processes on the CPU), over "
                "world sizes; strong (fixed global batch) and weak (fixed per-GPU batch) scaling."
                + SIZED_BY_DEVICE
            ),
            setup=setup_ddp_train,
            params={
                "model": ["mlp", "transformer"],
                "scaling": ["strong", "weak"],
                "world_size": WORLD_SIZES,
                "precision": ["bf16"],
            },
            quick={  # the launch of each case dominates quick runs: one model, two sizes
                "model": ["mlp"],
                "scaling": ["strong"],
                "world_size": [1, 2],
                "precision": ["bf16"],
            },
            tags=("training", "multi-gpu", "data-parallel"),
            devices=("cpu", "cuda"),
            axis="world_size",
            distributed=True,
        )
    ]


def setup_ddp_train(device: Device, params: dict[str, Any]) -> Case:
    return data_parallel_case(device, params, wrap_ddp)


def wrap_ddp(model: Any, device: Device, world_size: int) -> tuple[Any, dict[str, float]]:
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel(model, gradient_as_bucket_view=True), {}
