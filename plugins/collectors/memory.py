"""``memory``: how much memory a case needs, on the GPU and on the host: each case's own.

A worker process serves many cases (one round of each), so every figure is measured against
the worker's state just before the case was set up (:func:`benchsite.toolkit.memory.start_case`,
which the worker calls before every setup: earlier cases' garbage collected, freed host memory
handed back to the system, the CUDA caching allocator's cache emptied and its peaks reset).

Metrics (stored as ``memory.<name>``):

- ``gpu_peak_allocated_bytes`` / ``gpu_peak_reserved_bytes`` — CUDA only: the peak, during the
  timed samples, of the bytes held by tensors and of the bytes the caching allocator took from
  the driver, less what was allocated / reserved before the case's setup (after the cache was
  emptied). So the case's model, data and step temporaries count; an earlier case's tensors
  and cached blocks do not. Reserved is what another process could not use.
- ``cpu_peak_rss_bytes`` — every device: the worker's peak resident memory during the timed
  samples (the kernel's own counter, reset when they start), less its resident memory before
  the case's setup. For a CPU case that is the model, its data and the step's temporaries,
  comparable to the GPU's allocated peak; memory an earlier case freed is not counted, and
  memory it kept (an allocator's arena) is in the baseline, not in the case's figure.
- ``per_case`` — 1: the figures above are the case's own (rows without it were measured
  against an older baseline and are not used where memory is divided by the batch size).

It answers "will this fit?" on each side. The collector adds no work while the case runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from benchsite import Collector, Device, hookimpl
from benchsite.toolkit.memory import Baseline, PeakRss, case_baseline, current_rss_bytes


@hookimpl
def register_collectors() -> list[Collector]:
    return [
        Collector(
            name="memory",
            description="Peak GPU memory allocated/reserved and peak host RSS, each above the "
            "worker's before the case's setup (the case's own).",
            start=start_memory,
        )
    ]


def start_memory(device: Device) -> Callable[[], Mapping[str, float | None]]:
    cuda = _cuda(device)
    if cuda is not None:
        cuda.reset_peak_memory_stats(device.name)
    before = case_baseline() or Baseline(current_rss_bytes(), {}, {})
    host = PeakRss().start(before.rss_bytes)

    def stop() -> dict[str, float | None]:
        found: dict[str, float | None] = {"cpu_peak_rss_bytes": float(host.stop())}
        if cuda is not None:
            index = _index(cuda, device.name)
            allocated = cuda.max_memory_allocated(device.name) - before.cuda_allocated.get(index, 0)
            reserved = cuda.max_memory_reserved(device.name) - before.cuda_reserved.get(index, 0)
            found["gpu_peak_allocated_bytes"] = float(max(0, allocated))
            found["gpu_peak_reserved_bytes"] = float(max(0, reserved))
        found["per_case"] = 1.0
        return found

    return stop


def _index(cuda: object, name: str) -> int:
    """The CUDA device index of a device named ``cuda`` or ``cuda:N``."""
    _, _, number = name.partition(":")
    return int(number) if number.isdigit() else int(cuda.current_device())  # type: ignore[attr-defined]


def _cuda(device: Device) -> object | None:
    if device.kind != "cuda":
        return None
    import torch

    return torch.cuda
