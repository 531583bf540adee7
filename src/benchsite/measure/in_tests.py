"""Timing a function inside a test, on every device, into the store: what the
``benchsite_timer`` fixture of :mod:`benchsite.testing` does.

The function is measured in the test's own process (not in a worker, unlike ``benchsite
run``) by the engine's sampling (:func:`benchsite.measure.sampling.measure_case`: warm-up,
calibrated blocks of calls, device synchronization, samples until the median is known), with
the ``quick`` profile's settings; each device's result becomes a store row like those of a
run, of one run per test session, so a project's test suite feeds its site.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsite.host.manager import Plugins, load_plugins
from benchsite.host.registry import Registered
from benchsite.measure import runner
from benchsite.measure.outcome import Outcome, Status
from benchsite.measure.sampling import MeasureSettings, measure_case
from benchsite.measure.worker import measured_columns
from benchsite.records import Case, Device, Workload
from benchsite.store import parts as store

Setup = Callable[[Device], Case | Callable[[], Any]]


@dataclass(frozen=True)
class Timed:
    """One device's result: its median time per call with the 95% interval, and its row."""

    device: str
    median_s: float
    ci_low_s: float
    ci_high_s: float
    row: dict[str, Any]


@dataclass
class TestTimer:
    """Times ``setup``'s callable on each device and keeps the rows (``results``: where they
    are written; ``None`` keeps them only here). One run id for every call."""

    results: Path | None
    devices: Sequence[str] = ()
    settings: MeasureSettings = runner.PROFILES["quick"]
    plugins: Plugins = field(default_factory=lambda: load_plugins((), quiet=True))
    run_id: str = field(default_factory=runner._new_run_id)
    host: str = field(default_factory=socket.gethostname)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def time(
        self, setup: Setup, name: str, params: dict[str, Any] | None = None
    ) -> dict[str, Timed]:
        """Each device's :class:`Timed` of ``setup(device)``: a :class:`~benchsite.Case` or
        a callable (its one call is what is timed; build the inputs in ``setup``, on the
        device, so that making them is not timed). A device whose setup or call raises is an
        error row, and is left out of the result."""
        grid = {key: [value] for key, value in (params or {}).items()}
        workload = Workload(
            name=name, description=f"timed in a test: {name}", setup=setup, params=grid
        )
        found: dict[str, Timed] = {}
        rows = []
        for device in runner.select_devices(self.plugins, self.devices):
            planned = runner.PlannedCase(Registered(workload, "tests"), device, dict(params or {}))
            row = runner.build_row(planned, self._outcome(setup, device).columns(), self._context())
            rows.append(row)
            if row["status"] == str(Status.OK):
                found[device.name] = Timed(
                    device.name, row["median_s"], row["ci_low_s"], row["ci_high_s"], row
                )
        if self.results is not None and rows:
            store.write_rows(self.results, self.host, self.run_id, rows)
        self.rows += rows
        return found

    def _outcome(self, setup: Setup, device: Device) -> Outcome:
        try:
            made = setup(device)
        except Exception as exc:  # noqa: BLE001 - a failing setup is an error row
            return _failed(exc)
        case = made if isinstance(made, Case) else Case(run=made)
        try:
            measurement = measure_case(case, device, self.settings)
        except Exception as exc:  # noqa: BLE001 - a failing function is an error row
            return _failed(exc)
        finally:
            if case.teardown is not None:
                case.teardown()
        return Outcome(Status.OK, measured=measured_columns(case, measurement, _threads(), {}))

    def _context(self) -> runner.RunContext:
        options = runner.RunOptions(results=self.results or Path("results"))
        return runner.RunContext(
            options, self.plugins, self.run_id, self.host, runner.SilentReporter()
        )


def _failed(exc: Exception) -> Outcome:
    return Outcome(Status.ERROR, f"{type(exc).__name__}: {exc}")


def _threads() -> int:
    import torch

    return torch.get_num_threads()
