"""``benchsite run``: plan every workload × parameter set × device, measure each case in rounds
(round 1 of every case, then round 2 of every case in a fresh worker process, ...:
:mod:`benchsite.measure.rounds`), and store each case's row after each of its rounds (the new row
supersedes the case's previous one), so an interrupted run loses at most the round in flight.

The pipeline reads top to bottom in :func:`run_benchmarks`; each stage is a short helper.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import platform
import socket
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from benchsite.errors import SelectionError
from benchsite.host import config, registry, validation
from benchsite.host.manager import Plugins, load_plugins
from benchsite.host.registry import Registered
from benchsite.measure import busy
from benchsite.measure.distributed import launch as distributed
from benchsite.measure.distributed.multinode import Nodes
from benchsite.measure.outcome import Outcome, Status
from benchsite.measure.rounds import RoundPolicy, Tracker
from benchsite.measure.sampling import MeasureSettings
from benchsite.measure.worker import CaseSpec, Worker, WorkerDied
from benchsite.records import Device, Workload
from benchsite.store import check as store_check
from benchsite.store import parts as store
from benchsite.store import resume
from benchsite.store import runlock as locks
from benchsite.store.remote import is_remote
from benchsite.version import __version__

PROFILES = {
    "quick": MeasureSettings(
        rel_ci=0.05, budget_s=0.6, min_samples=5, warmup_s=0.05, min_time_s=0.2
    ),
    # divided over the rounds (ROUNDS), each round warming up in its own process; why 1.8 s
    # and 0.9 s: docs/measurement-history.md ("The sampling budget")
    "full": MeasureSettings(budget_s=1.8, min_time_s=0.9, warmup_s=0.1),
}
ROUNDS = {"quick": RoundPolicy(3, 3, cheap_s=5.0), "full": RoundPolicy(3, 5, cheap_s=15.0)}
PROFILES["models"] = PROFILES["full"]  # the full grids of the workloads tagged LARGE only
ROUNDS["models"] = ROUNDS["full"]
LARGE = "large-model"  # a workload tag: its full grid runs in the models profile, not in full
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
    labels: tuple[tuple[str, str], ...] = ()  # --label key=value, stored with every row
    nodes: Nodes | None = None  # distributed cases over several machines (--nnodes ...)
    models: tuple[str, ...] = ()  # --model MODULE:FACTORY values (benchsite.toolkit.user_models)
    rounds: int | None = None  # --rounds N: every case in exactly N rounds (default: profile's)


@dataclass(frozen=True)
class PlannedCase:
    """One case to run: which workload (and its plugin), which device, which parameters."""

    workload: Registered[Workload]
    device: Device
    params: dict[str, Any]
    group: distributed.DeviceGroup | None = None  # the devices of a distributed case
    skip: str | None = None  # why the case is stored as skipped, unmeasured (see plan_case)

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
    held: int = 0  # cases the run held before (a --resume)
    held_ok: int = 0  # of which succeeded
    compaction_interrupted: bool = False
    workload_s: dict[str, float] = field(default_factory=dict)  # wall time spent per workload

    def add(self, row: dict[str, Any], workload: str, seconds: float, final: bool = True) -> None:
        """Count the time a case's round took, and its row's status once it is ``final``."""
        if final:
            self.statuses[row["status"]] = self.statuses.get(row["status"], 0) + 1
        self.workload_s[workload] = self.workload_s.get(workload, 0.0) + seconds


def run_benchmarks(options: RunOptions, reporter: Reporter | None = None) -> RunReport:
    """Run every selected case and store its result; see the module docstring."""
    reporter = reporter or SilentReporter()
    host = options.host or socket.gethostname()
    store_check.preflight(options.results, host)  # store writable, host name fits: before any case
    plugins = load_plugins(options.plugins, strict=options.strict, models=options.models)
    config.check()  # a wrong benchsite.toml stops the run before anything is measured
    check_workload_names(plugins, options.workloads)  # hook: register_workloads; a typo is
    # told here, before the device plugins import torch
    devices = select_devices(plugins, options.devices)  # hook: register_devices
    workloads = select_workloads(plugins, options.workloads)
    registry.collectors(plugins)  # hook: register_collectors, here for its problems: the
    # worker that uses the collectors is quiet (and with --strict a problem stops the run now)
    plan = plan_cases(workloads, devices, options.profile, options.nodes)
    store.check_schema(options.results)  # a newer benchsite's store: refused before any work
    tracker = Tracker(round_policy(options))
    run_id = _run_to_continue(options, host, plan).run_id
    folder = store.run_dir(options.results, host, run_id)
    with locks.run_lock(folder) as lock, Worker(options.plugins, options.models) as worker:
        store.tidy_run(folder)  # what a killed writer of this run left
        held = _held_now(options, host, run_id, tracker)  # under the lock: one row per case
        remaining = [p for p in plan if (p.device.name, p.case_key) not in held.done]
        report = RunReport(run_id, host, options.results, held=len(held.done), held_ok=held.ok)
        reporter.started(run_id, len(plan), len(plan) - len(remaining))
        machine = busy.check_before_run(reporter, options.profile)  # recorded per row
        context = RunContext(options, plugins, run_id, host, reporter, machine, tracker)
        _measure_and_store(worker, remaining, context, held, report, lock)
        _compact(report)
    _forget_if_empty(folder, options, report)
    return report


def _measure_and_store(
    worker: Worker,
    remaining: Sequence[PlannedCase],
    context: RunContext,
    held: resume.Resumption,
    report: RunReport,
    lock: locks.Held,
) -> None:
    """Measure ``remaining`` round by round and store each row before the next case (a case's new
    round supersedes its row of the round before); Ctrl-C keeps what is stored."""
    options, host, run_id, tracker = context.options, context.host, context.run_id, context.tracker
    retry = {key: (row_id,) for key, row_id in held.retry.items()}
    try:
        for planned, row, seconds in measure_in_rounds(worker, remaining, context):
            key = (planned.device.name, planned.case_key)
            replaced = (*retry.pop(key, ()), *tracker.stored(key, row["row_id"]))
            lock.confirm()  # in an object store: still this run's one writer
            store.write_rows(options.results, host, run_id, [row], supersedes_rows=replaced)
            final = not tracker.due(key)
            report.add(row, planned.workload.item.name, seconds, final)
            if final:
                context.reporter.case_finished(planned, row)
    except KeyboardInterrupt:
        report.interrupted = True


def _compact(report: RunReport) -> None:
    """Compact the run; Ctrl-C here leaves every stored row readable (the next ``--resume``
    or compaction finishes it)."""
    try:
        store.compact_run(report.results, report.host, report.run_id)
    except KeyboardInterrupt:
        report.interrupted = report.compaction_interrupted = True


def _forget_if_empty(folder: Path, options: RunOptions, report: RunReport) -> None:
    """A new run that stored nothing leaves no folder behind (no one else knows its id)."""
    if options.resume or report.statuses or is_remote(folder):
        return
    with contextlib.suppress(OSError):
        (folder / locks.LOCK_NAME).unlink(missing_ok=True)
        folder.rmdir()


def round_policy(options: RunOptions) -> RoundPolicy:
    """The rounds of ``options``' profile, or exactly ``--rounds`` of them."""
    if options.rounds is not None:
        if options.rounds < 1:
            raise SelectionError(f"--rounds takes a whole number from 1, got {options.rounds}")
        return RoundPolicy(options.rounds, options.rounds, cheap_s=None)
    return ROUNDS.get(options.profile, RoundPolicy())


