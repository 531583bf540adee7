"""Is the machine busy? Checked before a run measures anything, and recorded with every row.

Other work on the cores a run uses moves its numbers. Before measuring,
:func:`check_before_run` looks at the cores this process may use
(:func:`benchsite._infra.cores.usable_cores`): how much CPU time other processes took over
:data:`SAMPLE_S` (``psutil``, this process and its children excluded) and the load average.
The machine is *busy* when other processes used more than :data:`BUSY_SHARE` of the usable
cores (at least half a core). In the full profile a busy run waits, re-checking every few
seconds, up to :data:`WAIT_S` (``BENCHSITE_BUSY_WAIT_S`` overrides it; 0: never wait); then,
or at once in the quick profile, it says so and measures anyway. What was found goes into
every row's ``environment`` (``machine_busy``, ``other_cpu_cores``, ``load_per_core``,
``busy_processes``, ``usable_cores``, ``logical_cpus``), and the ``busy`` validity flag marks
those rows (and any row whose ``cpu`` collector saw others use the cores during its samples).
"""

from __future__ import annotations

import os
import time
from typing import Any, Protocol

from benchsite._infra.cores import usable_cores

SAMPLE_S = 0.3
BUSY_SHARE = 0.10
WAIT_S = 60.0
RECHECK_S = 5.0
_SHOWN_PROCESSES = 5


class Notices(Protocol):
    def notice(self, text: str) -> None: ...


def machine_state(cores: int, sample_s: float = SAMPLE_S) -> dict[str, Any]:
    """Other processes' CPU use (in cores) over ``sample_s``, the load per core, and whether
    that makes the machine busy."""
    import psutil

    mine = {os.getpid(), *(child.pid for child in psutil.Process().children(recursive=True))}
    others = [p for p in psutil.process_iter(["name"]) if p.pid not in mine]
    for process in others:
        _cpu_percent(process)  # the first reading starts the interval
    time.sleep(sample_s)
    used = sorted(((_cpu_percent(p), p) for p in others), key=lambda t: -t[0])
    other_cores = sum(percent for percent, _ in used) / 100
    load = os.getloadavg()[0] / cores if hasattr(os, "getloadavg") else None
    shown = [
        f"{p.info['name']} ({p.pid}) {pct:.0f}%" for pct, p in used[:_SHOWN_PROCESSES] if pct >= 5
    ]
    return {
        "machine_busy": other_cores > max(0.5, BUSY_SHARE * cores),
        "other_cpu_cores": round(other_cores, 2),
        "load_per_core": round(load, 2) if load is not None else None,
        "busy_processes": ", ".join(shown),
        "usable_cores": cores,
        "logical_cpus": os.cpu_count(),
    }


def _cpu_percent(process: Any) -> float:
    try:
        return float(process.cpu_percent(None))
    except Exception:  # noqa: BLE001 - a process that ended or is not ours to read
        return 0.0


def wait_s(profile: str) -> float:
    """How long a busy run of ``profile`` waits for the machine to calm down."""
    configured = os.environ.get("BENCHSITE_BUSY_WAIT_S")
    if configured is not None:
        try:
            return max(0.0, float(configured))
        except ValueError:
            pass
    return WAIT_S if profile == "full" else 0.0


def check_before_run(reporter: Notices, profile: str) -> dict:
    """The machine's state before measuring (see the module docstring); waits while busy, up to
    :func:`wait_s`, and tells the reporter when it is busy."""
    cores = usable_cores()
    state = machine_state(cores)
    deadline = time.monotonic() + wait_s(profile)
    if state["machine_busy"] and time.monotonic() < deadline:
        reporter.notice(
            f"machine busy ({_described(state)}): waiting up to "
            f"{wait_s(profile):g} s for it to calm down"
        )
        while state["machine_busy"] and time.monotonic() < deadline:
            time.sleep(RECHECK_S)
            state = machine_state(cores)
    if state["machine_busy"]:
        reporter.notice(
            f"machine busy ({_described(state)}): measuring anyway; the rows are "
            "flagged busy and their numbers may be slow or noisy"
        )
    return state


def _described(state: dict[str, Any]) -> str:
    text = f"other processes use {state['other_cpu_cores']:g} of {state['usable_cores']} cores"
    return text + (f": {state['busy_processes']}" if state["busy_processes"] else "")
