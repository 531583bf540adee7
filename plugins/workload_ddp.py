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

from benchsite.plugins._parallel import (
    WORLD_SIZES,
    autocast,
    batches,
    build_on,
    forget_setup_peak,
    group_rank,
    model_layers,
    optimizer_for,
    sizes_for,
    state_bytes,
    synthetic_batch,
    train_flops,
    training_step,
)

from benchsite import Case, Device, Workload, hookimpl


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="ddp-train",
            description=(
                "Training steps (AdamW, bf16 autocast) of an MLP and of a transformer under "
                "DistributedDataParallel, one process per GPU (gloo processes on the CPU), over "
                "world sizes; strong (fixed global batch) and weak (fixed per-GPU batch) scaling."
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
    from torch.nn import Sequential
    from torch.nn.parallel import DistributedDataParallel

    _, world_size = group_rank(params)
    model_name, sizes = str(params.get("model", "transformer")), sizes_for(device)
    precision = autocast(device, params)
    base = sizes.mlp_batch if model_name == "mlp" else sizes.lm_batch
    per_rank, global_batch = batches(params, base, world_size)
    model = Sequential(*build_on(device, lambda: model_layers(model_name, sizes)))
    ddp = DistributedDataParallel(model, gradient_as_bucket_view=True)
    optimizer = optimizer_for(ddp.parameters())
    inputs, targets = synthetic_batch(model_name, sizes, per_rank, device)
    forget_setup_peak(device)
    return Case(
        run=training_step(ddp, optimizer, inputs, targets, precision),
        flops=train_flops(model_name, sizes, global_batch),
        items=global_batch,
        metrics={"state_bytes": state_bytes(model.parameters()), "rank_batch": per_rank},
    )
