"""``lstm-infer``: a 2-layer LSTM classifying sequences of 64 steps, batch 1 and larger.

A recurrent model runs its time steps one after another, each a small matrix product: at batch
1 the GPU mostly waits on kernel launches, and this is where the CPU is expected to hold up or
win (streaming inference, one request at a time). Larger batches show where the GPU pulls away
again. FLOPs are analytic (four gates per step and layer), the same on every device whether
cuDNN fuses the layer or not; items are sequences.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl
from benchsite.toolkit.models import CLASSES, LSTM, build_lstm, lstm_forward_flops
from benchsite.toolkit.steps import ModelSpec, infer_case

SEQ_LEN = 64


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="lstm-infer",
            description=(
                "Forward pass of a 2-layer, 512-hidden LSTM over 64 steps in eval() under "
                "inference_mode; batch 1 (streaming) to large batches."
            ),
            setup=setup_lstm_infer,
            params=[
                {"batch": [1, 4, 16, 64, 256], "precision": ["fp32"]},
                {"batch": [1, 64], "precision": ["bf16"]},
            ],
            quick={"batch": [1, 16], "precision": ["fp32"]},
            tags=("inference", "sequential", "batch-sweep"),
            axis="batch",
        )
    ]


def setup_lstm_infer(device: Device, params: dict[str, Any]) -> Case:
    import torch

    batch = int(params["batch"])
    spec = ModelSpec(
        build=build_lstm,
        inputs=lambda: (
            torch.randn(batch, SEQ_LEN, LSTM["input_size"]),
            torch.randint(0, CLASSES, (batch,)),
        ),
        loss=torch.nn.functional.cross_entropy,
        items=batch,
        flops=lstm_forward_flops(batch, SEQ_LEN),
    )
    return infer_case(device, params, spec)
