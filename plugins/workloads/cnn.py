"""``cnn-train`` and ``cnn-infer``: a ResNet-10-style image classifier over batch sizes.

Convolutions are where GPUs were first proven for deep learning; this pair shows by how much
they win on a realistic vision network at 224×224 (quick: smaller images), from batch 1 (a
single image at inference time) to large training batches. The variants answer practical
questions: does ``channels_last`` memory layout help here, what do bf16/fp16 autocast and TF32
buy, what does gradient checkpointing save in memory and cost in time (``cnn-train``), and what
magnitude pruning does *not* save on dense kernels. FLOPs are counted with ``FlopCounterMode``;
items are images.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl
from benchsite.toolkit.cases import CNN_IMAGE, cnn_spec
from benchsite.toolkit.steps import infer_case, train_case

IMAGE = CNN_IMAGE
QUICK_IMAGE = 32
TECHNIQUE_BATCH = 32
MIXED = ["tf32", "bf16", "fp16"]


def _grid(batches: list[int], image: int, batch: int, train: bool) -> list[dict[str, list[Any]]]:
    """A batch sweep in fp32, then each technique on its own at one batch."""
    base = {"image_size": [image], "batch": [batch]}
    grid = [
        {"image_size": [image], "batch": batches, "precision": ["fp32"]},
        {**base, "precision": MIXED},
        {**base, "precision": ["fp32"], "channels_last": [True]},
        {**base, "precision": ["fp32"], "sparsity": [0.9]},
    ]
    if train:
        grid.append({**base, "precision": ["fp32"], "checkpointing": [True]})
    return grid


def _quick(train: bool) -> list[dict[str, list[Any]]]:
    # at 32×32 the last stage is 1×1: batch norm needs two images to train on
    # one technique per workload keeps the quick profile within minutes on two cores
    base = {"image_size": [QUICK_IMAGE], "batch": [8], "precision": ["fp32"]}
    technique = {"checkpointing": [True]} if train else {"sparsity": [0.9]}
    return [
        {"image_size": [QUICK_IMAGE], "batch": [2 if train else 1, 8], "precision": ["fp32"]},
        {**base, **technique},
    ]


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="cnn-train",
            description=(
                "One AdamW training step of a ResNet-10-style CNN on 3×224×224 images "
                "(quick: 32×32); channels_last, precision, checkpointing and pruning variants."
            ),
            setup=setup_cnn_train,
            params=_grid([1, 8, 32, 128], IMAGE, TECHNIQUE_BATCH, train=True),
            quick=_quick(train=True),
            tags=("training", "vision", "batch-sweep"),
            axis="batch",
        ),
        Workload(
            name="cnn-infer",
            description=(
                "One forward pass of the same CNN in eval() under inference_mode; "
                "channels_last, precision and pruning variants."
            ),
            setup=setup_cnn_infer,
            params=_grid([1, 8, 32, 128, 256], IMAGE, TECHNIQUE_BATCH, train=False),
            quick=_quick(train=False),
            tags=("inference", "vision", "batch-sweep"),
            axis="batch",
        ),
    ]


def setup_cnn_train(device: Device, params: dict[str, Any]) -> Case:
    return train_case(device, params, cnn_spec(params))


def setup_cnn_infer(device: Device, params: dict[str, Any]) -> Case:
    return infer_case(device, params, cnn_spec(params))
