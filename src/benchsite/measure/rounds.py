"""Rounds: every case measured several times, each round in a worker process of its own (one
worker serves every case of a round), and the rounds combined so that the stored interval
includes the variation between processes.

A run measures round 1 of every case, then (in a new worker) round 2 of every case, and so on,
as asv interleaves its rounds and pyperf its processes: a change of the machine over the run
then moves every case a little instead of one case a lot, and no two rounds of a case share a
process. Each round is a full measurement (:func:`benchsite.measure.sampling.measure_case`:
warm-up, samples, drift test) with the profile's budget and minimum sampling time divided
over :attr:`RoundPolicy.min_rounds`, so the samples of all rounds take about as long as one
measurement did.

A case whose first round took more than :attr:`RoundPolicy.cheap_s` of wall time (its setup
included: a compilation, a search for the largest batch that fits) is not cheap and keeps that
one round (its ``rounds`` is 1, its interval the within-round one). After
:attr:`RoundPolicy.min_rounds` rounds a case gets more, up to
:attr:`RoundPolicy.max_rounds`, where the spread is likely large: its rounds disagree (spread
over :data:`EFFECT_FLOOR` or a heterogeneity p-value under 0.05), its call takes under
:data:`SMALL_S` (small cases are host-bound, and the host's launch rate moves between
processes) or the GPU's own time is under half of the host time.

The rounds are combined by :func:`benchsite.stats.combine_rounds` (median of the round
medians; the interval the wider of the within-round and the random-effects one). A case is
*irreproducible* (``reproducible`` false, the ``irreproducible`` validity flag) when its round
medians disagree beyond their within-round intervals: Cochran's Q p-value under
:data:`ALPHA` and a spread of at least :data:`EFFECT_FLOOR` (a real but tiny difference does
not matter); where a round has no interval to test against (a single sample), a spread of
:data:`SPREAD_LIMIT` or more. Its interval is then widened to cover every round median. The
thresholds are the drift test's within a round (:mod:`benchsite.measure.stationarity`). Rounds
that differ by more than that but within their own wide intervals are not irreproducible: their
samples are noisy (the ``noisy`` flag says so) and the interval is wide already.

What of a row comes from which round: the samples are every sample of every round (in the
order taken); the collectors' metrics, the calls per sample and the case's counts come from the
round whose median is nearest the combined median (one coherent set, from one process);
throughputs are recomputed from the combined median.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from benchsite import stats
from benchsite.measure.outcome import Measured, Outcome, Status
from benchsite.measure.sampling import MeasureSettings
from benchsite.stats import RoundsSummary, combine_rounds, summarize

ALPHA = 0.01
EFFECT_FLOOR = 0.05
SPREAD_LIMIT = 0.10
MORE_ROUNDS_P = 0.05
SMALL_S = 100e-6


@dataclass(frozen=True)
class RoundPolicy:
    """How many rounds a case gets: ``min_rounds``, up to ``max_rounds`` where the spread is
    likely large (see the module docstring)."""

    min_rounds: int = 3
    max_rounds: int = 5
    cheap_s: float | None = 15.0  # a first round longer than this (setup included): no more

    def settings(self, settings: MeasureSettings) -> MeasureSettings:
        """One round's settings: the budget and the minimum sampling time divided over the
        rounds, the samples a round must take within its budget likewise (at least 1), and
        one warm-up call fewer (at least 1: each round warms up in its own process)."""
        if self.min_rounds <= 1:
            return settings
        rounds = self.min_rounds
        return replace(
            settings,
            budget_s=settings.budget_s / rounds,
            min_time_s=settings.min_time_s / rounds,
            min_samples_in_budget=max(1, math.ceil(settings.min_samples_in_budget / rounds)),
            min_warmup_calls=max(1, settings.min_warmup_calls - 1),
        )

    def wants_more(self, done: int, combined: Mapping[str, Any], first_s: float = 0.0) -> bool:
        """Whether a case with ``done`` ok rounds, combined as ``combined``, gets another; a
        case whose first round took ``first_s`` over :attr:`cheap_s` (an expensive setup: a
        compilation, a search for the largest batch) gets none."""
        if self.cheap_s is not None and first_s > self.cheap_s:
            return False
        if done < self.min_rounds:
            return True
        if done >= self.max_rounds:
            return False
        return disagree(combined) or host_bound(combined)


def disagree(row: Mapping[str, Any]) -> bool:
    """The rounds of a combined row disagree enough to be worth another round."""
    spread, p_value = row.get("round_spread"), row.get("rounds_p")
    return (spread is not None and spread - 1 >= EFFECT_FLOOR) or (
        p_value is not None and p_value < MORE_ROUNDS_P
    )


def host_bound(row: Mapping[str, Any]) -> bool:
    """A small call (under :data:`SMALL_S`), or a host-bound one (:func:`stats.host_bound`)."""
    median = row.get("median_s")
    small = median is not None and median < SMALL_S
    return small or stats.host_bound(median, row.get("device_median_s"))


def reproducible(combined: RoundsSummary) -> bool | None:
    """False when the rounds disagree beyond their intervals (module docstring); ``None`` for
    a single round."""
    if len(combined.medians_s) < 2 or combined.spread is None:
        return None
    moved = combined.spread - 1
    if combined.p_value is None:  # a round without an interval: the spread alone decides
        return moved < SPREAD_LIMIT
    return not (combined.p_value < ALPHA and moved >= EFFECT_FLOOR)


def combine(rounds: Sequence[Mapping[str, Any]]) -> Measured:
    """The result columns of a case from the result columns of its rounds (module docstring)."""
    medians = [float(r["median_s"]) for r in rounds]
    intervals = [(float(r["ci_low_s"]), float(r["ci_high_s"])) for r in rounds]
    found = combine_rounds(medians, intervals)
    verdict = reproducible(found)
    low, high = found.ci_low_s, found.ci_high_s
    if verdict is False:  # the number is not known better than where the rounds fell
        low, high = min(low, *medians), max(high, *medians)
    samples = [s for r in rounds for s in r["samples_s"]]
    chosen = min(rounds, key=lambda r: abs(float(r["median_s"]) - found.median_s))
    median = found.median_s
    pooled = summarize(samples).as_row()
    return {  # type: ignore[typeddict-item]
        **chosen,
        **pooled,
        "samples_s": samples,
        "median_s": median,
        "ci_low_s": low,
        "ci_high_s": high,
        "rel_ci": (high - low) / 2 / median if median > 0 else math.inf,
        "warmup_calls": sum(int(r["warmup_calls"]) for r in rounds),
        "measure_s": sum(float(r["measure_s"]) for r in rounds),
        "converged": all(bool(r["converged"]) for r in rounds),
        "sampling_passes": sum(int(r["sampling_passes"]) for r in rounds),
        **_throughputs(chosen, median),
        **_drift(rounds),
        **_device_time(rounds),
        "rounds": len(rounds),
        "round_medians_s": medians,
        "round_ci_low_s": [low for low, _ in intervals],
        "round_ci_high_s": [high for _, high in intervals],
        "round_sizes": [len(r["samples_s"]) for r in rounds],
        "round_spread": found.spread,
        "rounds_p": found.p_value,
        "reproducible": verdict,
    }


def _throughputs(chosen: Mapping[str, Any], median: float) -> dict[str, float | None]:
    def rate(amount: Any, scale: float) -> float | None:
        return amount / median / scale if amount and median > 0 else None

    return {
        "tflops": rate(chosen.get("flops"), 1e12),
        "gbps": rate(chosen.get("bytes"), 1e9),
        "items_per_s": rate(chosen.get("items"), 1.0),
    }


def _drift(rounds: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Stationarity over the rounds: not stationary if any round drifted (in every pass);
    the shift of the round that moved most; the smallest drift p-value."""
    verdicts = [r.get("stationary") for r in rounds]
    stationary = False if False in verdicts else (True if True in verdicts else None)
    shifts = [r["shift"] for r in rounds if r.get("shift") and r["shift"] > 0]
    p_values = [r["drift_p"] for r in rounds if r.get("drift_p") is not None]
    return {
        "stationary": stationary,
        "shift": max(shifts, key=lambda s: abs(math.log(s))) if shifts else None,
        "drift_p": min(p_values) if p_values else None,
    }


