"""Shared by the harness comparisons: time one case with benchsite and with
``torch.utils.benchmark.Timer.blocked_autorange`` in the same process, and print a table."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch
import torch.utils.benchmark as torch_benchmark

from benchsite import registry
from benchsite.measure import MeasureSettings, measure_case
from benchsite.plugin_manager import load_plugins
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

    @property
    def ratio(self) -> float:
        return self.benchsite_s / self.torch_s


def machine_devices() -> dict[str, Device]:
    """This machine's devices, found by the plugins exactly as `benchsite run` finds them."""
    found = registry.devices(load_plugins())
    return {name: registered.item for name, registered in found.items()}


def compare(
    device: Device, name: str, case: Case, settings: MeasureSettings, rounds: int = 2
) -> Comparison:
    """Time ``case`` with both harnesses, alternating for ``rounds`` rounds so that a change
    in the machine's load hits both alike; report the median of each harness's medians."""
    device.prepare()
    timer = torch_benchmark.Timer(
        stmt="run()", globals={"run": case.run}, num_threads=torch.get_num_threads()
    )
    theirs, ours = [], []
    for _ in range(rounds):
        theirs.append(timer.blocked_autorange(min_run_time=1.0))
        ours.append(measure_case(case, device, settings).summary)
    reference = min(theirs, key=lambda m: abs(m.median - median_of([t.median for t in theirs])))
    return Comparison(
        device.name,
        name,
        median_of([summary.median_s for summary in ours]),
        max(summary.rel_ci for summary in ours),
        median_of([m.median for m in theirs]),
        reference.iqr / reference.median,
    )


def print_table(rows: list[Comparison], title: str) -> None:
    print(f"\n{title}")
    header = f"{'device':<8} {'case':<34} {'benchsite':>11} {'±CI':>6} {'torch Timer':>12} {'IQR':>6} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.device:<8} {row.name:<34} {format_seconds(row.benchsite_s):>11} "
            f"{row.benchsite_rel_ci:>6.1%} {format_seconds(row.torch_s):>12} "
            f"{row.torch_iqr_rel:>6.1%} {row.ratio:>7.3f}"
        )


def median_of(values: list[float]) -> float:
    return statistics.median(values)

