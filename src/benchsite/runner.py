"""``benchsite run``: plan every workload × parameter set × device, measure each case in a worker
process, and store each result before the next case starts.

The pipeline reads top to bottom in :func:`run_benchmarks`; each stage is a short helper.
"""

from __future__ import annotations

import fnmatch
import json
import platform
import socket
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from benchsite import config, distributed, locks, registry, resume, store, store_check, validation
from benchsite.errors import SelectionError
from benchsite.measure import MeasureSettings
from benchsite.plugin_manager import Plugins, load_plugins
from benchsite.records import Device, Workload
from benchsite.registry import Registered
from benchsite.version import __version__
from benchsite.worker import CaseSpec, Worker, WorkerDied

PROFILES = {
    "quick": MeasureSettings(
        rel_ci=0.05, budget_s=0.6, min_samples=5, warmup_s=0.05, min_time_s=0.2
    ),
    "full": MeasureSettings(budget_s=5.0),
}
DEFAULT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class RunOptions:
    """Everything ``benchsite run`` can be told."""

    results: Path = Path("results")
    profile: str = "quick"
    workloads: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    strict: bool = False
    timeout_s: float | None = None
    budget_s: float | None = None
    resume: bool = False
    retry_failed: bool = False
    host: str | None = None


@dataclass(frozen=True)
class PlannedCase:
    """One case to run: which workload (and its plugin), which device, which parameters."""

    workload: Registered[Workload]
    device: Device
    params: dict[str, Any]
    group: distributed.DeviceGroup | None = None  # the devices of a distributed case

    @property
    def case_key(self) -> str:
        return f"{self.workload.item.name}?{json.dumps(self.params, sort_keys=True)}"


class Reporter(Protocol):
    """How a run or a site build tells its caller what happens (the CLI draws progress);
    ``stage`` is a build's: stage ``index`` (from 0) of ``count`` starts."""

    def started(self, run_id: str, total: int, resumed: int) -> None: ...
    def case_started(self, planned: PlannedCase) -> None: ...
    def case_finished(self, planned: PlannedCase, row: dict[str, Any]) -> None: ...
    def notice(self, text: str) -> None: ...
    def stage(self, name: str, index: int, count: int) -> None: ...


class SilentReporter:
    def started(self, run_id: str, total: int, resumed: int) -> None: ...
    def case_started(self, planned: PlannedCase) -> None: ...
    def case_finished(self, planned: PlannedCase, row: dict[str, Any]) -> None: ...
    def notice(self, text: str) -> None: ...
    def stage(self, name: str, index: int, count: int) -> None: ...


@dataclass
class RunReport:
    """What a run did: its id, where it stored rows, and the status of each case."""

    run_id: str
    host: str
    results: Path
    statuses: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False


def run_benchmarks(options: RunOptions, reporter: Reporter | None = None) -> RunReport:
    """Run every selected case and store its result; see the module docstring."""
    reporter = reporter or SilentReporter()
    host = options.host or socket.gethostname()
    store_check.preflight(options.results, host)  # store writable, host name fits: before any case
    plugins = load_plugins(options.plugins, strict=options.strict)  # problems: a note each
    config.check()  # a wrong benchsite.toml stops the run before anything is measured
    devices = select_devices(plugins, options.devices)  # hook: register_devices
    workloads = select_workloads(plugins, options.workloads)  # hook: register_workloads
    plan = plan_cases(workloads, devices, options.profile)
    run_id, done, retry = _run_to_continue(options, host, plan)
    todo = [planned for planned in plan if (planned.device.name, planned.case_key) not in done]
    report = RunReport(run_id, host, options.results)
    reporter.started(run_id, len(plan), len(plan) - len(todo))
    folder = store.run_dir(options.results, host, run_id)
    with locks.run_lock(folder), Worker(options.plugins) as worker:
        store.tidy_run(folder)  # what a killed writer of this run left
        try:
            for planned in todo:  # measure: one worker process, rows stored one by one
                reporter.case_started(planned)
                row = measure_planned(worker, planned, options, plugins, run_id, host, reporter)
                failed = retry.get((planned.device.name, planned.case_key), ())
                store.write_rows(options.results, host, run_id, [row], supersedes_rows=failed)
                report.statuses[row["status"]] = report.statuses.get(row["status"], 0) + 1
                reporter.case_finished(planned, row)
        except KeyboardInterrupt:
            report.interrupted = True
        store.compact_run(options.results, host, run_id)
    return report


def select_devices(plugins: Plugins, patterns: Sequence[str]) -> list[Device]:
    """The devices to run on: all found, or those matching ``patterns`` (globs on names)."""
    found = {name: registered.item for name, registered in registry.devices(plugins).items()}
    if not patterns:
        return list(found.values())
    chosen = [device for name, device in found.items() if _matches(name, patterns)]
    if not chosen:
        raise SelectionError(
            f"no device matches {', '.join(patterns)}; this machine has {', '.join(found)} "
            f"(see `benchsite devices`)"
        )
    return chosen


