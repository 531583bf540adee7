"""Timing one case on every rank of a process group, with one sampling plan they all follow.

:func:`benchsite.measure.sampling.measure_case` decides when warm-up ends, how many calls a sample
holds and when to stop; on several ranks those local decisions would differ by microseconds, one
rank would start a block whose collectives the others never join, and the group would hang. Passed
:func:`agree_over_group` as its ``agree`` step, every block is followed by one small all-reduce
(MAX) of ``[block seconds, flags...]`` over the CPU (gloo) backend: every rank then holds the same
numbers — the slowest rank's time, and whether any rank's budget or minimum time ran out — and takes
the same decisions from them. The all-reduce also lines the ranks up before the next block. Each
sample of the result is the group's time for a block (its slowest rank); the rank's own samples are
in ``Measurement.own_samples_s``.
"""

from __future__ import annotations

from typing import Any

from benchsite.measure.sampling import Agree, Flags


def agree_over_group(group: Any = None) -> Agree:
    """The agreement step over a torch.distributed process group: one all-reduce (MAX) of
    ``[seconds, flags...]`` on a CPU tensor, so it uses the gloo backend even beside NCCL."""
    import torch
    import torch.distributed as dist

    def agree(seconds: float, flags: Flags) -> tuple[float, Flags]:
        values = torch.tensor(
            [seconds, *(1.0 if flag else 0.0 for flag in flags)], dtype=torch.float64
        )
        dist.all_reduce(values, op=dist.ReduceOp.MAX, group=group)
        return float(values[0]), tuple(bool(value > 0) for value in values[1:].tolist())

    return agree
