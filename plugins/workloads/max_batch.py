"""``max-batch`` and ``max-model``: the largest batch, and the largest model, whose training
step fits on each device, found by search.

"Will my batch fit?" and "will my model fit?" are the first walls people hit on a GPU, and the
ones the CPU's larger RAM seems to remove. ``max-batch`` trains the ResNet-10-style CNN of
``cnn-train`` (fp32, AdamW) and searches the batch size; ``max-model`` trains a ReLU MLP of
fixed width at a small fixed batch (fp32, AdamW: weights, gradients and two optimizer states,
16 bytes a parameter, are nearly all of its memory) and searches its number of layers, so its
answer is a parameter count. Both search the same way:

- on a GPU: doubling until a step runs out of memory, then bisection to within 1/64; every
  ``OutOfMemoryError`` is caught and the cache emptied, so the search leaves the GPU clean;
- on the CPU: never by running out (the machine would swap or be killed). Two small steps
  measure the footprint (peak RSS above the worker's baseline), a line through them predicts
  the largest batch within the memory budget, and steps at the predicted batch refine the
  line until it settles (see :func:`search_cpu`). The budget: the parameter
  ``cpu_memory_budget_gib``, which is ``benchsite.toml``'s (``[max_batch]``) where set (so the
  row records it), else half of the memory available; never more than 90% of what is available.

The case then times one step at the size found. Metrics of ``max-batch``: ``max_batch``,
``max_batch_limit_bytes`` (the GPU's memory or the CPU budget) and ``max_batch_peak_bytes``
(the footprint measured at that batch); of ``max-model``: ``max_model_params``,
``max_model_layers``, ``max_model_limit_bytes`` and ``max_model_peak_bytes``, likewise.
"""

from __future__ import annotations

import abc
import gc
from collections.abc import Callable
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl
from benchsite.config import declare, value
from benchsite.toolkit.cases import cnn_spec
from benchsite.toolkit.memory import PeakRss, current_rss_bytes, release_free_memory
from benchsite.toolkit.models import CLASSES, CNN_CLASSES, build_cnn, build_mlp, mlp_train_flops
from benchsite.toolkit.steps import ModelSpec, make_optimizer, train_case

GIB = 2**30
BATCH_CAP = 2**20
PROBE_BATCHES = (16, 64)
PROBE_LAYERS = (8, 32)

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
            params={"image_size": [112], "precision": ["fp32"], **_budget(4.0)},
            quick={"image_size": [32], "precision": ["fp32"], **_budget(0.25)},
            tags=("memory", "training"),
            timeout_s=900.0,
        ),
        Workload(
            name="max-model",
            description=(
                "Largest MLP (parameters) whose AdamW training step fits: GPU by search until "
                "out of memory, CPU by prediction within a RAM budget; times one step at it."
            ),
            setup=setup_max_model,
            params={"width": [2048], "batch": [8], "precision": ["fp32"], **_budget(4.0)},
            quick={"width": [256], "batch": [8], "precision": ["fp32"], **_budget(0.25)},
            tags=("memory", "training"),
            timeout_s=900.0,
        ),
    ]


def _budget(default_gib: float) -> dict[str, list[float]]:
    """The CPU budget parameter: ``[max_batch] cpu_memory_budget_gib`` from ``benchsite.toml``
    where set, so that the row's parameters record the budget the case used."""
    configured = value("max_batch.cpu_memory_budget_gib")
    return {"cpu_memory_budget_gib": [float(configured if configured is not None else default_gib)]}


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
    case, timed = timed_case_that_fits(
        device,
        batch,
        lambda b: train_case(device, {**params, "batch": b}, cnn_spec({**params, "batch": b})),
    )
    case.metrics.update(
        max_batch=float(batch),
        max_batch_limit_bytes=float(limit),
        max_batch_peak_bytes=peak,
        timed_batch=float(timed),
    )
    return case


def setup_max_model(device: Device, params: dict[str, Any]) -> Case:
    width, batch = int(params.get("width", 2048)), int(params.get("batch", 8))
    release_free_memory()
    baseline = current_rss_bytes()
    trial = _ModelTrial(device, width, batch)
    if device.kind == "cpu":
        limit = cpu_budget_bytes(params)
        layers, peak = search_cpu(trial, limit, baseline, probes=PROBE_LAYERS)
    else:
        limit = device_memory_bytes(device)
        layers, peak = search_by_doubling(trial)
    case, timed = timed_case_that_fits(
        device, layers, lambda n: train_case(device, params, mlp_model_spec(width, n, batch))
    )
    case.metrics.update(
        max_model_params=float(mlp_parameters(width, timed)),
        max_model_layers=float(timed),
        max_model_limit_bytes=float(limit),
        max_model_peak_bytes=peak,
        searched_layers=float(layers),
    )
    return case


def mlp_parameters(width: int, layers: int) -> int:
    """Parameters of :func:`~benchsite.toolkit.models.build_mlp` (weights and biases)."""
    return (layers - 1) * (width * width + width) + width * CLASSES + CLASSES


def mlp_model_spec(width: int, layers: int, batch: int) -> ModelSpec:
    """The MLP of ``layers`` layers, ``width`` wide, on ``batch`` random inputs."""
    import torch

    return ModelSpec(
        build=lambda: build_mlp(width, layers),
        inputs=lambda: (torch.randn(batch, width), torch.randint(0, CLASSES, (batch,))),
        loss=torch.nn.functional.cross_entropy,
        items=batch,
        flops=mlp_train_flops(batch, width, layers),
    )


