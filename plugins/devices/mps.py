"""Apple's Metal GPU (MPS) as a device ``mps``, where PyTorch has it.

Timed with the host clock around ``torch.mps.synchronize()``: MPS has no event timer as
portable as CUDA's, and a synchronize before and after each block is exact enough for blocks
that run for milliseconds.
"""

from __future__ import annotations

import platform
import time
from typing import Any

from benchsite import Device, Timer, hookimpl
from benchsite.toolkit.fingerprint import fingerprint


class MpsTimer(Timer):
    """Host clock around a device synchronize at each end of the block."""

    def start(self) -> None:
        import torch

        torch.mps.synchronize()
        self._start = time.perf_counter()

    def stop(self) -> None:
        import torch

        torch.mps.synchronize()
        self._stop = time.perf_counter()

    def elapsed(self) -> float:
        return self._stop - self._start


@hookimpl
def register_devices() -> list[Device]:
    import torch

    if not torch.backends.mps.is_available():
        return []
    info: dict[str, Any] = {
        "model": f"Apple {platform.machine()} GPU (MPS)",
        "macos": platform.mac_ver()[0],
        "torch_version": torch.__version__,
    }
    return [
        Device(
            name="mps",
            kind="mps",
            info=info,
            fingerprint=fingerprint(info, ("model", "macos", "torch_version")),
            timer=MpsTimer,
            synchronize=torch.mps.synchronize,
        )
    ]
