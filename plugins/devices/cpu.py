"""The CPU as a device: always present.

Captures what decides CPU results: the model, the cores this process may really use (affinity
and the cgroup's CPU quota, which containers often set below the core count), the vector and
matrix extensions (AVX-512, AMX, bf16), and the BLAS/oneDNN build. Cases run with every usable
core unless a case pins its own thread count.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from benchsite import Device, hookimpl
from benchsite.toolkit.fingerprint import fingerprint
from benchsite.toolkit.machine import affinity_cores, cgroup_cpu_quota, usable_cores
from benchsite.toolkit.timing import HostClockTimer

_EXTENSIONS = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")


@hookimpl
def register_devices() -> list[Device]:
    info = cpu_info()
    keys = ("model", "usable_cpus", "torch_version", "blas", "capability")
    return [
        Device(
            name="cpu",
            kind="cpu",
            info=info,
            fingerprint=fingerprint(info, keys),
            timer=HostClockTimer,
            prepare=lambda: _use_threads(info["usable_cpus"]),
        )
    ]


def _use_threads(count: int) -> None:
    import torch

    torch.set_num_threads(count)


def cpu_info() -> dict[str, Any]:
    """Everything captured about this CPU and the PyTorch build that drives it."""
    import torch

    flags = _cpuinfo_field("flags").split()
    affinity, quota, usable = affinity_cores(), cgroup_cpu_quota(), usable_cores()
    return {
        "model": _cpuinfo_field("model name") or platform.processor() or platform.machine(),
        "architecture": platform.machine(),
        "logical_cpus": os.cpu_count(),
        "affinity_cpus": affinity,
        "cgroup_cpu_quota": quota,
        "usable_cpus": usable,
        "extensions": [name for name in _EXTENSIONS if name in flags],
        "capability": torch.backends.cpu.get_cpu_capability(),
        "memory_bytes": _memory_total(),
        **cache_sizes(),
        "blas": _blas(torch),
        "mkldnn": torch.backends.mkldnn.is_available(),
        "torch_version": torch.__version__,
        "torch_default_threads": torch.get_num_threads(),
    }


def cache_sizes(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> dict[str, int]:
    """``l2_cache_bytes`` and ``l3_cache_bytes`` of the caches the first CPU sees (Linux sysfs;
    none elsewhere): a working set smaller than these measures the cache, not the memory."""
    sizes: dict[str, int] = {}
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _size_bytes((index / "size").read_text().strip())
        except (OSError, ValueError):
            continue
        if level >= 2 and kind == "Unified" and size:
            sizes[f"l{level}_cache_bytes"] = size
    return sizes


def _size_bytes(text: str) -> int:
    """``8192K`` → 8388608 (sysfs cache sizes)."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)


def _cpuinfo_field(name: str) -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == name:
                return value.strip()
    except OSError:
        pass
    return ""


def _memory_total() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except ImportError:
        return None


def _blas(torch: Any) -> str:
    """The BLAS and oneDNN lines of PyTorch's build configuration."""
    config = torch.__config__.show()
    wanted = ("BLAS_INFO", "LAPACK_INFO", "oneDNN", "MKL", "OpenMP")
    lines = [line.strip(" -") for line in config.splitlines() if any(w in line for w in wanted)]
    return "; ".join(lines)[:500]
