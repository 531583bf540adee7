"""``cpu``: how busy the CPU was during a case, and the energy its packages used.

Metrics (stored as ``cpu.<name>``):

- ``process_util_mean`` — the worker's CPU time over wall time, in percent of one core, summed
  over threads (1600 = sixteen cores fully busy). For a CPU case it shows whether the case used
  the cores it was given; for a GPU case, how much host CPU feeding the GPU costs.
- ``system_util_mean`` — the whole machine's busy share in percent of all CPUs: high values
  from other processes mean the measurement was disturbed.
- ``energy_j`` — CPU package energy from RAPL (``/sys/class/powercap/intel-rapl:N/energy_uj``,
  counter wraparound handled) where readable; ``null`` where not (no RAPL, as on many cloud
  machines, or not readable without root): energy per CPU result is then unknown, not zero.

Both utilizations come from two readings of the kernel's CPU time counters (start and stop),
so nothing runs while the case is measured.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

from benchsite import Collector, Device, hookimpl

POWERCAP = Path("/sys/class/powercap")


@hookimpl
def register_collectors() -> list[Collector]:
    return [
        Collector(
            name="cpu",
            description="Process and system CPU utilization; CPU package energy from RAPL.",
            start=start_cpu,
            merge={"energy_j": "device_sum"},  # gloo ranks of one machine share its packages
        )
    ]


def rapl_packages(root: Path = POWERCAP) -> list[Path]:
    """RAPL package domains (``intel-rapl:N``, not their sub-domains) whose counter is readable."""
    found = []
    for domain in sorted(root.glob("intel-rapl:*")):
        if domain.name.count(":") == 1 and _read_int(domain / "energy_uj") is not None:
            found.append(domain)
    return found


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def energy_delta_uj(before: int, after: int, max_range: int | None) -> int:
    """Microjoules between two readings of a counter that wraps at ``max_range``."""
    if after >= before or not max_range:
        return after - before
    return after + max_range - before


def start_cpu(device: Device) -> Callable[[], Mapping[str, float | None]]:
    import psutil

    process = psutil.Process()
    domains = rapl_packages()
    energy_before = [_read_int(domain / "energy_uj") for domain in domains]
    cpu_before, system_before = process.cpu_times(), psutil.cpu_times()
    started = time.perf_counter()

    def stop() -> dict[str, float | None]:
        wall = max(time.perf_counter() - started, 1e-9)
        cpu_after, system_after = process.cpu_times(), psutil.cpu_times()
        used = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
        return {
            "process_util_mean": 100.0 * used / wall,
            "system_util_mean": _system_busy(system_before, system_after),
            "energy_j": _energy_j(domains, energy_before),
        }

    return stop


def _system_busy(before: object, after: object) -> float | None:
    """Busy percent of all CPUs between two ``psutil.cpu_times()`` readings."""
    fields = before._fields  # type: ignore[attr-defined]
    deltas = {name: getattr(after, name) - getattr(before, name) for name in fields}
    # Linux counts guest time inside user time already (psutil does the same subtraction)
    total = sum(deltas.values()) - deltas.get("guest", 0.0) - deltas.get("guest_nice", 0.0)
    idle = deltas.get("idle", 0.0) + deltas.get("iowait", 0.0)
    return 100.0 * (total - idle) / total if total > 0 else None


def _energy_j(domains: list[Path], before: list[int | None]) -> float | None:
    if not domains:
        return None
    total_uj = 0
    for domain, start in zip(domains, before, strict=True):
        end = _read_int(domain / "energy_uj")
        if start is None or end is None:
            return None
        total_uj += energy_delta_uj(start, end, _read_int(domain / "max_energy_range_uj"))
    return total_uj / 1e6
