"""``fsdp-train``: fully sharded data parallelism — the transformer's weights, gradients and
optimizer state are split over the GPUs and each layer's weights are gathered only while it
computes.

The memory answer to "my model does not fit on one GPU": each rank holds about 1/N of the
training state (metric ``state_bytes``) and its peak memory (``memory.gpu_peak_allocated_bytes``,
per rank in ``ranks``, the largest in ``metrics``) can be set against ``ddp-train``'s with the
same parameters, as can the time the extra all-gathers cost. Uses FSDP2 (``fully_shard``, one
unit per encoder layer plus the root) where PyTorch has it, else FSDP1; metric ``fsdp_version``.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl
from benchsite.toolkit.parallel import SIZED_BY_DEVICE, WORLD_SIZES, data_parallel_case


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="fsdp-train",
            description=(
                "Training steps (AdamW, bf16 autocast) of the transformer with its weights, "
                "gradients and optimizer state sharded over the ranks (FSDP2 fully_shard per "
                "layer), over world sizes; compare per-GPU memory and time with ddp-train."
                + SIZED_BY_DEVICE
            ),
            setup=setup_fsdp_train,
            params={
                "model": ["transformer"],
                "scaling": ["strong", "weak"],
                "world_size": WORLD_SIZES,
                "precision": ["bf16"],
            },
            quick={  # compared with ddp-train at the same world size; one launch in quick runs
                "model": ["transformer"],
                "scaling": ["strong"],
                "world_size": [2],
                "precision": ["bf16"],
            },
            tags=("training", "multi-gpu", "sharded", "memory"),
            devices=("cpu", "cuda"),
            axis="world_size",
            distributed=True,
        )
    ]


def setup_fsdp_train(device: Device, params: dict[str, Any]) -> Case:
    return data_parallel_case(device, params, wrap_fsdp)


def wrap_fsdp(model: Any, device: Device, world_size: int) -> tuple[Any, dict[str, float]]:
    sharded, version = shard(model, device, world_size)
    return sharded, {"fsdp_version": version}


def shard(model: Any, device: Device, world_size: int) -> tuple[Any, int]:
    """Shard every encoder layer, then the root (which gathers the rest): FSDP2 where available
    (PyTorch ≥ 2.6, or 2.4-2.5 under its old name), else FSDP1. The mesh is this device kind's
    (FSDP2 would default to CUDA, wrong for the CPU's gloo group on a GPU machine)."""
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        try:
            from torch.distributed._composable.fsdp import fully_shard
        except ImportError:
            return _shard_fsdp1(model, device), 1
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh(device.kind, (world_size,))
    for layer in model:
        if isinstance(layer, _encoder_layer_type()):
            fully_shard(layer, mesh=mesh)
    return fully_shard(model, mesh=mesh), 2


def _shard_fsdp1(model: Any, device: Device) -> Any:
    import torch
    from torch.distributed.fsdp import FullyShardedDataParallel
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    return FullyShardedDataParallel(
        model,
        auto_wrap_policy=ModuleWrapPolicy({_encoder_layer_type()}),
        device_id=torch.device(device.name) if device.kind == "cuda" else None,
    )


def _encoder_layer_type() -> type:
    import torch

    return torch.nn.TransformerEncoderLayer