def select_workloads(plugins: Plugins, patterns: Sequence[str]) -> list[Registered[Workload]]:
    """The workloads to run: all, or those whose name matches one of ``patterns`` (globs)."""
    kinds = {registered.item.kind for registered in registry.devices(plugins).values()}
    found = registry.workloads(plugins, kinds | validation.TORCH_DEVICE_KINDS)
    chosen = [registered for name, registered in found.items() if _matches(name, patterns)]
    if patterns and not chosen:
        raise SelectionError(
            f"no workload matches {', '.join(patterns)}; see `benchsite workloads` for names"
        )
    return chosen


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def plan_cases(
    workloads: Sequence[Registered[Workload]], devices: Sequence[Device], profile: str
) -> list[PlannedCase]:
    """Every (workload, device, parameters) of ``profile``, grouped by device, then workload;
    distributed workloads last, once per device kind (:func:`distributed.device_groups`)."""
    if profile not in PROFILES:
        raise SelectionError(f"unknown profile {profile!r}: use quick or full")
    single = [
        PlannedCase(registered, device, params)
        for device in devices
        for registered in workloads
        if not registered.item.distributed
        for params in registered.item.grid(profile)
    ]
    return single + [
        PlannedCase(registered, group.device, params, group)
        for registered in workloads
        if registered.item.distributed
        for params in registered.item.grid(profile)
        for group in distributed.device_groups(devices, params)
    ]


def measure_planned(
    worker: Worker,
    planned: PlannedCase,
    options: RunOptions,
    plugins: Plugins,
    run_id: str,
    host: str,
    reporter: Reporter,
) -> dict[str, Any]:
    """Measure one planned case (or explain why not) and return its complete result row."""
    workload = planned.workload.item
    if planned.device.kind not in workload.devices:
        supported = ", ".join(workload.devices)
        outcome: dict[str, Any] = {
            "status": "skipped",
            "error": f"{workload.name} runs only on {supported}, not on {planned.device.kind}",
        }
    else:
        settings = PROFILES[options.profile]
        if options.budget_s is not None:
            settings = replace(settings, budget_s=options.budget_s)
        timeout = options.timeout_s or workload.timeout_s or DEFAULT_TIMEOUT_S
        if planned.group is not None:  # one process per rank, through torch's launcher
            worker.close()  # leave the devices' memory and cores to the group
            outcome = distributed.run_group(
                planned.group, workload.name, planned.params, settings, options.plugins, timeout
            )
        else:
            spec = CaseSpec(workload.name, planned.device.name, planned.params, settings)
            try:
                outcome = worker.run(spec, timeout)
            except WorkerDied as exc:
                outcome = {"status": exc.status, "error": str(exc)}
    for text in outcome.pop("notices", []):
        reporter.notice(text)
    return build_row(planned, outcome, options, plugins, run_id, host)


def build_row(
    planned: PlannedCase,
    outcome: dict[str, Any],
    options: RunOptions,
    plugins: Plugins,
    run_id: str,
    host: str,
) -> dict[str, Any]:
    """A full store row: the outcome plus what produced it and where."""
    workload, device = planned.workload.item, planned.device
    axis = workload.axis
    axis_value = planned.params.get(axis) if axis else None
    return {
        **outcome,
        "row_id": uuid.uuid4().hex,
        "run_id": run_id,
        "timestamp": datetime.now(UTC),
        "host": host,
        "device": device.name,
        "device_kind": device.kind,
        "device_model": str(device.info.get("model", device.name)),
        "fingerprint": device.fingerprint,
        "workload": workload.name,
        "plugin": planned.workload.plugin,
        "plugin_version": plugins.version_of(planned.workload.plugin),
        "profile": options.profile,
        "params": planned.params,
        "case_key": planned.case_key,
        "axis": axis,
        "axis_value": float(axis_value) if isinstance(axis_value, int | float) else None,
        "world_size": outcome.get("world_size", 1),
        "device_info": dict(device.info),
        "environment": environment(),
        "benchsite_version": __version__,
        "torch_version": str(device.info.get("torch_version", "")) or None,
        "schema_version": store.SCHEMA_VERSION,
    }


def environment() -> dict[str, Any]:
    """What ran the measurement besides the device: Python, OS, command line."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "argv": sys.argv,
    }


def _new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


def _run_to_continue(
    options: RunOptions, host: str, plan: Sequence[PlannedCase]
) -> tuple[str, frozenset[tuple[str, str]], dict[tuple[str, str], tuple[str, ...]]]:
    """The run to write into, the (device, case) pairs it holds, and failed rows to replace."""
    if not options.resume:
        return _new_run_id(), frozenset(), {}
    planned = [(p.device.name, p.case_key) for p in plan]
    found = resume.find_run(options.results, host, planned, options.profile, options.retry_failed)
    return found.run_id, found.done, {key: (row,) for key, row in found.retry.items()}
