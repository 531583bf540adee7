"""``resnet50-*``, ``vit-b16-*`` and ``bert-base-*``: the models the published GPU benchmarks
speak of (MLPerf, Lambda's), in their own units — images/s and sequences/s.

Built offline by ``transformers`` from each model's configuration with random weights
(:mod:`benchsite.toolkit.architectures`; the extra ``benchsite[models]``); throughput does not
depend on trained weights. Each has an inference workload (``eval()``, ``inference_mode``) and
a training one (an AdamW step on cross-entropy against random labels): fp32 over the batch,
the other precisions at one batch, and ``torch.compile`` in bf16 in the full profile (on GPUs:
compiling these models for the CPU takes minutes a case, so it is skipped there, saying so). The quick profile
measures one batch of a tiny model of each kind (``scale=tiny``: the same layers, far fewer
and narrower, on small images and short sequences) so that it runs in seconds on two cores. Without
``transformers`` the workloads are listed as unavailable with the command that installs it,
and each records one skipped case saying so. FLOPs are counted with ``FlopCounterMode``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl
from benchsite.toolkit import architectures
from benchsite.toolkit.modules import ModuleSpec, module_case
from benchsite.units import items_unit

MIXED = ["tf32", "bf16", "fp16"]
CPU_MAX_TRAIN_BATCH = 32


@dataclass(frozen=True)
class Architecture:
    """One model: how to build it and its inputs from a case's parameters."""

    name: str
    what: str
    item: str  # what one of a case's items is (Workload.item): its throughput is <item>s/s
    build: Callable[[dict[str, Any]], Any]
    inputs: Callable[[dict[str, Any], int], tuple[Any, ...]]
    classes: int
    full: dict[str, list[Any]]
    quick: dict[str, list[Any]]


def _images(params: dict[str, Any], batch: int) -> tuple[Any, ...]:
    import torch

    size = int(params["image_size"])
    return (torch.randn(batch, 3, size, size),)


def _tokens(params: dict[str, Any], batch: int) -> tuple[Any, ...]:
    import torch

    seq = int(params["seq_len"])
    ids = torch.randint(0, 30522, (batch, seq))
    return ids, torch.ones(batch, seq, dtype=torch.long)


# the quick profile's "tiny" scale keeps each architecture's kind of layers and shrinks them
TINY_RESNET = {"depths": [1, 1, 1, 1], "hidden_sizes": [32, 64, 128, 256], "embedding_size": 16}
TINY_TRANSFORMER = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 256,
}


def _scaled(scale: str, tiny: dict[str, Any]) -> dict[str, Any]:
    return tiny if scale == "tiny" else {}


ARCHITECTURES = (
    Architecture(
        name="resnet50",
        what="ResNet-50 on 3×224×224 images (quick: a tiny ResNet on 32×32)",
        item="image",
        build=lambda p: architectures.resnet50(**_scaled(p["scale"], TINY_RESNET)),
        inputs=_images,
        classes=1000,
        full={"scale": ["real"], "image_size": [224]},
        quick={"scale": ["tiny"], "image_size": [32]},
    ),
    Architecture(
        name="vit-b16",
        what="ViT-B/16 on 224×224 images (quick: a tiny ViT on 32×32)",
        item="image",
        build=lambda p: architectures.vit_b16(
            image_size=int(p["image_size"]), **_scaled(p["scale"], TINY_TRANSFORMER)
        ),
        inputs=_images,
        classes=1000,
        full={"scale": ["real"], "image_size": [224]},
        quick={"scale": ["tiny"], "image_size": [32]},
    ),
    Architecture(
        name="bert-base",
        what="BERT-base sequence classification of 128 tokens (quick: a tiny BERT, 16 tokens)",
        item="sequence",
        build=lambda p: architectures.bert_base(**_scaled(p["scale"], TINY_TRANSFORMER)),
        inputs=_tokens,
        classes=2,
        full={"scale": ["real"], "seq_len": [128]},
        quick={"scale": ["tiny"], "seq_len": [16]},
    ),
)
BATCHES = [1, 8, 32, 128]


@hookimpl
def register_workloads() -> list[Workload]:
    return [_workload(arch, train) for arch in ARCHITECTURES for train in (False, True)]


def _workload(arch: Architecture, train: bool) -> Workload:
    mode = "train" if train else "infer"
    what = "One AdamW training step of" if train else "One forward pass of"
    description = f"{what} {arch.what}; {items_unit(arch.item)} (random weights, offline)."
    params, quick = _grid(arch.full), [{**arch.quick, "batch": [2], "precision": ["fp32"]}]
    if not architectures.available():
        description = f"unavailable: {architectures.MISSING}. {description}"
        params = quick
    return Workload(
        name=f"{arch.name}-{mode}",
        description=description,
        setup=lambda device, p: setup_architecture(arch, device, p, train),
        params=params,
        quick=quick,
        tags=(
            "training" if train else "inference",
            "well-known-model",
            "large-model",
            "batch-sweep",
        ),
        axis="batch",
        item=arch.item,
    )


def _grid(shape: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """fp32 over the batches; the other precisions and compile (bf16, GPU only) at batch 32."""
    return [
        {**shape, "batch": BATCHES, "precision": ["fp32"]},
        {**shape, "batch": [32], "precision": MIXED},
        {**shape, "batch": [32], "precision": ["bf16"], "compile": [True]},
    ]


def setup_architecture(
    arch: Architecture, device: Device, params: dict[str, Any], train: bool
) -> Case:
    import torch

    architectures.require()
    if train and device.kind == "cpu" and int(params["batch"]) > CPU_MAX_TRAIN_BATCH:
        raise SkipCase(
            f"{arch.name} training on the CPU measured up to batch {CPU_MAX_TRAIN_BATCH}: a "
            "step at this batch takes a minute there"
        )
    if params.get("compile") and device.kind == "cpu":
        raise SkipCase(
            f"torch.compile of {arch.name} measured on GPUs only: compiling it for the CPU takes "
            "minutes a case"
        )
    spec = ModuleSpec(
        name=arch.name,
        factory=lambda: arch.build(params),
        inputs=lambda batch: arch.inputs(params, batch),
        targets=lambda batch: torch.randint(0, arch.classes, (batch,)),
        loss=lambda output, targets: torch.nn.functional.cross_entropy(output.logits, targets),
    )
    return module_case(device, params, spec, train)
