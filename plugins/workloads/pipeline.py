"""``pipeline-train``: pipeline (model) parallelism — the transformer is cut by layers into one
stage per GPU, and each step's batch flows through the stages as micro-batches (GPipe schedule
of ``torch.distributed.pipelining``: all forwards, then all backwards).

The other answer to "it does not fit": each GPU holds only its stage's layers and their
training state (metric ``state_bytes``), at the price of the pipeline bubble — with S stages and
M micro-batches about (S − 1) / (M + S − 1) of the step idles — and of sending activations
between GPUs. World size 1 is the same model and micro-batches on one GPU, the baseline. The
global batch is fixed (strong scaling); items are samples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl
from benchsite.toolkit.parallel import (
    SIZED_BY_DEVICE,
    WORLD_SIZES,
    autocast,
    build_on,
    forget_setup_peak,
    group_rank,
    loss_fn,
    optimizer_for,
    sizes_for,
    state_bytes,
    synthetic_batch,
    train_flops,
    transformer_layers,
)


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="pipeline-train",
            description=(
                "Training steps (AdamW, bf16 autocast) of the transformer cut by layers into one "
                "pipeline stage per rank, micro-batches on a GPipe schedule "
                "(torch.distributed.pipelining), over world sizes; world size 1 is one GPU."
                + SIZED_BY_DEVICE
            ),
            setup=setup_pipeline_train,
            params={"model": ["transformer"], "world_size": WORLD_SIZES, "precision": ["bf16"]},
            quick={"model": ["transformer"], "world_size": [1, 2], "precision": ["bf16"]},
            tags=("training", "multi-gpu", "model-parallel", "memory"),
            devices=("cpu", "cuda"),
            axis="world_size",
            distributed=True,
        )
    ]


def microbatches(global_batch: int, world_size: int) -> int:
    """At least 4 micro-batches, and two per stage, so the bubble stays small."""
    return min(global_batch, max(4, 2 * world_size))


def stage_layers(layers: list[Any], rank: int, world_size: int) -> list[Any]:
    """This rank's contiguous share of the encoder layers; the first stage also holds the
    embedding, the last the final norm and the head."""
    blocks = layers[1:-2]
    if len(blocks) < world_size:
        raise SkipCase(f"{len(blocks)} layers cannot be cut into {world_size} pipeline stages")
    start, stop = rank * len(blocks) // world_size, (rank + 1) * len(blocks) // world_size
    head = layers[:1] if rank == 0 else []
    tail = layers[-2:] if rank == world_size - 1 else []
    return [*head, *blocks[start:stop], *tail]


def setup_pipeline_train(device: Device, params: dict[str, Any]) -> Case:
    import torch
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe

    if params.get("model", "transformer") != "transformer":
        raise SkipCase("pipeline-train cuts the transformer by layers: use model=transformer")
    rank, world_size = group_rank(params)
    sizes, precision = sizes_for(device), autocast(device, params)
    global_batch = sizes.lm_batch
    chunks = microbatches(global_batch, world_size)
    layers = build_on(device, lambda: transformer_layers(sizes))
    stage_module = torch.nn.Sequential(*stage_layers(layers, rank, world_size))
    del layers  # the other stages' layers are freed
    stage = PipelineStage(stage_module, rank, world_size, torch.device(device.name))
    schedule = ScheduleGPipe(stage, n_microbatches=chunks, loss_fn=loss_fn)
    optimizer = optimizer_for(stage_module.parameters())
    inputs, targets = synthetic_batch("transformer", sizes, global_batch, device)
    forget_setup_peak(device)
    return Case(
        run=_step(schedule, optimizer, rank, world_size, inputs, targets, precision),
        flops=train_flops("transformer", sizes, global_batch),
        items=global_batch,
        metrics={"state_bytes": state_bytes(stage_module.parameters()), "microbatches": chunks},
    )


def _step(
    schedule: Any,
    optimizer: Any,
    rank: int,
    world_size: int,
    inputs: Any,
    targets: Any,
    precision: Callable[[], Any],
) -> Callable[[], None]:
    """One step: the first stage feeds the batch in, the last computes the loss."""
    args = (inputs,) if rank == 0 else ()
    kwargs = {"target": targets} if rank == world_size - 1 else {}

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with precision():
            schedule.step(*args, **kwargs)
        optimizer.step()

    return step
