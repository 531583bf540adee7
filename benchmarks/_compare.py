"""Shared by the harness comparisons: time one case with benchsite and with
``torch.utils.benchmark.Timer.blocked_autorange`` in the same process, and print a table.

A third, deliberately naive measurement arbitrates when the two disagree: a plain loop of the
case between two device synchronizes, timed by the host clock (:func:`plain_loop`). It has no
statistics to get wrong; over a second of calls its per-call mean is what a user's own loop
would see. Where benchsite and the Timer differ, the one nearer the plain loop is the one to
trust, and each harness's spread over the rounds shows whether the difference is larger than
the case's own drift.

The comparison is paired and bracketed: in every round the Timer takes a turn just before
and just after benchsite's, and the round's ratio is benchsite's median over the geometric mean
of the two Timer medians; the ratio reported is the median of the per-round ratios. A level
that the machine holds for a few seconds — an H200 host's kernel-launch rate moves between ~15
and ~27 µs a call that way (docs/measurement-history.md) — then weighs on both sides of a round alike,
and a level that moves steadily during the round cancels, even when benchsite's turn runs
longer than the Timer's (its drift test samples a drifting case again). The median of each
harness's own per-round medians, also printed, can land on either level and is not what the
ratio compares."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

import torch
import torch.utils.benchmark as torch_benchmark

from benchsite.host import registry
from benchsite.host.manager import load_plugins
from benchsite.measure.sampling import MeasureSettings, measure_case
from benchsite.records import Case, Device
from benchsite.units import format_seconds


@dataclass
class Comparison:
    device: str
    name: str
    benchsite_s: float
    benchsite_rel_ci: float
    torch_s: float
    torch_iqr_rel: float
    plain_s: float
    benchsite_rounds: list[float]
    torch_rounds: list[float]
    benchsite_passes: list[int]
    torch_after: list[float]  # each round's second Timer turn over its first

    @property
    def ratios(self) -> list[float]:
        """benchsite / Timer in each round (the Timer's geometric mean of its two turns, just
        before and just after benchsite's)."""
        pairs = zip(self.benchsite_rounds, self.torch_rounds, strict=True)
        return [ours / theirs for ours, theirs in pairs]

    @property
    def ratio(self) -> float:
        """The median of the per-round ratios."""
        return median_of(self.ratios)

    @property
    def nearer_plain(self) -> str:
        """Which harness's median lies nearer the plain loop's (on a log scale)."""
        ours = abs(math.log(self.benchsite_s / self.plain_s))
        theirs = abs(math.log(self.torch_s / self.plain_s))
        return "benchsite" if ours <= theirs else "Timer"


def machine_devices() -> dict[str, Device]:
    """This machine's devices, found by the plugins exactly as `benchsite run` finds them."""
    found = registry.devices(load_plugins())
    return {name: registered.item for name, registered in found.items()}


def compare(
    device: Device,
    name: str,
    case: Case,
    settings: MeasureSettings,
    rounds: int = 5,
    turn_s: float = 1.0,
) -> Comparison:
    """Time ``case`` with both harnesses and the plain loop in ``rounds`` rounds, each right
    after the same warm-up: a Timer turn, benchsite's turn, a second Timer turn (the bracket),
    then the plain loop, so that load and clock drift hit both harnesses alike. The Timer and
    the plain loop run for ``turn_s`` a turn; benchsite as ``settings`` say."""
    device.prepare()
    timer = torch_benchmark.Timer(
        stmt="run()", globals={"run": case.run}, num_threads=torch.get_num_threads()
    )
    brackets, ours, plain = [], [], []
    for _ in range(rounds):
        keep_busy(case, device, seconds=min(0.3, turn_s / 2))
        before = timer.blocked_autorange(min_run_time=turn_s)
        ours.append(measure_case(case, device, settings))
        after = timer.blocked_autorange(min_run_time=turn_s)
        brackets.append((before, after))
        plain.append(plain_loop(case, device, seconds=turn_s))
    theirs = [turn for pair in brackets for turn in pair]
    reference = min(theirs, key=lambda m: abs(m.median - median_of([t.median for t in theirs])))
    return Comparison(
        device.name,
        name,
        median_of([found.summary.median_s for found in ours]),
        max(found.summary.rel_ci for found in ours),
        median_of([m.median for m in theirs]),
        reference.iqr / reference.median,
        median_of(plain),
        [found.summary.median_s for found in ours],
        [math.sqrt(before.median * after.median) for before, after in brackets],
        [found.passes for found in ours],
        [after.median / before.median for before, after in brackets],
    )


def plain_loop(case: Case, device: Device, seconds: float = 1.0) -> float:
    """Per-call seconds of a plain loop: as many calls as fill ``seconds`` (estimated from a
    short first loop) between two synchronizes, timed by the host clock."""
    calls = 1
    while True:
        device.synchronize()
        started = time.perf_counter()
        for _ in range(calls):
            case.run()
        device.synchronize()
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return elapsed / calls
        calls = max(calls * 2, math.ceil(calls * seconds / max(elapsed, 1e-9)))


def keep_busy(case: Case, device: Device, seconds: float = 0.3) -> None:
    """Run the case for a while so clocks and caches are in the same state for both harnesses."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        case.run()
        device.synchronize()


def workload_case(device: Device, workload: str, wanted: dict[str, object]) -> Case:
    """Set up a registered workload's case: the first parameter set of its full grid that
    contains ``wanted`` (so the benchmark runs exactly the code `benchsite run` runs)."""
    registered = registry.workloads(load_plugins())[workload].item
    for params in registered.grid("full") + registered.grid("quick"):
        if all(params.get(key) == value for key, value in wanted.items()):
            return registered.setup(device, params)
    raise SystemExit(f"{workload} has no parameter set with {wanted}")


def print_table(rows: list[Comparison], title: str) -> None:
    """The side-by-side table; then, for every ratio outside 0.95–1.05, each harness's spread
    over the rounds and which one the plain loop sides with."""
    print(f"\n{title}")
    header = (
        f"{'device':<8} {'case':<34} {'benchsite':>11} {'±CI':>6} {'torch Timer':>12} "
        f"{'IQR':>6} {'ratio':>7} {'plain loop':>11}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.device:<8} {row.name:<34} {format_seconds(row.benchsite_s):>11} "
            f"{row.benchsite_rel_ci:>6.1%} {format_seconds(row.torch_s):>12} "
            f"{row.torch_iqr_rel:>6.1%} {row.ratio:>7.3f} {format_seconds(row.plain_s):>11}"
        )
    for row in rows:
        if not 0.95 <= row.ratio <= 1.05:
            print(
                f"  {row.device} {row.name}: per-round medians benchsite "
                f"{_spread(row.benchsite_rounds)}, Timer {_spread(row.torch_rounds)}; "
                f"the plain loop ({format_seconds(row.plain_s)}) is nearer {row.nearer_plain}; "
                f"per-round ratios {', '.join(f'{r:.3f}' for r in row.ratios)}; benchsite "
                f"sampled again after a drift in {sum(p > 1 for p in row.benchsite_passes)} of "
                f"{len(row.benchsite_passes)} turns; the Timer's turn after benchsite's over its "
                f"turn before, per round: {', '.join(f'{r:.3f}' for r in row.torch_after)}"
            )


def print_bracket_drift(rows: list[Comparison]) -> None:
    """How the Timer's turn after benchsite's compares with its turn before, over every round
    of ``rows``: near 1 if benchsite's turn leaves the machine as it found it."""
    after = sorted(ratio for row in rows for ratio in row.torch_after)
    if not after:
        return
    above = sum(ratio > 1 for ratio in after)
    print(
        f"Timer after / Timer before, {len(after)} rounds of launch-bound cases: median "
        f"{median_of(after):.3f}, quartiles {after[len(after) // 4]:.3f}–"
        f"{after[(3 * len(after)) // 4]:.3f}, {above} of {len(after)} above 1"
    )


def _spread(values: list[float]) -> str:
    return f"{format_seconds(min(values))}–{format_seconds(max(values))}"


def median_of(values: list[float]) -> float:
    return statistics.median(values)
