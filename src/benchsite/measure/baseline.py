"""Each case's memory from a clean start: what the worker frees and records before every case's
setup, so that the memory collector's figures are the case's own (one worker process serves
many cases).

:func:`start_case` collects the previous case's garbage, hands memory the C allocator holds free
back to the system (glibc's ``malloc_trim``), empties the CUDA caching allocator's cache and
resets its peak counters, then records the resident memory and the CUDA bytes still allocated
and reserved: the :class:`Baseline` the collector measures against (:func:`case_baseline`,
public as ``benchsite.toolkit.memory.case_baseline``).
"""

from __future__ import annotations

import gc
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Baseline:
    """The worker's memory just before a case was set up: resident bytes, and per CUDA device
    (index) the bytes allocated to tensors and reserved by the caching allocator."""

    rss_bytes: int
    cuda_allocated: dict[int, int]
    cuda_reserved: dict[int, int]


_baseline: list[Baseline] = []


def start_case() -> Baseline:
    """Before a case's setup: free what earlier cases left (garbage, the C allocator's free
    memory, the CUDA caching allocator's unused cache; every CUDA peak counter reset) and record
    the baseline the memory collector measures against."""
    gc.collect()
    release_free_memory()
    allocated, reserved = _release_cuda_cache()
    found = Baseline(current_rss_bytes(), allocated, reserved)
    _baseline[:] = [found]
    return found


def case_baseline() -> Baseline | None:
    """The baseline the worker recorded before the case now running was set up (:func:`start_case`;
    ``None``: none yet)."""
    return _baseline[0] if _baseline else None


def _release_cuda_cache() -> tuple[dict[int, int], dict[int, int]]:
    """Empty the CUDA caching allocator's cache and reset its peaks, where CUDA is in use in
    this process (never initialised here for it); the bytes still allocated and reserved."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return {}, {}
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    allocated, reserved = {}, {}
    for index in range(torch.cuda.device_count()):
        torch.cuda.reset_peak_memory_stats(index)
        allocated[index] = int(torch.cuda.memory_allocated(index))
        reserved[index] = int(torch.cuda.memory_reserved(index))
    return allocated, reserved


def current_rss_bytes() -> int:
    """Resident memory of this process now."""
    import psutil

    return int(psutil.Process().memory_info().rss)


def release_free_memory() -> None:
    """Hand memory that is freed but still held by the C allocator back to the system
    (glibc's ``malloc_trim``), so the RSS falls back to what is really in use; a no-op
    elsewhere."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