def measure_in_rounds(
    worker: Worker, remaining: Sequence[PlannedCase], context: RunContext
) -> Iterator[tuple[PlannedCase, dict[str, Any], float]]:
    """Measure the plan round by round: every case still due in this round, in plan order, in
    one worker process started for the round (:mod:`benchsite.measure.rounds`); yield each
    case's row (its rounds so far) after each round."""
    tracker = context.tracker
    for index in range(tracker.policy.max_rounds):
        due = [p for p in remaining if tracker.due((p.device.name, p.case_key))]
        if not due:
            return
        if index > 0:
            worker.close()  # each round of a case in another process than its other rounds
        if tracker.policy.max_rounds > 1:
            context.reporter.notice(
                f"round {index + 1}: {len(due)} cases, in a worker process started for this round"
            )
        yield from measure_in_order(worker, due, context)


@dataclass(frozen=True)
class RunContext:
    """What every row of one run shares."""

    options: RunOptions
    plugins: Plugins
    run_id: str
    host: str
    reporter: Reporter
    machine: dict[str, Any] = field(default_factory=dict)
    tracker: Tracker = field(default_factory=lambda: Tracker(RoundPolicy(1, 1)))


def measure_in_order(
    worker: Worker, remaining: Sequence[PlannedCase], context: RunContext
) -> Iterator[tuple[PlannedCase, dict[str, Any], float]]:
    """Measure the plan in order, yielding (case, row, seconds it took) as each finishes: one
    case at a time in the worker, and the distributed cases of one device group (same kind and
    world size) in one launch (:func:`benchsite.measure.distributed.launch.run_group`). A case
    the plan skips is stored as skipped where it comes, never launched."""
    batches: dict[tuple[str, int], list[PlannedCase]] = {}
    for planned in remaining:
        if planned.group is not None and planned.skip is None:
            batches.setdefault((planned.group.kind, planned.group.world_size), []).append(planned)
    for planned in remaining:
        if planned.group is None or planned.skip is not None:
            context.reporter.case_started(planned)
            started = time.perf_counter()
            row = measure_planned(worker, planned, context)
            yield planned, row, time.perf_counter() - started
            continue
        batch = batches.pop((planned.group.kind, planned.group.world_size), None)
        if batch is not None:  # its first case: the whole group now, in one launch
            worker.close()  # leave the devices' memory and cores to the group
            yield from _measure_group(batch, context)


