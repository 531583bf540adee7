"""``max-batch``: the largest batch of a training step that fits on each device, found by search.

"Will my batch fit?" is the first wall people hit on a GPU, and the one the CPU's larger RAM
seems to remove. This workload trains the ResNet-10-style CNN of ``cnn-train`` (fp32, AdamW)
and searches the batch size:

- on a GPU: doubling until a step runs out of memory, then bisection to within 1/64; every
  ``OutOfMemoryError`` is caught and the cache emptied, so the search leaves the GPU clean;
- on the CPU: never by running out (the machine would swap or be killed). Two small steps
  measure the footprint (peak RSS above the worker's baseline), a line through them predicts
  the largest batch within the memory budget, and steps at the predicted batch refine the
  line until it settles (see :func:`search_cpu`). The budget: ``cpu_memory_budget_gib`` from
  ``benchsite.toml`` (``[max_batch]``), else the parameter, else half of the memory
  available; never more than 90% of what is available.

The case then times one step at the batch found. Metrics: ``max_batch``,
``max_batch_limit_bytes`` (the GPU's memory or the CPU budget) and ``max_batch_peak_bytes``
(the footprint measured at that batch).
"""

from __future__ import annotations

import gc
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl
from benchsite.config import declare, value
from benchsite.toolkit.cases import cnn_spec
from benchsite.toolkit.memory import PeakRss, current_rss_bytes, release_free_memory
from benchsite.toolkit.models import CNN_CLASSES, build_cnn
from benchsite.toolkit.steps import make_optimizer, train_case

GIB = 2**30
BATCH_CAP = 2**20
PROBE_BATCHES = (16, 64)

declare("max_batch", {"cpu_memory_budget_gib": float})


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="max-batch",
            description=(
                "Largest training batch of the ResNet-10-style CNN that fits: GPU by search "
                "until out of memory, CPU by prediction within a RAM budget; times one step at it."
            ),
            setup=setup_max_batch,
            params={"image_size": [112], "precision": ["fp32"], "cpu_memory_budget_gib": [4.0]},
            quick={"image_size": [32], "precision": ["fp32"], "cpu_memory_budget_gib": [0.25]},
            tags=("memory", "training"),
            timeout_s=900.0,
        )
    ]


def setup_max_batch(device: Device, params: dict[str, Any]) -> Case:
    image = int(params.get("image_size", 112))
    release_free_memory()  # earlier cases' freed memory must not count as baseline
    baseline = current_rss_bytes()
    trial = _Trial(device, image)
    if device.kind == "cpu":
        limit = cpu_budget_bytes(params)
        batch, peak = search_cpu(trial, limit, baseline)
    else:
        limit = device_memory_bytes(device)
        batch, peak = search_by_doubling(trial)
    trial.release()
    case, timed = timed_case_that_fits(device, params, batch)
    case.metrics.update(
        max_batch=float(batch),
        max_batch_limit_bytes=float(limit),
        max_batch_peak_bytes=peak,
        timed_batch=float(timed),
    )
    return case


