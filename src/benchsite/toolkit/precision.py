"""The `precision` parameter shared by the built-in workloads, applied the way an expert would.

``fp32`` is strict IEEE float32 (TF32 switched off, also for cuDNN convolutions, whose PyTorch
default is TF32 on); ``tf32`` lets float32 matmuls and convolutions use TF32 tensor cores;
``bf16`` and ``fp16`` are the tensor dtype for ``matmul`` and autocast for models. TF32 and fp16
are GPU-only here: on the CPU the case is skipped with a reason rather than measured in a mode
nobody would use. The TF32 switches are process-wide, and the worker process is reused across
cases, so :func:`apply_tf32` returns the function that restores them (call it in teardown).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from benchsite import Device, SkipCase

__all__ = [
    "EMULATED_BF16_MAX_FLOPS",
    "GPU_ONLY",
    "NATIVE_BF16",
    "PRECISIONS",
    "apply_tf32",
    "autocast",
    "check_emulated_bf16",
    "check_precision",
    "has_native_bf16",
    "tensor_dtype",
]

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
NATIVE_BF16 = ("avx512_bf16", "amx_bf16")
EMULATED_BF16_MAX_FLOPS = 2.0 * 1024**3  # a 1024² matmul: the largest bf16 case worth emulating
GPU_ONLY = {"tf32": "TF32 tensor cores exist only on NVIDIA GPUs", "fp16": "fp16 is a GPU format"}
_DTYPES = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def check_precision(device: Device, precision: str) -> None:
    """Raise :class:`SkipCase` when ``precision`` is unknown or makes no sense on ``device``."""
    if precision not in PRECISIONS:
        raise SkipCase(f"unknown precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    if precision in GPU_ONLY and device.kind != "cuda":
        raise SkipCase(f"{precision} not measured on {device.kind}: {GPU_ONLY[precision]}")


def has_native_bf16(device: Device) -> bool:
    """Whether ``device`` computes bf16 in hardware (always assumed for GPUs; on x86 CPUs the
    AVX-512 BF16 or AMX extensions; without them PyTorch emulates bf16, far slower than fp32)."""
    extensions = device.info.get("extensions") or ()
    return device.kind != "cpu" or any(name in extensions for name in NATIVE_BF16)


def check_emulated_bf16(device: Device, precision: str, flops: float) -> None:
    """Skip bf16 work larger than a 1024² matmul on a CPU that has no bf16 instructions: the
    emulation is so slow that such a case would take minutes and tell nothing new."""
    if precision == "bf16" and not has_native_bf16(device) and flops > EMULATED_BF16_MAX_FLOPS:
        raise SkipCase(
            "bf16 not measured at this size: this CPU has no bf16 instructions (AVX-512 BF16 or "
            "AMX), so PyTorch emulates bf16, far slower than fp32 (the small bf16 matmul cases "
            "show by how much)"
        )


def tensor_dtype(precision: str) -> Any:
    """The torch dtype that holds data in ``precision`` (tf32 data is float32)."""
    import torch

    return getattr(torch, _DTYPES[precision])


def apply_tf32(device: Device, precision: str) -> Callable[[], None]:
    """Switch TF32 on for ``tf32`` and off otherwise (CUDA only); return a function that puts
    the previous settings back."""
    import torch

    if device.kind != "cuda":
        return lambda: None
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    enabled = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled

    def restore() -> None:
        torch.backends.cuda.matmul.allow_tf32 = matmul
        torch.backends.cudnn.allow_tf32 = cudnn

    return restore


def autocast(device: Device, precision: str) -> contextlib.AbstractContextManager[Any]:
    """Autocast to bf16/fp16 for models; a no-op context for fp32 and tf32."""
    import torch

    if precision not in ("bf16", "fp16"):
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.kind, dtype=tensor_dtype(precision))