def _measure_group(
    batch: list[PlannedCase], context: RunContext
) -> Iterator[tuple[PlannedCase, dict[str, Any], float]]:
    group = batch[0].group
    assert group is not None
    cases = [
        distributed.GroupCase(p.workload.item.name, p.params, _timeout(p, context.options))
        for p in batch
    ]
    context.reporter.case_started(batch[0])
    started = time.perf_counter()
    outcomes = distributed.run_group(
        group, cases, _settings(context.options), context.options.plugins
    )
    for index, outcome in enumerate(outcomes):
        now = time.perf_counter()
        if outcome.stored_elsewhere:
            context.reporter.notice(f"{batch[index].case_key}: stored by the node of rank 0")
        else:
            key = (batch[index].device.name, batch[index].case_key)
            outcome = context.tracker.add(key, outcome, single=True)  # measured once
            yield batch[index], finish_row(batch[index], outcome, context), now - started
        started = now
        if index + 1 < len(batch):
            context.reporter.case_started(batch[index + 1])


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
    """The workloads to run: all, or those whose name matches one of ``patterns`` (globs),
    their device kinds checked against those of the devices found."""
    kinds = {registered.item.kind for registered in registry.devices(plugins).values()}
    found = registry.workloads(plugins, kinds | validation.TORCH_DEVICE_KINDS)
    chosen = [registered for name, registered in found.items() if _matches(name, patterns)]
    if patterns and not chosen:
        raise _no_workload(patterns)
    return chosen


def check_workload_names(plugins: Plugins, patterns: Sequence[str]) -> None:
    """Raise :class:`SelectionError` when no registered workload matches ``patterns``; it needs
    no device, so a mistyped name costs no device discovery (which imports torch)."""
    if patterns and not any(_matches(name, patterns) for name in registry.workloads(plugins)):
        raise _no_workload(patterns)


def _no_workload(patterns: Sequence[str]) -> SelectionError:
    return SelectionError(
        f"no workload matches {', '.join(patterns)}; see `benchsite workloads` for names"
    )


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def plan_cases(
    workloads: Sequence[Registered[Workload]],
    devices: Sequence[Device],
    profile: str,
    nodes: Nodes | None = None,
) -> list[PlannedCase]:
    """Every (workload, parameters, device) of ``profile``: each parameter set on every device
    one after the other (interleaved), so that the CPU and GPU cases of a pair are measured
    close together in time and a change in the machine does not bias their ratio; distributed
    workloads last, once per device kind (:func:`distributed.device_groups`)."""
    if profile not in PROFILES:
        raise SelectionError(f"unknown profile {profile!r}: use quick, full or models")
    single = [
        plan_case(registered, device, params)
        for registered in workloads
        if not registered.item.distributed
        for params in grid_of(registered.item, profile)
        for device in devices
    ]
    return single + [
        plan_case(registered, group.device, params, group)
        for registered in workloads
        if registered.item.distributed
        for params in grid_of(registered.item, profile)
        for group in distributed.device_groups(devices, params, nodes)
    ]


def grid_of(workload: Workload, profile: str) -> list[dict[str, Any]]:
    """The parameter sets of ``workload`` in ``profile``: a workload tagged :data:`LARGE` (a
    well-known model whose full grid takes many minutes) runs its quick grid in ``full`` and
    its full grid in ``models``, where no other workload runs."""
    large = LARGE in workload.tags
    if profile == "models":
        return workload.grid("full") if large else []
    return workload.grid("quick" if large and profile == "full" else profile)


def plan_case(
    workload: Registered[Workload],
    device: Device,
    params: dict[str, Any],
    group: distributed.DeviceGroup | None = None,
) -> PlannedCase:
    """One case of the plan, with the one decision whether it is measured: a device kind the
    workload does not run on, or a device group this machine cannot form, makes it skipped."""
    item = workload.item
    skip = None
    if device.kind not in item.devices:
        skip = f"{item.name} runs only on {', '.join(item.devices)}, not on {device.kind}"
    elif group is not None:
        skip = group.problem
    return PlannedCase(workload, device, params, group, skip)


