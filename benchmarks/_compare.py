"""Shared by the harness comparisons: time one case with benchsite and with
``torch.utils.benchmark.Timer.blocked_autorange`` in the same process, and print a table."""

from __future__ import annotations

import statistics
import time
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
    device: Device, name: str, case: Case, settings: MeasureSettings, rounds: int = 3
) -> Comparison:
    """Time ``case`` with both harnesses, alternating for ``rounds`` rounds (each harness run
    right after the same warm-up) so that load and clock changes hit both alike; report the
    median of each harness's medians."""
    device.prepare()
    timer = torch_benchmark.Timer(
        stmt="run()", globals={"run": case.run}, num_threads=torch.get_num_threads()
    )
    theirs, ours = [], []
    for _ in range(rounds):
        keep_busy(case, device)
        theirs.append(timer.blocked_autorange(min_run_time=1.0))
        keep_busy(case, device)
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
