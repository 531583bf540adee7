"""Turning a model into a measured case: a full training step or an inference call, set up the
way an expert runs it on the device.

Shared by every model workload so that they all obey the same rules: the model and its data
live on the device before timing starts; a step has no host synchronization (no ``.item()``,
a fused optimizer, and for fp16 a ``GradScaler`` whose check stays on the device); inference
runs in ``eval()`` under ``torch.inference_mode()``; precision is applied per
:mod:`benchsite.toolkit.precision`; optional magnitude pruning and ``torch.compile`` (its
compile-plus-first-call time stored as the case metric ``compile_s``, apart from the steady
state). FLOPs are counted once, on the ``meta`` device with ``FlopCounterMode`` (free, and the
same count on every device), unless the workload gives an analytic count.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchsite import Case, Device, SkipCase
from benchsite.toolkit.precision import (
    apply_tf32,
    autocast,
    check_emulated_bf16,
    check_precision,
)

__all__ = [
    "ModelSpec",
    "compile_model",
    "count_flops",
    "first_call_s",
    "infer_call",
    "infer_case",
    "make_optimizer",
    "place",
    "prune_weights",
    "train_case",
    "train_step",
]


@dataclass(frozen=True)
class ModelSpec:
    """A model workload's case: how to build the model and its data, and what one call is.

    ``build`` and ``inputs`` create the model and ``(inputs, targets)`` on the current default
    device. ``reference`` builds the model whose FLOPs count (default ``build``; differs when
    checkpointing recomputes work that is not useful work). ``flops`` overrides the count.
    """

    build: Callable[[], Any]
    inputs: Callable[[], tuple[Any, Any]]
    loss: Callable[[Any, Any], Any]
    items: int
    reference: Callable[[], Any] | None = None
    channels_last: bool = False
    flops: float | None = None


def train_case(device: Device, params: dict[str, Any], spec: ModelSpec) -> Case:
    """One training step (zero grads, forward, loss, backward, optimizer step) as a case."""
    return _model_case(device, params, spec, train=True)


def infer_case(device: Device, params: dict[str, Any], spec: ModelSpec) -> Case:
    """One forward pass in ``eval()`` under ``torch.inference_mode()`` as a case."""
    return _model_case(device, params, spec, train=False)


def _model_case(device: Device, params: dict[str, Any], spec: ModelSpec, train: bool) -> Case:
    precision = params.get("precision", "fp32")
    check_precision(device, precision)
    flops = spec.flops if spec.flops is not None else count_flops(spec, train)
    check_emulated_bf16(device, precision, flops)
    restore_tf32 = apply_tf32(device, precision)
    try:
        model, inputs, targets = place(device, spec)
        metrics = prune_weights(model, float(params.get("sparsity", 0.0)), permanent=not train)
        compiled = bool(params.get("compile", False))
        forward = compile_model(device, model) if compiled else model
        if train:
            run = train_step(device, precision, model, forward, spec.loss, inputs, targets)
        else:
            run = infer_call(device, precision, model, forward, inputs)
        if compiled:
            metrics["compile_s"] = first_call_s(device, run)
    except BaseException:
        restore_tf32()
        raise
    return Case(
        run=run,
        flops=flops,
        items=spec.items,
        metrics=metrics,
        teardown=_teardown(restore_tf32, compiled),
    )


def place(device: Device, spec: ModelSpec) -> tuple[Any, Any, Any]:
    """Build the model and its data directly on the device (seeded: every host, same numbers)."""
    import torch

    torch.manual_seed(0)
    with torch.device(device.name):
        model = spec.build()
        inputs, targets = spec.inputs()
    if spec.channels_last:
        model = model.to(memory_format=torch.channels_last)
        inputs = inputs.contiguous(memory_format=torch.channels_last)
    return model, inputs, targets


def make_optimizer(model: Any, device: Device) -> Any:
    """AdamW, fused (one kernel for every parameter) where this device and build support it."""
    import torch

    try:
        return torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    except (RuntimeError, ValueError):
        return torch.optim.AdamW(model.parameters(), lr=1e-4)


def train_step(
    device: Device,
    precision: str,
    model: Any,
    forward: Callable[[Any], Any],
    loss_fn: Callable[[Any, Any], Any],
    inputs: Any,
    targets: Any,
) -> Callable[[], None]:
    """A training step with no host synchronization in it."""
    import torch

    model.train()
    optimizer = make_optimizer(model, device)
    scaler = torch.amp.GradScaler(device.kind) if precision == "fp16" else None

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with autocast(device, precision):
            loss = loss_fn(forward(inputs), targets)
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:  # with a fused optimizer the inf/NaN check stays on the device
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

    return step


def infer_call(
    device: Device, precision: str, model: Any, forward: Callable[[Any], Any], inputs: Any
) -> Callable[[], None]:
    """One inference call: ``eval()`` mode, ``inference_mode``, autocast where asked."""
    import torch

    model.eval()

    def call() -> None:
        with torch.inference_mode(), autocast(device, precision):
            forward(inputs)

    return call


def prune_weights(model: Any, amount: float, permanent: bool) -> dict[str, float]:
    """Magnitude-prune ``amount`` of every linear and convolution weight (``l1_unstructured``).

    ``permanent`` (inference) bakes the zeros into the dense weights; otherwise (training) the
    mask stays and is re-applied on every forward, as when fine-tuning a pruned network. Either
    way the kernels stay dense: the zeros are stored and multiplied like any other number.
    Returns the metric ``weight_sparsity``, the fraction of those weights that are zero.
    """
    import torch
    from torch.nn.utils import prune

    if not 0.0 <= amount < 1.0:
        raise SkipCase(f"sparsity must be in [0, 1), got {amount}")
    if amount == 0.0:
        return {}
    layers = [m for m in model.modules() if isinstance(m, torch.nn.Linear | torch.nn.Conv2d)]
    for layer in layers:
        prune.l1_unstructured(layer, "weight", amount=amount)
        if permanent:
            prune.remove(layer, "weight")
    zeros = sum(int((layer.weight == 0).sum()) for layer in layers)
    total = sum(layer.weight.numel() for layer in layers)
    return {"weight_sparsity": zeros / total}


def compile_model(device: Device, model: Any) -> Any:
    """``torch.compile`` with default settings (what a user who tries it gets). On the CPU the
    generated code is C++, so a compiler must exist; without one the case is skipped."""
    import shutil

    import torch

    if device.kind == "cpu" and not any(shutil.which(cc) for cc in ("g++", "c++", "clang++")):
        raise SkipCase("torch.compile on the CPU needs a C++ compiler (g++): none found")
    return torch.compile(model)


def first_call_s(device: Device, run: Callable[[], Any]) -> float:
    """Seconds of the first call, device work included (for a compiled model: the compile)."""
    device.synchronize()
    started = time.perf_counter()
    run()
    device.synchronize()
    return time.perf_counter() - started


def count_flops(spec: ModelSpec, train: bool) -> float:
    """FLOPs of one call, counted by ``FlopCounterMode`` on the ``meta`` device: no memory, no
    time, and device-independent (inference fast paths and fused attention kernels that the
    counter cannot see on a real device are counted through their reference decomposition)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"):
        model = (spec.reference or spec.build)()
        inputs, targets = spec.inputs()
    model.train(train)
    with FlopCounterMode(display=False) as counter:
        if train:
            spec.loss(model(inputs), targets).backward()
        else:
            with torch.no_grad():
                model(inputs)
    return float(counter.get_total_flops())


def _teardown(restore_tf32: Callable[[], None], compiled: bool) -> Callable[[], None]:
    def teardown() -> None:
        restore_tf32()
        if compiled:
            import torch

            torch._dynamo.reset()  # drop compiled graphs: the worker lives on to the next case

    return teardown
