"""Peak resident memory (RSS) of this process over an interval, cheaply and correctly.

``resource.getrusage``'s ``ru_maxrss`` is a peak over the whole life of the process, useless in
a worker that runs many cases. On Linux the kernel's own peak (``VmHWM`` in
``/proc/self/status``) can be reset by writing ``5`` to ``/proc/self/clear_refs``: exact, and
free while the case runs. Where that is not possible a background thread samples the RSS with
``psutil`` instead (a short peak between two samples can then be missed).

A worker process serves many cases, so a figure is the case's own only when measured against
the worker's state just before the case was set up: :func:`case_baseline` is that state
(:mod:`benchsite.measure.baseline`, which the worker runs before every case's setup: the
previous case's garbage collected, freed memory handed back to the system, the CUDA caching
allocator's cache released); the memory collector reports its peaks above it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from benchsite.measure.baseline import (
    Baseline,
    case_baseline,
    current_rss_bytes,
    release_free_memory,
)

__all__ = [
    "Baseline",
    "PeakRss",
    "case_baseline",
    "current_rss_bytes",
    "kernel_peak_bytes",
    "release_free_memory",
    "reset_kernel_peak",
]

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def reset_kernel_peak() -> bool:
    """Reset the kernel's peak-RSS counter to the current RSS; ``False`` where not possible."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return kernel_peak_bytes() is not None


def kernel_peak_bytes() -> int | None:
    """The kernel's peak RSS (``VmHWM``) of this process, or ``None`` where unavailable."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class PeakRss:
    """Peak RSS between :meth:`start` and :meth:`stop`, as bytes above the RSS at ``start``."""

    def __init__(self, interval_s: float = 0.01) -> None:
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sampled_peak = 0

    def start(self, baseline: int | None = None) -> PeakRss:
        """Begin; the peak is reported above ``baseline`` (default: the RSS now)."""
        self.baseline = current_rss_bytes() if baseline is None else baseline
        self._kernel = reset_kernel_peak()
        if not self._kernel:
            self._sampled_peak = current_rss_bytes()
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sampled_peak = max(self._sampled_peak, current_rss_bytes())

    def stop(self) -> int:
        """Bytes of the peak above the baseline (never negative)."""
        if self._kernel:
            peak = kernel_peak_bytes() or self.baseline
        else:
            self._stop.set()
            if self._thread is not None:
                self._thread.join()
            peak = max(self._sampled_peak, current_rss_bytes())
        return max(0, peak - self.baseline)
