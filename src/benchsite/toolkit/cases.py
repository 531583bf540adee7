"""Ready-made cases and model specs that several workloads measure: the square matrix product
(:func:`matmul_case`), and the MLP's and the CNN's :class:`~benchsite.toolkit.steps.ModelSpec`
(:func:`mlp_spec`, :func:`cnn_spec`) for :func:`~benchsite.toolkit.steps.train_case` and
:func:`~benchsite.toolkit.steps.infer_case`. A workload that measures one of them in another
setting (a pinned thread count, the largest batch that fits) builds it from here, never from
another workload's module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchsite import Case, Device, SkipCase
from benchsite.toolkit.models import CLASSES, CNN_CLASSES, MLP_WIDTH, build_cnn, build_mlp
from benchsite.toolkit.precision import (
    apply_tf32,
    check_emulated_bf16,
    check_precision,
    tensor_dtype,
)
from benchsite.toolkit.steps import ModelSpec

__all__ = ["CNN_IMAGE", "cnn_spec", "matmul_case", "mlp_spec"]

CNN_IMAGE = 224  # the CNN's image side unless ``image_size`` says otherwise


def matmul_case(device: Device, params: dict[str, Any]) -> Case:
    """C = A @ B of two seeded ``size``² matrices at ``precision`` (default fp32), 2·n³ FLOPs a
    call; with ``include_transfer``, A and B copied from pageable host memory to the device and
    C back in every call (skipped on the CPU, whose data already lives there)."""
    import torch

    size, precision = int(params["size"]), params.get("precision", "fp32")
    include_transfer = bool(params.get("include_transfer", False))
    check_precision(device, precision)
    check_emulated_bf16(device, precision, 2.0 * size**3)
    if include_transfer and device.kind == "cpu":
        raise SkipCase("no transfer on the CPU: its data already lives in host memory")
    # seeded inputs made where they will live: on the host for a transfer, else on the device
    home = "cpu" if include_transfer else device.name
    generator = torch.Generator(home).manual_seed(0)
    a, b = (
        torch.randn(size, size, generator=generator, dtype=tensor_dtype(precision), device=home)
        for _ in range(2)
    )
    restore_tf32 = apply_tf32(device, precision)
    run = _with_transfer(device, a, b) if include_transfer else _on_device(a, b)
    return Case(
        run=run,
        flops=2.0 * size**3,
        bytes=3.0 * size * size * a.element_size(),
        items=1,
        teardown=restore_tf32,
    )


def _on_device(a: Any, b: Any) -> Callable[[], Any]:
    """C = A @ B into a preallocated output: nothing but the product is timed."""
    import torch

    out = torch.empty_like(a)
    return lambda: torch.matmul(a, b, out=out)


def _with_transfer(device: Device, a_host: Any, b_host: Any) -> Callable[[], Any]:
    """Copy A and B from pageable host memory, multiply, copy C back: a naive caller's call."""
    import torch

    def call() -> Any:
        a = a_host.to(device.name)
        b = b_host.to(device.name)
        return torch.matmul(a, b).cpu()

    return call


def mlp_spec(batch: int, flops: float) -> ModelSpec:
    """The MLP (:func:`~benchsite.toolkit.models.build_mlp`) on ``batch`` random inputs and
    class targets (unused by inference), with ``flops`` per call (an analytic count:
    :func:`~benchsite.toolkit.models.mlp_train_flops` or ``mlp_forward_flops``)."""
    import torch

    return ModelSpec(
        build=build_mlp,
        inputs=lambda: (torch.randn(batch, MLP_WIDTH), torch.randint(0, CLASSES, (batch,))),
        loss=torch.nn.functional.cross_entropy,
        items=batch,
        flops=flops,
    )


def cnn_spec(params: dict[str, Any]) -> ModelSpec:
    """The CNN (:func:`~benchsite.toolkit.models.build_cnn`) on ``batch`` random images of
    ``image_size`` (default :data:`CNN_IMAGE`) and random class targets, with
    ``checkpointing`` and ``channels_last`` as the parameters ask."""
    import torch

    batch, image = int(params["batch"]), int(params.get("image_size", CNN_IMAGE))
    checkpointing = bool(params.get("checkpointing", False))
    return ModelSpec(
        build=lambda: build_cnn(checkpointing=checkpointing),
        reference=build_cnn,
        inputs=lambda: (
            torch.randn(batch, 3, image, image),
            torch.randint(0, CNN_CLASSES, (batch,)),
        ),
        loss=torch.nn.functional.cross_entropy,
        items=batch,
        channels_last=bool(params.get("channels_last", False)),
    )
