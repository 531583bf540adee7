"""Timing one case on every rank of a process group, with one sampling plan they all follow.

:func:`benchsite.measure.measure_case` decides alone when warm-up ends, how many calls a sample
holds and when to stop; on several ranks those local decisions would differ by microseconds,
one rank would start a block whose collectives the others never join, and the group would hang.
Here every block is followed by one small all-reduce (MAX) of ``[block seconds, deadline
passed]`` over the CPU (gloo) backend: every rank then holds the same numbers — the slowest
rank's time, and whether any rank's budget ran out — and takes the same decisions from them.
The all-reduce also lines the ranks up before the next block. The rules are otherwise those of
``measure_case``: warm up for ``warmup_s``, size a sample to ``min_sample_s``, stop when the
median's 95% confidence interval is within ``rel_ci`` or the budget is spent.

Each sample of the result is the group's time for a block (its slowest rank); the rank's own
samples are returned beside it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from benchsite.measure import Measurement, MeasureSettings, _time_block
from benchsite.records import Case, Device
from benchsite.stats import summarize

Agree = Callable[[float, bool], tuple[float, bool]]


def agree_over_group(group: Any = None) -> Agree:
    """The agreement step over a torch.distributed process group: one all-reduce (MAX) of
    ``[seconds, flag]`` on a CPU tensor, so it uses the gloo backend even beside NCCL."""
    import torch
    import torch.distributed as dist

    def agree(seconds: float, flag: bool) -> tuple[float, bool]:
        values = torch.tensor([seconds, 1.0 if flag else 0.0], dtype=torch.float64)
        dist.all_reduce(values, op=dist.ReduceOp.MAX, group=group)
        return float(values[0]), bool(values[1] > 0)

    return agree


def measure_group(
    case: Case,
    device: Device,
    settings: MeasureSettings,
    agree: Agree,
    around_samples: Callable[[Callable[[], None]], None] | None = None,
) -> tuple[Measurement, list[float]]:
    """Measure ``case`` on this rank in step with the others; return the group's measurement
    and this rank's own per-call samples."""
    started = time.perf_counter()
    per_call, warmup_calls = _agreed_warm_up(case, device, settings, agree)
    calls = max(1, math.ceil(settings.min_sample_s / max(per_call, 1e-9)))
    flush = case.flush_cache and device.flush_cache is not None
    samples: list[float] = []
    local: list[float] = []
    converged = False

    def sample_loop() -> None:
        nonlocal converged
        deadline = started + settings.budget_s
        while len(samples) < settings.max_samples:
            if flush:
                device.flush_cache()  # type: ignore[misc]
            mine = _time_block(case, device, calls) / calls
            group, out_of_time = agree(mine, time.perf_counter() >= deadline)
            local.append(mine)
            samples.append(group)
            if (
                len(samples) >= settings.min_samples
                and summarize(samples).rel_ci <= settings.rel_ci
            ):
                converged = True
                return
            if len(samples) >= settings.min_samples_in_budget and out_of_time:
                return

    if around_samples is None:
        sample_loop()
    else:
        around_samples(sample_loop)
    measurement = Measurement(
        samples_s=samples,
        calls_per_sample=calls,
        warmup_calls=warmup_calls,
        summary=summarize(samples),
        converged=converged,
        measure_s=time.perf_counter() - started,
        cache_flushed=flush,
    )
    return measurement, local


def _agreed_warm_up(
    case: Case, device: Device, settings: MeasureSettings, agree: Agree
) -> tuple[float, int]:
    """Warm up in blocks that double until a block lasts ``min_sample_s``; return the group's
    per-call time of the last block and the calls made."""
    calls_made, block = 0, 1
    deadline = time.perf_counter() + settings.warmup_s
    while True:
        seconds, warm = agree(_time_block(case, device, block), time.perf_counter() >= deadline)
        per_call = seconds / block
        calls_made += block
        if calls_made >= settings.min_warmup_calls and warm:
            return per_call, calls_made
        if per_call * block < settings.min_sample_s:
            block *= 2