def timed_case_that_fits(device: Device, params: dict[str, Any], batch: int) -> tuple[Case, int]:
    """The training step to time, at the largest batch found or, when a fresh model's step no
    longer fits there (a GPU's allocator fragments near its limit: seen on an H200, where the
    timed step at the found batch ran out of memory), at up to three 1/16 steps below it."""
    for attempt in range(4):
        timed = batch - attempt * max(1, batch // 16)
        case = train_case(device, {**params, "batch": timed}, cnn_spec({**params, "batch": timed}))
        if _first_step_fits(case, device):
            return case, timed
        del case
        _release_device_memory(device)
    raise SkipCase(f"no training step near the largest batch {batch} fits when timed")


def _first_step_fits(case: Case, device: Device) -> bool:
    """Two steps: the optimizer's state is allocated by the first, so only the second shows
    the steady-state peak."""
    try:
        case.run()
        case.run()
        device.synchronize()
        return True
    except RuntimeError as exc:  # torch.OutOfMemoryError is a RuntimeError
        if not _is_oom(exc):
            raise
    return False


def _release_device_memory(device: Device) -> None:
    gc.collect()
    if device.kind == "cuda":
        import torch

        torch.cuda.empty_cache()


class _Trial:
    """One model and optimizer on the device; ``footprint(batch, baseline)`` runs one training
    step at ``batch`` and returns its peak memory, or ``None`` when it ran out of memory."""

    def __init__(self, device: Device, image: int) -> None:
        import torch

        self.device, self.image, self.torch = device, image, torch
        torch.manual_seed(0)
        with torch.device(device.name):
            self.model = build_cnn()
        self.optimizer = make_optimizer(self.model, device)

    def footprint(self, batch: int, baseline: int = 0) -> float | None:
        try:
            if self.device.kind == "cpu":
                release_free_memory()  # the RSS then starts from what is really in use
                tracker = PeakRss().start(baseline)
                self._step(batch)
                return float(tracker.stop())
            return self._device_footprint(batch)
        except (self.torch.OutOfMemoryError, RuntimeError) as exc:
            if not _is_oom(exc):
                raise
        # out of memory: clean up only now, when the exception and the step's tensors that its
        # traceback held are gone, so that emptying the cache really frees them
        self._clean()
        return None

    def _device_footprint(self, batch: int) -> float:
        cuda = self.torch.cuda if self.device.kind == "cuda" else None
        if cuda is not None:
            cuda.reset_peak_memory_stats(self.device.name)
        self._step(batch)
        self.device.synchronize()
        return float(cuda.max_memory_allocated(self.device.name)) if cuda is not None else 0.0

    def _step(self, batch: int) -> None:
        torch = self.torch
        with torch.device(self.device.name):
            inputs = torch.randn(batch, 3, self.image, self.image)
            targets = torch.randint(0, CNN_CLASSES, (batch,))
        self.optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(self.model(inputs), targets).backward()
        self.optimizer.step()

    def _clean(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        _release_device_memory(self.device)

    def release(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        del self.model, self.optimizer
        _release_device_memory(self.device)


def _is_oom(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def search_by_doubling(trial: _Trial, start: int = 8) -> tuple[int, float]:
    """Largest batch whose step fits: double until one fails, then bisect to within 1/64."""
    fits = trial.footprint
    low, low_peak, high = 0, 0.0, start
    while high <= BATCH_CAP and (peak := fits(high)) is not None:
        low, low_peak, high = high, peak, high * 2
    if low == 0:
        raise SkipCase(f"not even a batch of {start} fits on {trial.device.name}")
    while high - low > max(1, low // 64):
        middle = (low + high) // 2
        if (peak := fits(middle)) is not None:
            low, low_peak = middle, peak
        else:
            high = middle
    return low, low_peak


def search_cpu(trial: _Trial, limit: float, baseline: int) -> tuple[int, float]:
    """Largest batch whose measured footprint stays within ``limit`` bytes, never running a
    step that the measurements so far predict to be over it.

    The footprint is close to a line in the batch. Its slope is taken between the largest
    batch that fitted and the smallest batch that did not (or the first probe while none was
    over), far apart so that the RSS's few megabytes of noise do not matter; the next step
    aims at 97% of the budget, never beyond 4× the largest batch that fitted, so a step can only
    overshoot a little. Stops when the aim is within 2% of the best batch.
    """
    trial.footprint(PROBE_BATCHES[0], baseline)  # warm-up: optimizer state, kernels
    anchor, best = ((b, trial.footprint(b, baseline) or 0.0) for b in PROBE_BATCHES)
    if best[1] > limit:
        raise SkipCase(f"a batch of {best[0]} already needs over {limit / GIB:.2f} GiB")
    over: tuple[int, float] | None = None
    for _ in range(8):
        low, high = (best, over) if over is not None else (anchor, best)
        per_sample = max((high[1] - low[1]) / max(high[0] - low[0], 1), 1.0)
        aim = best[0] + int((0.97 * limit - best[1]) / per_sample)
        candidate = min(aim, 4 * best[0], over[0] - 1 if over else BATCH_CAP)
        if candidate <= best[0] * 1.02:
            break
        measured = (candidate, trial.footprint(candidate, baseline) or 0.0)
        if measured[1] <= limit:
            best = measured
        else:
            over = measured
    return best


def cpu_budget_bytes(params: dict[str, Any]) -> float:
    """The CPU memory budget: ``benchsite.toml``, else the parameter, else half of available
    memory; capped at 90% of available so the machine never swaps."""
    import psutil

    available = float(psutil.virtual_memory().available)
    configured = value("max_batch.cpu_memory_budget_gib", params.get("cpu_memory_budget_gib"))
    budget = float(configured) * GIB if configured is not None else available / 2
    return min(budget, 0.9 * available)


def device_memory_bytes(device: Device) -> float:
    """All memory of a GPU (what the search may fill)."""
    import torch

    if device.kind == "cuda":
        return float(torch.cuda.get_device_properties(device.name).total_memory)
    if device.kind == "mps":
        return float(torch.mps.recommended_max_memory())
    return float(device.info.get("memory_bytes") or 0)