def timed_case_that_fits(
    device: Device, found: int, make: Callable[[int], Case]
) -> tuple[Case, int]:
    """The training step to time (``make(size)``), at the largest size found or, when a fresh
    model's step no longer fits there (a GPU's allocator fragments near its limit: seen on an
    H200, where the timed step at the found batch ran out of memory), at up to three 1/16 steps
    below it."""
    for attempt in range(4):
        timed = found - attempt * max(1, found // 16)
        try:
            case = make(timed)
        except RuntimeError as exc:  # building the model itself can run out of memory
            if not _is_oom(exc):
                raise
            _release_device_memory(device)
            continue
        if _first_step_fits(case, device):
            return case, timed
        del case
        _release_device_memory(device)
    raise SkipCase(f"no training step near the largest size {found} fits when timed")


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


class _Footprints(abc.ABC):
    """``footprint(size, baseline)`` runs one training step at ``size`` (a batch, a number of
    layers: :meth:`_step`) and returns its peak memory, or ``None`` when it ran out of memory."""

    device: Device
    noun = "a size of {}"  # how a size reads in a message

    def __init__(self, device: Device) -> None:
        import torch

        self.device, self.torch = device, torch

    def describe(self, size: int) -> str:
        return self.noun.format(f"{size:,}")

    def footprint(self, size: int, baseline: int = 0) -> float | None:
        try:
            if self.device.kind == "cpu":
                release_free_memory()  # the RSS then starts from what is really in use
                tracker = PeakRss().start(baseline)
                self._step(size)
                return float(tracker.stop())
            return self._device_footprint(size)
        except (self.torch.OutOfMemoryError, RuntimeError) as exc:
            if not _is_oom(exc):
                raise
        # out of memory: clean up only now, when the exception and the step's tensors that its
        # traceback held are gone, so that emptying the cache really frees them
        self._clean()
        return None

    def _device_footprint(self, size: int) -> float:
        cuda = self.torch.cuda if self.device.kind == "cuda" else None
        if cuda is not None:
            cuda.reset_peak_memory_stats(self.device.name)
        self._step(size)
        self.device.synchronize()
        return float(cuda.max_memory_allocated(self.device.name)) if cuda is not None else 0.0

    @abc.abstractmethod
    def _step(self, size: int) -> None:
        """One training step at ``size``, on the device."""

    def _clean(self) -> None:
        _release_device_memory(self.device)


class _ModelTrial(_Footprints):
    """A fresh MLP of ``layers`` layers (``width`` wide) and its AdamW per step, at ``batch``:
    the footprint is the whole model's (weights, gradients, optimizer state, activations)."""

    noun = "a model of {} layers"

    def __init__(self, device: Device, width: int, batch: int) -> None:
        super().__init__(device)
        self.width, self.batch = width, batch

    def _step(self, layers: int) -> None:
        torch = self.torch
        torch.manual_seed(0)
        with torch.device(self.device.name):
            model = build_mlp(self.width, layers)
            inputs = torch.randn(self.batch, self.width)
            targets = torch.randint(0, CLASSES, (self.batch,))
        optimizer = make_optimizer(model, self.device)
        torch.nn.functional.cross_entropy(model(inputs), targets).backward()
        optimizer.step()  # allocates the optimizer's state: the peak is reached here
        del model, optimizer, inputs, targets


class _Trial(_Footprints):
    """One CNN and optimizer on the device, stepped at each batch."""

    noun = "a batch of {}"

    def __init__(self, device: Device, image: int) -> None:
        super().__init__(device)
        torch = self.torch
        self.image = image
        torch.manual_seed(0)
        with torch.device(device.name):
            self.model = build_cnn()
        self.optimizer = make_optimizer(self.model, device)

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


def search_by_doubling(trial: _Footprints, start: int = 8) -> tuple[int, float]:
    """Largest size whose step fits: double until one fails, then bisect to within 1/64."""
    fits = trial.footprint
    low, low_peak, high = 0, 0.0, start
    while high <= BATCH_CAP and (peak := fits(high)) is not None:
        low, low_peak, high = high, peak, high * 2
    if low == 0:
        raise SkipCase(f"not even {trial.describe(start)} fits on {trial.device.name}")
    while high - low > max(1, low // 64):
        middle = (low + high) // 2
        if (peak := fits(middle)) is not None:
            low, low_peak = middle, peak
        else:
            high = middle
    return low, low_peak


def search_cpu(
    trial: _Footprints, limit: float, baseline: int, probes: tuple[int, int] = PROBE_BATCHES
) -> tuple[int, float]:
    """Largest size whose measured footprint stays within ``limit`` bytes, never running a
    step that the measurements so far predict to be over it; the first two steps are at
    ``probes``.

    The footprint is close to a line in the size (the batch, the number of layers). Its slope is taken between the largest
    batch that fitted and the smallest batch that did not (or the first probe while none was
    over), far apart so that the RSS's few megabytes of noise do not matter; the next step
    aims at 97% of the budget, never beyond 4× the largest batch that fitted, so a step can only
    overshoot a little. Stops when the aim is within 2% of the best batch.
    """
    trial.footprint(probes[0], baseline)  # warm-up: optimizer state, kernels
    anchor, best = ((b, trial.footprint(b, baseline) or 0.0) for b in probes)
    if best[1] > limit:
        raise SkipCase(f"{trial.describe(best[0])} already needs over {limit / GIB:.2f} GiB")
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
    configured = params.get("cpu_memory_budget_gib")  # benchsite.toml's, else the grid's
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
