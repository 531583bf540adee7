"""``transformer-train`` and ``transformer-infer``: a 4-layer encoder (``nn.TransformerEncoder``,
width 512, 8 heads) over batch sizes and sequence lengths.

Transformers are most of today's deep learning. The batch sweep (at 128 tokens) shows how a GPU
fills up; the sequence-length sweep (at batch 8) shows attention's quadratic cost arriving; the
variants show what bf16/fp16 autocast and TF32 buy, what gradient checkpointing trades
(``transformer-train``: memory saved against time paid) and, in the full profile, what
``torch.compile`` gives at steady state against what it costs to compile (``compile_s``).
FLOPs are counted with ``FlopCounterMode``; items are sequences.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl
from benchsite.toolkit.models import CLASSES, TRANSFORMER, build_transformer
from benchsite.toolkit.steps import ModelSpec, infer_case, train_case

BATCHES = [1, 8, 32]
SEQ_LENS = [32, 256, 512]
BATCH, SEQ = 8, 512  # where the techniques are compared
MIXED = ["tf32", "bf16", "fp16"]


def _grid(technique: dict[str, list[Any]]) -> list[dict[str, list[Any]]]:
    at = {"batch": [BATCH], "seq_len": [SEQ]}
    return [
        {"batch": BATCHES, "seq_len": [128], "precision": ["fp32"]},
        {"batch": [BATCH], "seq_len": SEQ_LENS, "precision": ["fp32"]},
        {**at, "precision": MIXED},
        {**at, "precision": ["fp32"], **technique},
    ]


@hookimpl
def register_workloads() -> list[Workload]:
    quick = {"batch": [1, 4], "seq_len": [32], "precision": ["fp32"]}
    return [
        Workload(
            name="transformer-train",
            description=(
                "One AdamW training step of a 4-layer, 512-wide TransformerEncoder with a "
                "per-token classifier; batch and sequence-length sweeps, precision and "
                "checkpointing variants."
            ),
            setup=setup_transformer_train,
            params=_grid({"checkpointing": [True]}),
            quick=[quick, {"batch": [4], "seq_len": [32], "checkpointing": [True]}],
            tags=("training", "transformer", "batch-sweep"),
            axis="batch",
        ),
        Workload(
            name="transformer-infer",
            description=(
                "One forward pass of the same encoder in eval() under inference_mode; batch and "
                "sequence-length sweeps, precision and torch.compile (full profile) variants."
            ),
            setup=setup_transformer_infer,
            params=_grid({"compile": [True]}),
            quick=quick,
            tags=("inference", "transformer", "batch-sweep"),
            axis="batch",
        ),
    ]


def transformer_spec(params: dict[str, Any]) -> ModelSpec:
    """Random token embeddings and per-token class targets."""
    import torch

    batch, seq = int(params["batch"]), int(params["seq_len"])
    checkpointing = bool(params.get("checkpointing", False))

    def loss(logits: Any, targets: Any) -> Any:
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())

    return ModelSpec(
        build=lambda: build_transformer(checkpointing=checkpointing),
        reference=build_transformer,
        inputs=lambda: (
            torch.randn(batch, seq, TRANSFORMER["d_model"]),
            torch.randint(0, CLASSES, (batch, seq)),
        ),
        loss=loss,
        items=batch,
    )


def setup_transformer_train(device: Device, params: dict[str, Any]) -> Case:
    return train_case(device, params, transformer_spec(params))


def setup_transformer_infer(device: Device, params: dict[str, Any]) -> Case:
    return infer_case(device, params, transformer_spec(params))
