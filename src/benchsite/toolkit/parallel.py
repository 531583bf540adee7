"""What the multi-GPU workloads share: the models, their sizes per device, the batch each rank
gets, and a training step that never synchronizes the host.

The workloads run inside a ``torch.distributed`` process group that the engine has already
joined (:mod:`benchsite.measure.distributed.rank`): one process per rank, each driving its own device.
On GPUs the models are large enough that the step is real work and parallelism has something
to split (a ~0.9 B-parameter transformer whose fp32 weights, gradients and Adam state need
~15 GB per GPU under DDP); on the CPU, where the same code runs as gloo processes so CI tests
the real launch and failure paths, they are small.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchsite import Case, Device, SkipCase

__all__ = [
    "CLASSES",
    "CPU",
    "GPU",
    "PRECISIONS",
    "SIZED_BY_DEVICE",
    "WORLD_SIZES",
    "Sizes",
    "Wrap",
    "autocast",
    "batches",
    "build_on",
    "data_parallel_case",
    "forget_setup_peak",
    "group_rank",
    "loss_fn",
    "mlp_layers",
    "model_layers",
    "optimizer_for",
    "sizes_for",
    "state_bytes",
    "synthetic_batch",
    "train_flops",
    "training_step",
    "transformer_layers",
]


@dataclass(frozen=True)
class Sizes:
    """Model and batch sizes for one class of device."""

    mlp_width: int
    mlp_depth: int
    d_model: int
    heads: int
    ff: int
    layers: int
    vocab: int
    seq_len: int
    mlp_batch: int  # global batch of strong scaling = per-rank batch of weak scaling
    lm_batch: int  # the same, in sequences of ``seq_len`` tokens


GPU = Sizes(4096, 8, 2048, 16, 8192, 16, 32768, 512, 8192, 16)
CPU = Sizes(256, 4, 64, 4, 256, 4, 256, 32, 64, 8)
CLASSES = 10
# said in each multi-GPU workload's description: its rows on a GPU and on the CPU are no pair
SIZED_BY_DEVICE = (
    " Models are sized to the device (a ~0.9 B-parameter transformer on a GPU, a small one on "
    "the CPU), so a GPU row and a CPU row are not one case: read each device kind's scaling, "
    "and compare devices by throughput, not time."
)
PRECISIONS = ("fp32", "bf16")
WORLD_SIZES = [1, 2, 4, 8]


def sizes_for(device: Device) -> Sizes:
    """Small models for the CPU (gloo processes), large ones for accelerators."""
    return CPU if device.kind == "cpu" else GPU


def group_rank(params: dict[str, Any]) -> tuple[int, int]:
    """This process's rank and the group's size; fails unless the engine started the group with
    the ``world_size`` the parameters ask for."""
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("a distributed workload runs only inside a process group")
    world_size = dist.get_world_size()
    if world_size != int(params.get("world_size", 1)):
        raise RuntimeError(f"group has {world_size} ranks, parameters say {params['world_size']}")
    return dist.get_rank(), world_size


def batches(params: dict[str, Any], global_batch: int, world_size: int) -> tuple[int, int]:
    """(per-rank batch, global batch): strong scaling splits ``global_batch`` over the ranks,
    weak scaling gives every rank ``global_batch`` (so the group's batch grows with it)."""
    scaling = params.get("scaling", "strong")
    if scaling == "weak":
        return global_batch, global_batch * world_size
    if scaling != "strong":
        raise SkipCase(f"unknown scaling {scaling!r}: use strong or weak")
    if global_batch % world_size:
        raise SkipCase(f"global batch {global_batch} does not split over {world_size} ranks")
    return global_batch // world_size, global_batch


def autocast(device: Device, params: dict[str, Any]) -> Callable[[], Any]:
    """A factory of the autocast context for ``precision`` (bf16 autocast, or fp32 as is)."""
    import torch

    precision = params.get("precision", "fp32")
    if precision not in PRECISIONS:
        raise SkipCase(f"precision {precision!r} not measured here: use {' or '.join(PRECISIONS)}")
    if precision == "fp32":
        return contextlib.nullcontext
    return lambda: torch.autocast(device_type=device.kind, dtype=torch.bfloat16)


def mlp_layers(sizes: Sizes) -> list[Any]:
    """A ReLU perceptron, ``mlp_width`` wide and ``mlp_depth`` linear layers deep."""
    import torch

    layers: list[Any] = []
    for _ in range(sizes.mlp_depth - 1):
        layers += [torch.nn.Linear(sizes.mlp_width, sizes.mlp_width), torch.nn.ReLU()]
    return [*layers, torch.nn.Linear(sizes.mlp_width, CLASSES)]


def transformer_layers(sizes: Sizes) -> list[Any]:
    """A language-model-shaped stack: token embedding, pre-norm encoder layers (GELU, no
    dropout, batch first), a final norm and the vocabulary head — a list, so that pipeline
    parallelism can cut it between layers."""
    import torch

    nn = torch.nn
    blocks = [
        nn.TransformerEncoderLayer(
            sizes.d_model,
            sizes.heads,
            sizes.ff,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        for _ in range(sizes.layers)
    ]
    head = [nn.LayerNorm(sizes.d_model), nn.Linear(sizes.d_model, sizes.vocab)]
    return [nn.Embedding(sizes.vocab, sizes.d_model), *blocks, *head]


def model_layers(model: str, sizes: Sizes) -> list[Any]:
    """The layers of ``model`` (``mlp`` or ``transformer``) at ``sizes``; another name skips
    the case."""
    if model == "mlp":
        return mlp_layers(sizes)
    if model == "transformer":
        return transformer_layers(sizes)
    raise SkipCase(f"unknown model {model!r}: use mlp or transformer")


def synthetic_batch(model: str, sizes: Sizes, batch: int, device: Device) -> tuple[Any, Any]:
    """Random inputs and targets for ``batch`` samples, made on the device."""
    import torch

    if model == "mlp":
        inputs = torch.randn(batch, sizes.mlp_width, device=device.name)
        return inputs, torch.randint(0, CLASSES, (batch,), device=device.name)
    shape = (batch, sizes.seq_len)
    tokens = torch.randint(0, sizes.vocab, shape, device=device.name)
    return tokens, torch.randint(0, sizes.vocab, shape, device=device.name)


def loss_fn(outputs: Any, targets: Any) -> Any:
    """Cross-entropy over classes (MLP) or over every token (transformer), in fp32."""
    import torch

    return torch.nn.functional.cross_entropy(outputs.float().flatten(0, -2), targets.flatten())


def train_flops(model: str, sizes: Sizes, batch: int) -> float:
    """Analytic FLOPs of one training step on ``batch`` samples: three times the forward (the
    backward computes gradients of inputs and weights), matmuls only."""
    if model == "mlp":
        widths = [sizes.mlp_width] * (sizes.mlp_depth - 1) + [CLASSES]
        return 3 * sum(2.0 * batch * sizes.mlp_width * out for out in widths)
    tokens, d = batch * sizes.seq_len, sizes.d_model
    per_layer = 2.0 * tokens * (4 * d * d + 2 * d * sizes.ff) + 4.0 * tokens * sizes.seq_len * d
    return 3 * (sizes.layers * per_layer + 2.0 * tokens * d * sizes.vocab)


def optimizer_for(parameters: Any) -> Any:
    """AdamW with its multi-tensor (``foreach``) kernels, which also take FSDP's sharded
    parameters: the same optimizer for every parallelism, so only the parallelism differs."""
    import torch

    return torch.optim.AdamW(parameters, lr=1e-4, foreach=True)


def training_step(
    model: Any, optimizer: Any, inputs: Any, targets: Any, precision: Callable[[], Any]
) -> Callable[[], None]:
    """One step: zero the gradients, forward under ``precision``, loss, backward, optimizer."""

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with precision():
            outputs = model(inputs)
        loss_fn(outputs, targets).backward()
        optimizer.step()

    return step


def state_bytes(parameters: Any) -> float:
    """Bytes of training state this rank holds: each local parameter (or its FSDP shard), its
    gradient and AdamW's two moments — what sharding divides and replication does not."""
    total = 0
    for parameter in parameters:
        local = parameter.to_local() if hasattr(parameter, "to_local") else parameter
        total += local.numel() * local.element_size()
    return 4.0 * total


def forget_setup_peak(device: Device) -> None:
    """Drop the memory peak of setup (a full model built before it is sharded or split), so
    that the peak the memory collector reports is the training step's."""
    import torch

    if device.kind == "cuda":
        torch.cuda.synchronize(device.name)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device.name)


def build_on(device: Device, layers: Callable[[], list[Any]]) -> list[Any]:
    """Build the layers straight on the device (fast initialisation, no host copy), with the
    same seed on every rank so that every replica starts from the same weights."""
    import torch

    torch.manual_seed(0)
    with torch.device(device.name):
        return layers()


Wrap = Callable[[Any, Device, int], tuple[Any, dict[str, float]]]


def data_parallel_case(device: Device, params: dict[str, Any], wrap: Wrap) -> Case:
    """One training step of the ``model`` parameter's network, wrapped for data parallelism by
    ``wrap(model, device, world_size)`` → (wrapped model, extra metrics): DDP and FSDP differ
    only there. Items are the global batch, so throughput and scaling efficiency follow."""
    from torch.nn import Sequential

    _, world_size = group_rank(params)
    model_name, sizes = str(params.get("model", "transformer")), sizes_for(device)
    precision = autocast(device, params)
    base = sizes.mlp_batch if model_name == "mlp" else sizes.lm_batch
    per_rank, global_batch = batches(params, base, world_size)
    model = Sequential(*build_on(device, lambda: model_layers(model_name, sizes)))
    wrapped, extra = wrap(model, device, world_size)
    optimizer = optimizer_for(wrapped.parameters())
    inputs, targets = synthetic_batch(model_name, sizes, per_rank, device)
    forget_setup_peak(device)
    return Case(
        run=training_step(wrapped, optimizer, inputs, targets, precision),
        flops=train_flops(model_name, sizes, global_batch),
        items=global_batch,
        metrics={"state_bytes": state_bytes(wrapped.parameters()), "rank_batch": per_rank, **extra},
    )