def _device_time(rounds: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    samples = [s for r in rounds for s in (r.get("device_samples_s") or ())]
    return {
        "device_samples_s": samples or None,
        "device_median_s": statistics.median(samples) if samples else None,
    }


def from_row(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rounds a stored row was combined from (to continue it on ``--resume``): each round's
    samples, median and interval; the row's other result columns stand in for each round's."""
    sizes = [int(n) for n in _listed(row.get("round_sizes"))]
    samples = [float(s) for s in _listed(row.get("samples_s"))]
    medians = [float(m) for m in _listed(row.get("round_medians_s"))]
    lows, highs = _listed(row.get("round_ci_low_s")), _listed(row.get("round_ci_high_s"))
    if not sizes or sum(sizes) != len(samples) or not len(medians) == len(lows) == len(sizes):
        return []
    shared = {key: _plain(row.get(key)) for key in Measured.__annotations__ if key in row}
    if isinstance(shared.get("metrics"), str):
        shared["metrics"] = json.loads(shared["metrics"])
    rounds, start = [], 0
    for index, size in enumerate(sizes):
        rounds.append(
            {
                **shared,
                "samples_s": samples[start : start + size],
                "median_s": medians[index],
                "ci_low_s": float(lows[index]),
                "ci_high_s": float(highs[index]),
                "warmup_calls": 0,
                "measure_s": float(shared.get("measure_s") or 0.0) / len(sizes),
                "sampling_passes": 1,
                "device_samples_s": _listed(row.get("device_samples_s")) if index == 0 else None,
            }
        )
        start += size
    return rounds


def _listed(value: Any) -> list[Any]:
    return [] if value is None else list(value)


def _plain(value: Any) -> Any:
    """A stored value as the worker gives it: NaN (pandas' missing number) as ``None``."""
    return None if isinstance(value, float) and math.isnan(value) else value


@dataclass
class CaseRounds:
    """The rounds of one case so far: its ok rounds, the id of the row that holds them in the
    store, and whether it is done."""

    measured: list[dict[str, Any]] = field(default_factory=list)
    row_id: str | None = None
    final: bool = False
    first_s: float = 0.0  # wall time of the first round, setup included


class Tracker:
    """The rounds of every case of a run (keyed by (device, case key))."""

    def __init__(self, policy: RoundPolicy) -> None:
        self.policy = policy
        self.cases: dict[tuple[str, str], CaseRounds] = {}

    def due(self, key: tuple[str, str]) -> bool:
        return not self.cases.setdefault(key, CaseRounds()).final

    def resume(self, key: tuple[str, str], row: Mapping[str, Any]) -> bool:
        """Continue a stored row whose case wants more rounds; ``False``: the row is final."""
        rounds = from_row(row) if row.get("status") == "ok" else []
        if not rounds:
            return False
        first_s = float(row.get("measure_s") or 0.0) / len(rounds)
        if not self.policy.wants_more(len(rounds), row, first_s):
            return False
        self.cases[key] = CaseRounds(rounds, str(row["row_id"]), first_s=first_s)
        return True

    def stored(self, key: tuple[str, str], row_id: str) -> tuple[str, ...]:
        """Record that ``row_id`` now holds the case's rounds; return the row it replaces."""
        state = self.cases.setdefault(key, CaseRounds())
        previous, state.row_id = state.row_id, row_id
        return (previous,) if previous else ()

    def add(
        self, key: tuple[str, str], outcome: Outcome, single: bool = False, seconds: float = 0.0
    ) -> Outcome:
        """Take a round's outcome (``seconds``: its wall time, setup included); return the
        case's outcome to store (every round so far). A failed round after ok ones ends the
        case with the rounds it has; ``single``: a case measured once (a distributed group, a
        skipped case)."""
        state = self.cases.setdefault(key, CaseRounds())
        if outcome.status != Status.OK or outcome.measured is None or single:
            state.final = True
            if not state.measured or outcome.status == Status.OK:
                return outcome
            note = f"{key[1]} on {key[0]}: round {len(state.measured) + 1} ended {outcome.status}"
            note += f" ({outcome.error}); its row holds the {len(state.measured)} rounds measured"
            return Outcome(Status.OK, measured=combine(state.measured), notices=[note])
        state.measured.append(dict(outcome.measured))
        state.first_s = state.first_s or seconds
        combined = combine(state.measured)
        state.final = not self.policy.wants_more(len(state.measured), combined, state.first_s)
        return replace(outcome, measured=combined)
