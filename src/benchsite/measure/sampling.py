"""Timing one case: warm-up, calibration, then samples until the median is known well enough.

Each sample times a block of ``calls_per_sample`` calls (at least ``min_sample_s`` of work)
with the device's :class:`Timer` (a host clock around a device synchronize, or device events),
so that timer, launch and pipeline fill/drain overhead are small against the block. Sampling
stops when the 95% confidence interval of the median (:func:`benchsite.stats.summarize`, valid
for correlated samples) is within ``rel_ci`` of it (after ``min_samples``, and after sampling
for ``min_time_s``: samples taken close together are correlated — host-bound GPU steps can
drift over a second or so), or when the time budget (counted from the start of the
pass, and after at least ``min_samples_in_budget`` samples) or ``max_samples`` is reached;
every sample is kept and ``converged`` records which stop applied.

The samples are then tested for a level shift or trend (:mod:`benchsite.measure.stationarity`). A
series that drifted is sampled again, up to ``drift_retries`` more passes, each with twice the
minimum sampling time; the last pass is the one kept, and if it drifted too its interval is
widened to cover both levels. On a device that can hold itself busy (``Device.hold``), a case
faster than ``device_time_below_s`` per call is also timed with its launches queued behind a
spin kernel: the device's own time per call, without the host's launch gaps.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from benchsite.measure.stationarity import Drift, detect_drift, honest_interval
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
    drift_retries: int = 1
    device_time_below_s: float = 50e-6
    device_time_blocks: int = 15


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
    drift: Drift = field(default_factory=lambda: Drift(None, None, None))
    passes: int = 1
    device_samples_s: list[float] | None = None
    blocks_timed: int = 0  # samples of every pass (the collectors saw them all)


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
    (:func:`benchsite.measure.distributed.sampling.agree_over_group`)."""
    started = time.perf_counter()
    per_call, warmup_calls = _warm_up(case, device, settings, agree)
    calls = max(1, math.ceil(settings.min_sample_s / max(per_call, 1e-9)))
    flush = case.flush_cache and device.flush_cache is not None
    found = _Passes()

    def sample_loop() -> None:
        pass_settings = settings
        for _ in range(settings.drift_retries + 1):
            found.add(_sample_pass(case, device, pass_settings, calls, flush, agree))
            found.drift = detect_drift(found.samples)
            if found.drift.stationary is not False:
                return
            pass_settings = replace(pass_settings, min_time_s=2 * pass_settings.min_time_s)

    if around_samples is None:
        sample_loop()
    else:
        around_samples(sample_loop)
    summary = honest_interval(summarize(found.samples), found.samples, found.drift)
    device_samples = None
    if agree is alone and summary.median_s < settings.device_time_below_s:
        try:
            device_samples = device_time_samples(case, device, summary.median_s, settings)
        except Exception:  # noqa: BLE001 - the extra timing is optional; the case stands
            device_samples = None
    return Measurement(
        samples_s=found.samples,
        own_samples_s=found.own,
        calls_per_sample=calls,
        warmup_calls=warmup_calls,
        summary=summary,
        converged=found.converged,
        measure_s=time.perf_counter() - started,
        cache_flushed=flush,
        drift=found.drift,
        passes=found.passes,
        device_samples_s=device_samples,
        blocks_timed=found.blocks,
    )


@dataclass
class _Passes:
    """The sampling passes of one case so far: the last one's samples count."""

    samples: list[float] = field(default_factory=list)
    own: list[float] = field(default_factory=list)
    converged: bool = False
    passes: int = 0
    blocks: int = 0
    drift: Drift = field(default_factory=lambda: Drift(None, None, None))

    def add(self, found: tuple[list[float], list[float], bool]) -> None:
        self.samples, self.own, self.converged = found
        self.passes += 1
        self.blocks += len(self.samples)


def _sample_pass(
    case: Case, device: Device, settings: MeasureSettings, calls: int, flush: bool, agree: Agree
) -> tuple[list[float], list[float], bool]:
    """One pass of samples: (agreed samples, own samples, whether the interval converged)."""
    samples: list[float] = []
    own: list[float] = []
    started = time.perf_counter()
    deadline, settled = started + settings.budget_s, started + settings.min_time_s
    while len(samples) < settings.max_samples:
        if flush:
            device.flush_cache()  # type: ignore[misc]
        own.append(_time_block(case, device, calls) / calls)
        now = time.perf_counter()
        group, (out_of_time, long_enough) = agree(own[-1], (now >= deadline, now >= settled))
        samples.append(group)
        if long_enough and _known_well_enough(samples, settings):
            return samples, own, True
        if out_of_time and len(samples) >= settings.min_samples_in_budget:
            break
    return samples, own, False


def device_time_samples(
    case: Case, device: Device, per_call_s: float, settings: MeasureSettings
) -> list[float] | None:
    """Per-call device time of blocks whose calls were all queued behind ``device.hold``, so
    that they run back to back (no launch gaps); ``None`` where the device cannot hold or the
    calls could not be queued in time (a call that synchronizes, a full launch queue)."""
    if device.hold is None:
        return None
    calls = max(1, min(64, math.ceil(0.002 / max(per_call_s, 1e-9))))
    found: list[float] = []
    for _ in range(settings.device_time_blocks):
        for calls_now, margin in ((calls, 4), (calls, 16), (max(1, calls // 8), 16)):
            seconds = _held_block(case, device, calls_now, margin * calls_now * per_call_s)
            if seconds is not None:
                found.append(seconds / calls_now)
                break
        else:
            return None
    return found


def _held_block(case: Case, device: Device, calls: int, hold_s: float) -> float | None:
    """Seconds of ``calls`` calls queued behind a hold of ``hold_s``; ``None`` if the hold ended
    before the last call was queued (the device may then have waited for the host)."""
    assert device.hold is not None
    run, timer = case.run, device.timer()
    device.synchronize()
    still_held = device.hold(hold_s)
    timer.start()
    for _ in range(calls):
        run()
    timer.stop()
    queued_in_time = still_held()
    seconds = timer.elapsed()
    return seconds if queued_in_time else None


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
