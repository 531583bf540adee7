"""Timing one case: warm-up, calibration, then samples until the median is known well enough.

Each sample times a block of ``calls_per_sample`` calls (at least ``min_sample_s`` of work)
with the device's :class:`Timer` (a host clock around a device synchronize, or device events),
so that timer, launch and pipeline fill/drain overhead are small against the block. Sampling
stops when the 95% confidence interval of the median is within ``rel_ci`` of it (after
``min_samples``, and after sampling for ``min_time_s``: samples taken close together are
correlated — host-bound GPU steps drift over a second or so, seen on an H200 — and a median
that converged in a tenth of a second can sit 20% off the long-run one), or when the time
budget (counted from the start of warm-up, and after at least ``min_samples_in_budget``
samples) or ``max_samples`` is reached; every sample is kept and ``converged`` records which
stop applied.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from benchsite.records import Case, Device
from benchsite.stats import Summary, summarize


@dataclass(frozen=True)
class MeasureSettings:
    """How hard to try: the defaults suit the ``full`` profile; ``quick`` uses a smaller budget."""

    rel_ci: float = 0.02
    budget_s: float = 10.0
    min_samples: int = 7
    min_samples_in_budget: int = 3
    max_samples: int = 500
    min_sample_s: float = 0.02
    min_time_s: float = 1.0
    warmup_s: float = 0.2
    min_warmup_calls: int = 2


@dataclass
class Measurement:
    """What :func:`measure_case` found: every per-call sample and its summary.

    ``samples_s`` are the agreed samples (a process group's slowest rank; this process's own
    when measuring alone) and ``own_samples_s`` this process's own."""

    samples_s: list[float]
    own_samples_s: list[float]
    calls_per_sample: int
    warmup_calls: int
    summary: Summary
    converged: bool
    measure_s: float
    cache_flushed: bool


Flags = tuple[bool, ...]
Agree = Callable[[float, Flags], tuple[float, Flags]]


def alone(seconds: float, flags: Flags) -> tuple[float, Flags]:
    """The agreement of a process measuring on its own: its numbers stand as they are."""
    return seconds, flags


def measure_case(
    case: Case,
    device: Device,
    settings: MeasureSettings,
    around_samples: Callable[[Callable[[], None]], None] | None = None,
    agree: Agree = alone,
) -> Measurement:
    """Measure ``case`` on ``device``. ``around_samples(sample_loop)`` lets collectors wrap only
    the timed samples (not warm-up). ``agree(block_seconds, flags)`` turns this process's block
    time and stop flags into the ones every process of a group acts on (the slowest block, any
    flag set), so that ranks of a distributed case take the same decisions
    (:func:`benchsite.distributed_measure.agree_over_group`)."""
    started = time.perf_counter()
    per_call, warmup_calls = _warm_up(case, device, settings, agree)
    calls = max(1, math.ceil(settings.min_sample_s / max(per_call, 1e-9)))
    flush = case.flush_cache and device.flush_cache is not None
    samples: list[float] = []
    own: list[float] = []
    converged = False

    def sample_loop() -> None:
        nonlocal converged
        deadline = started + settings.budget_s
        settled = time.perf_counter() + settings.min_time_s
        while len(samples) < settings.max_samples:
            if flush:
                device.flush_cache()  # type: ignore[misc]
            own.append(_time_block(case, device, calls) / calls)
            now = time.perf_counter()
            group, (out_of_time, long_enough) = agree(own[-1], (now >= deadline, now >= settled))
            samples.append(group)
            if long_enough and _known_well_enough(samples, settings):
                converged = True
                return
            if out_of_time and len(samples) >= settings.min_samples_in_budget:
                return

    if around_samples is None:
        sample_loop()
    else:
        around_samples(sample_loop)
    return Measurement(
        samples_s=samples,
        own_samples_s=own,
        calls_per_sample=calls,
        warmup_calls=warmup_calls,
        summary=summarize(samples),
        converged=converged,
        measure_s=time.perf_counter() - started,
        cache_flushed=flush,
    )


def _known_well_enough(samples: list[float], settings: MeasureSettings) -> bool:
    return len(samples) >= settings.min_samples and summarize(samples).rel_ci <= settings.rel_ci


def _warm_up(
    case: Case, device: Device, settings: MeasureSettings, agree: Agree
) -> tuple[float, int]:
    """Run the case in blocks that double until a block lasts ``min_sample_s``, for at least
    ``warmup_s``; return the (agreed) per-call time of the last block and the calls made."""
    calls_made, block = 0, 1
    deadline = time.perf_counter() + settings.warmup_s
    while True:
        seconds, (warm,) = agree(
            _time_block(case, device, block), (time.perf_counter() >= deadline,)
        )
        per_call = seconds / block
        calls_made += block
        if calls_made >= settings.min_warmup_calls and warm:
            return per_call, calls_made
        if per_call * block < settings.min_sample_s:
            block *= 2


def _time_block(case: Case, device: Device, calls: int) -> float:
    """Seconds taken by ``calls`` calls of the case, device work included."""
    run = case.run
    timer = device.timer()
    device.synchronize()
    timer.start()
    for _ in range(calls):
        run()
    timer.stop()
    return timer.elapsed()
