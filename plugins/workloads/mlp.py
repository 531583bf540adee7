"""``mlp-train`` and ``mlp-infer``: a 4-layer, 1024-wide ReLU perceptron over batch sizes.

The smallest realistic model. Its batch sweep shows where a GPU's parallelism starts to pay:
at batch 1 the step is a handful of small kernel launches and the CPU often wins; by a few
hundred samples the GPU is usually far ahead. The technique variants at one batch answer what
mixed precision, ``torch.compile`` and magnitude pruning buy on this model. FLOPs are analytic
(see :func:`benchsite.toolkit.models.mlp_train_flops`), items are samples.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl
from benchsite.toolkit.cases import mlp_spec
from benchsite.toolkit.models import mlp_forward_flops, mlp_train_flops
from benchsite.toolkit.steps import infer_case, train_case

BATCHES = [1, 16, 64, 256, 1024, 4096]
TECHNIQUE_BATCH = 256
MIXED = ["tf32", "bf16", "fp16"]


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="mlp-train",
            description=(
                "One AdamW training step (forward, cross-entropy, backward, optimizer) of a "
                "4-layer, 1024-wide ReLU MLP; samples/s over the batch size."
            ),
            setup=setup_mlp_train,
            params=[
                {"batch": BATCHES, "precision": ["fp32"]},
                {"batch": [TECHNIQUE_BATCH], "precision": MIXED},
                {"batch": [TECHNIQUE_BATCH], "precision": ["fp32"], "compile": [True]},
            ],
            quick=[
                {"batch": [1, 16, 128], "precision": ["fp32"]},
                {"batch": [16], "precision": ["bf16"]},
            ],
            tags=("training", "batch-sweep"),
            axis="batch",
        ),
        Workload(
            name="mlp-infer",
            description=(
                "One forward pass of the same MLP in eval() under inference_mode; samples/s "
                "over the batch size, with precision and magnitude-pruning variants."
            ),
            setup=setup_mlp_infer,
            params=[
                {"batch": BATCHES, "precision": ["fp32"], "sparsity": [0.0]},
                {"batch": [TECHNIQUE_BATCH], "precision": MIXED, "sparsity": [0.0]},
                {"batch": [TECHNIQUE_BATCH], "precision": ["fp32"], "sparsity": [0.9]},
            ],
            quick=[
                {"batch": [1, 64, 512], "precision": ["fp32"], "sparsity": [0.0]},
                {"batch": [64], "precision": ["bf16"], "sparsity": [0.0]},
                {"batch": [64], "precision": ["fp32"], "sparsity": [0.9]},
            ],
            tags=("inference", "batch-sweep"),
            axis="batch",
        ),
    ]


def setup_mlp_train(device: Device, params: dict[str, Any]) -> Case:
    batch = int(params["batch"])
    return train_case(device, params, mlp_spec(batch, mlp_train_flops(batch)))


def setup_mlp_infer(device: Device, params: dict[str, Any]) -> Case:
    batch = int(params["batch"])
    return infer_case(device, params, mlp_spec(batch, mlp_forward_flops(batch)))
