"""What measuring one case produced: a status and, for a measured case, its result columns.

The worker (:mod:`benchsite.measure.worker`) and a distributed group
(:mod:`benchsite.measure.distributed.launch`) both hand the runner an :class:`Outcome`; the
runner adds where and by what it ran and stores the row. :class:`Status`
(:mod:`benchsite._infra.status`) values are plain strings (a ``StrEnum``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from benchsite._infra.status import Status

__all__ = ["Measured", "Outcome", "Status"]


class Measured(TypedDict):
    """The result columns of a measured case (see ``docs/results-schema.md``)."""

    samples_s: list[float]
    calls_per_sample: int
    warmup_calls: int
    n_samples: int
    median_s: float
    mean_s: float
    std_s: float
    min_s: float
    q1_s: float
    q3_s: float
    iqr_s: float
    ci_low_s: float
    ci_high_s: float
    rel_ci: float
    converged: bool
    measure_s: float
    cache_flushed: bool
    flops: float | None
    bytes: float | None
    items: float | None
    tflops: float | None
    gbps: float | None
    items_per_s: float | None
    threads: int
    metrics: dict[str, Any]
    shift: float | None
    drift_p: float | None
    stationary: bool | None
    sampling_passes: int
    device_median_s: float | None
    device_samples_s: list[float] | None
    # a case measured in rounds (benchsite.measure.rounds): absent on one round's own columns
    rounds: NotRequired[int]
    round_medians_s: NotRequired[list[float]]
    round_ci_low_s: NotRequired[list[float]]
    round_ci_high_s: NotRequired[list[float]]
    round_sizes: NotRequired[list[int]]
    round_spread: NotRequired[float | None]
    rounds_p: NotRequired[float | None]
    reproducible: NotRequired[bool | None]


@dataclass
class Outcome:
    """One case's outcome. ``measured`` is set when ``status`` is ``ok``; ``notices`` are lines
    for the user (a collector unavailable, ...); ``ranks`` holds each rank's own numbers of a
    distributed case."""

    status: Status
    error: str | None = None
    measured: Measured | None = None
    notices: list[str] = field(default_factory=list)
    world_size: int = 1
    ranks: list[dict[str, Any]] | None = None
    stored_elsewhere: bool = False  # a case of several nodes: the node of rank 0 stores it
    case_s: float | None = None  # wall time in the worker, setup to teardown (not stored)

    def columns(self) -> dict[str, Any]:
        """The store columns this outcome fills."""
        row: dict[str, Any] = {
            "status": str(self.status),
            "error": self.error,
            "world_size": self.world_size,
        }
        if self.ranks is not None:
            row["ranks"] = self.ranks
        return {**row, **(self.measured or {})}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form (a distributed rank writes it to a file)."""
        return {**self.columns(), "notices": self.notices}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        """Read back :meth:`to_json`'s form."""
        measured = {key: data[key] for key in Measured.__annotations__ if key in data}
        status = Status(data["status"])
        return cls(
            status=status,
            error=data.get("error"),
            measured=measured if status == Status.OK else None,  # type: ignore[typeddict-item]
            notices=list(data.get("notices", [])),
            world_size=int(data.get("world_size", 1)),
            ranks=data.get("ranks"),
        )