def measure_planned(worker: Worker, planned: PlannedCase, context: RunContext) -> dict[str, Any]:
    """The complete result row of one round of a case measured in the worker (holding every
    round of the case so far: :class:`benchsite.measure.rounds.Tracker`), or of one the plan
    skips."""
    if planned.skip is not None:
        world_size = planned.group.world_size if planned.group is not None else 1
        outcome = Outcome(Status.SKIPPED, planned.skip, world_size=world_size)
    else:
        workload = planned.workload.item
        settings = context.tracker.policy.settings(_settings(context.options))
        spec = CaseSpec(workload.name, planned.device.name, planned.params, settings)
        try:
            outcome = worker.run(spec, _timeout(planned, context.options))
        except WorkerDied as exc:
            outcome = Outcome(exc.status, str(exc))
    key = (planned.device.name, planned.case_key)
    seconds = outcome.case_s or 0.0  # setup and measurement in the worker, not its start
    single = planned.skip is not None
    return finish_row(planned, context.tracker.add(key, outcome, single, seconds), context)


def _settings(options: RunOptions) -> MeasureSettings:
    settings = PROFILES[options.profile]
    return settings if options.budget_s is None else replace(settings, budget_s=options.budget_s)


def _timeout(planned: PlannedCase, options: RunOptions) -> float:
    return options.timeout_s or planned.workload.item.timeout_s or DEFAULT_TIMEOUT_S


def finish_row(planned: PlannedCase, outcome: Outcome, context: RunContext) -> dict[str, Any]:
    """Report the outcome's notices and turn it into a complete store row."""
    for text in outcome.notices:
        context.reporter.notice(text)
    return build_row(planned, outcome.columns(), context)


def build_row(planned: PlannedCase, outcome: dict[str, Any], context: RunContext) -> dict[str, Any]:
    """A full store row: the outcome's columns plus what produced them and where."""
    workload, device = planned.workload.item, planned.device
    axis = workload.axis
    axis_value = planned.params.get(axis) if axis else None
    return {
        **outcome,
        "row_id": uuid.uuid4().hex,
        "run_id": context.run_id,
        "timestamp": datetime.now(UTC),
        "host": context.host,
        "device": device.name,
        "device_kind": device.kind,
        "device_model": str(device.info.get("model", device.name)),
        "fingerprint": device.fingerprint,
        "workload": workload.name,
        "plugin": planned.workload.plugin,
        "plugin_version": context.plugins.version_of(planned.workload.plugin),
        "profile": context.options.profile,
        "params": planned.params,
        "case_key": planned.case_key,
        "axis": axis,
        "axis_value": float(axis_value) if isinstance(axis_value, int | float) else None,
        "item_unit": workload.item,
        "world_size": outcome.get("world_size", 1),
        "device_info": dict(device.info),
        "environment": {**environment(), **context.machine},
        "benchsite_version": __version__,
        "torch_version": str(device.info.get("torch_version", "")) or None,
        "schema_version": store.SCHEMA_VERSION,
        "labels": dict(context.options.labels) or None,
    }


def parse_labels(texts: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``--label key=value`` options as (key, value) pairs; a later key wins."""
    labels: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise SelectionError(f"--label takes KEY=VALUE (like commit=3f2a9c1), got {text!r}")
        labels[key.strip()] = value.strip()
    return tuple(labels.items())


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
) -> resume.Resumption:
    """The run to write into: a new one, or the interrupted run ``--resume`` continues."""
    if not options.resume:
        return resume.Resumption(_new_run_id(), frozenset())
    planned = [(p.device.name, p.case_key) for p in plan]
    return resume.find_run(options.results, host, planned, options.profile, options.retry_failed)


def _held_now(options: RunOptions, host: str, run_id: str, tracker: Tracker) -> resume.Resumption:
    """What run ``run_id`` holds, read again under its lock (another writer may have stored
    cases between the first look and the lock); a stored case that wants more rounds is not
    done (``tracker``)."""
    if not options.resume:
        return resume.Resumption(run_id, frozenset())
    held = resume.holdings(options.results, host, run_id, options.retry_failed)
    unfinished = _unfinished(options.results, host, run_id, held.done, tracker)
    return replace(held, done=held.done - unfinished)


def _unfinished(
    results: Path, host: str, run_id: str, done: frozenset[tuple[str, str]], tracker: Tracker
) -> frozenset[tuple[str, str]]:
    """The stored cases of run ``run_id`` whose rows hold fewer rounds than they want."""
    frame = store.read_results(results)
    rows = frame[(frame["host"] == host) & (frame["run_id"] == run_id) & frame["rounds"].notna()]
    unfinished = set()
    for row in rows.to_dict("records"):
        key = (str(row["device"]), str(row["case_key"]))
        if key in done and tracker.resume(key, row):
            unfinished.add(key)
    return frozenset(unfinished)
