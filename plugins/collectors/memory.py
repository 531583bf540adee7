"""``memory``: how much memory a case needs, on the GPU and on the host.

Metrics (stored as ``memory.<name>``):

- ``gpu_peak_allocated_bytes`` / ``gpu_peak_reserved_bytes`` — CUDA only: the peak of memory
  held by tensors, and of memory the caching allocator took from the driver, during the timed
  samples (the peak counters are reset when they start, so model, data and the step's
  temporaries count, earlier cases do not). Reserved is what another process could not use.
- ``cpu_peak_rss_bytes`` — every device: the worker's peak resident memory during the timed
  samples, above the worker's own baseline (its RSS when the collectors were registered, with
  PyTorch loaded and no case built). For a CPU case that is the model, its data and the step's
  temporaries, comparable to the GPU's allocated peak.

It answers "will this fit?" on each side. The peak RSS comes from the kernel's own counter
(reset per case), so the collector adds no work while the case runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from benchsite import Collector, Device, hookimpl
from benchsite.toolkit.memory import PeakRss, current_rss_bytes

_worker_baseline: list[int] = []


@hookimpl
def register_collectors() -> list[Collector]:
    _worker_baseline[:] = [current_rss_bytes()]
    return [
        Collector(
            name="memory",
            description="Peak GPU memory allocated/reserved and peak host RSS above the worker's.",
            start=start_memory,
        )
    ]


def start_memory(device: Device) -> Callable[[], Mapping[str, float | None]]:
    cuda = _cuda(device)
    if cuda is not None:
        cuda.reset_peak_memory_stats(device.name)
    baseline = _worker_baseline[0] if _worker_baseline else None
    host = PeakRss().start(baseline)

    def stop() -> dict[str, float | None]:
        found: dict[str, float | None] = {"cpu_peak_rss_bytes": float(host.stop())}
        if cuda is not None:
            found["gpu_peak_allocated_bytes"] = float(cuda.max_memory_allocated(device.name))
            found["gpu_peak_reserved_bytes"] = float(cuda.max_memory_reserved(device.name))
        return found

    return stop


def _cuda(device: Device) -> object | None:
    if device.kind != "cuda":
        return None
    import torch

    return torch.cuda
