"""The worker process that sets up and measures cases, isolated from the run that drives it.

The parent (:mod:`benchsite.measure.runner`) starts a worker with :class:`Worker`, sends it one
:class:`CaseSpec` at a time and gets back an :class:`~benchsite.measure.outcome.Outcome`. An
exception inside a case comes back as an ``error`` or ``oom`` outcome; a worker that dies (segfault,
``os.abort()``, the kernel's OOM killer) or hangs past the case timeout is killed by the parent,
which records a ``crash`` or ``timeout`` row and starts a fresh worker for the next case.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from benchsite._infra import signals
from benchsite.errors import SkipCase, describe_exception
from benchsite.host import registry, validation
from benchsite.host.manager import load_plugins
from benchsite.host.registry import Registered
from benchsite.measure import baseline, lifeline
from benchsite.measure.outcome import Measured, Outcome, Status
from benchsite.measure.sampling import Measurement, MeasureSettings, measure_case
from benchsite.records import CollectorUnavailable, Device

STARTUP_TIMEOUT_S = 300.0
_OOM_MARKERS = ("out of memory", "can't allocate memory", "cannot allocate memory")


@dataclass(frozen=True)
class CaseSpec:
    """What the parent sends: one workload, device and parameter set, and how to measure."""

    workload: str
    device: str
    params: dict[str, Any]
    settings: MeasureSettings = field(default_factory=MeasureSettings)


class WorkerDied(Exception):
    """The worker process ended or stopped answering; ``status`` is ``crash`` or ``timeout``."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


class Worker:
    """A worker process, started lazily and replaced after it dies."""

    def __init__(self, plugin_specs: tuple[str, ...], models: tuple[str, ...] = ()) -> None:
        self.plugin_specs = plugin_specs
        self.models = models  # --model values (benchsite.toolkit.user_models)
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None

    def run(self, spec: CaseSpec, timeout_s: float) -> Outcome:
        """Run one case; raise :class:`WorkerDied` on a crash or timeout (worker then reset)."""
        conn = self._ensure_started()
        conn.send(spec)
        return self._receive(timeout_s, what=f"case timed out after {timeout_s:g} s")

    def _ensure_started(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self.close()
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        self._process = context.Process(
            target=serve,
            args=(child, self.plugin_specs, self.models),
            name="benchsite-worker",
            daemon=True,
        )
        self._process.start()
        child.close()
        self._conn = parent
        self._receive(STARTUP_TIMEOUT_S, what="worker did not start")
        return parent

    def _receive(self, timeout_s: float, what: str) -> Any:
        assert self._conn is not None and self._process is not None
        try:
            ready = self._conn.poll(timeout_s)
            if ready:
                return self._conn.recv()
        except (EOFError, ConnectionResetError, BrokenPipeError):
            pass
        else:
            self.close()
            raise WorkerDied(Status.TIMEOUT, what)
        self._process.join(timeout=5)
        message = _exit_message(self._process.exitcode)
        self.close()
        raise WorkerDied(Status.CRASH, message)

    def close(self) -> None:
        """Stop the worker: ask nicely, then kill; leaves nothing running."""
        if self._conn is not None:
            with contextlib.suppress(OSError, BrokenPipeError):
                self._conn.send(None)
            self._conn.close()
        if self._process is not None:
            self._process.join(timeout=0.5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(timeout=5)
        self._process, self._conn = None, None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _exit_message(exitcode: int | None) -> str:
    if exitcode is None:
        return "worker stopped answering"
    if exitcode < 0:
        name = signal.Signals(-exitcode).name
        hint = " (possibly the kernel's out-of-memory killer)" if name == "SIGKILL" else ""
        return f"worker process killed by {name}{hint}"
    return f"worker process exited with status {exitcode}"


# -- inside the worker process -------------------------------------------------------------------


@dataclass
class WorkerState:
    """What a worker keeps between cases."""

    workloads: dict[str, Registered[Any]]
    devices: dict[str, Registered[Device]]
    collectors: dict[str, Registered[Any]]
    prepared: set[str] = field(default_factory=set)
    reported: set[str] = field(default_factory=set)


def serve(conn: Connection, plugin_specs: tuple[str, ...], models: tuple[str, ...] = ()) -> None:
    """Worker main loop: build the plugins, then answer case specs until told to stop."""
    signals.leave_interrupts_to_parent()
    lifeline.die_with_parent(_parent_pid())  # never outlive a killed run
    plugins = load_plugins(plugin_specs, quiet=True, models=models)  # the parent reported any
    state = WorkerState(
        registry.workloads(plugins), registry.devices(plugins), registry.collectors(plugins)
    )
    conn.send("ready")
    while (spec := conn.recv()) is not None:
        conn.send(execute(spec, state))


def _parent_pid() -> int | None:
    parent = multiprocessing.parent_process()
    return parent.pid if parent is not None else None


def execute(spec: CaseSpec, state: WorkerState) -> Outcome:
    """Set up, measure and tear down one case; failures become outcomes."""
    workload = state.workloads[spec.workload].item
    device = state.devices[spec.device].item
    notices: list[str] = []
    _prepare_device(device, state)
    baseline.start_case()  # what earlier cases left, freed; each case's memory measured from here
    started = time.perf_counter()
    try:
        case = workload.setup(device, spec.params)
    except SkipCase as exc:
        return Outcome(Status.SKIPPED, str(exc), notices=notices)
    except BaseException as exc:  # noqa: BLE001 - a failing setup is a result, not a crash
        return _failure(exc, notices)
    try:
        with _threads(case.threads) as threads:
            measurement = measure_case(
                case, device, spec.settings, _collecting(device, state, notices, out := {})
            )
    except BaseException as exc:  # noqa: BLE001
        return _failure(exc, notices)
    finally:
        if case.teardown is not None:
            with contextlib.suppress(Exception):
                case.teardown()
    metrics = {**case.metrics, **out}
    outcome = _success(case, measurement, threads, metrics, notices)
    outcome.case_s = time.perf_counter() - started
    return outcome


def _prepare_device(device: Device, state: WorkerState) -> None:
    if device.name not in state.prepared:
        device.prepare()
        state.prepared.add(device.name)


@contextlib.contextmanager
def _threads(threads: int | None) -> Iterator[int]:
    """Run with ``threads`` intra-op threads (default: as the device prepared); yield the count
    actually in effect during the measurement."""
    import torch

    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def _collecting(
    device: Device, state: WorkerState, notices: list[str], out: dict[str, float | None]
) -> Callable[[Callable[[], None]], None]:
    """Wrap the sample loop in every collector; unavailable ones are reported once per worker."""

    def around(sample_loop: Callable[[], None]) -> None:
        stops = []
        for name, registered in state.collectors.items():
            try:
                stops.append((name, registered.item.start(device)))
            except CollectorUnavailable as exc:
                _notice_once(state, notices, f"collector {name} unavailable: {exc}")
            except Exception as exc:  # noqa: BLE001 - a broken collector never fails a case
                _notice_once(state, notices, f"collector {name} failed: {describe_exception(exc)}")
        try:
            sample_loop()
        finally:
            for name, stop in reversed(stops):
                try:
                    out.update(
                        _numbers(name, stop(), lambda text: _notice_once(state, notices, text))
                    )
                except Exception as exc:  # noqa: BLE001
                    _notice_once(
                        state, notices, f"collector {name} failed: {describe_exception(exc)}"
                    )

    return around


def _numbers(
    collector: str, values: Mapping[str, Any], notice: Callable[[str], None]
) -> dict[str, Any]:
    """A collector's metrics as ``<collector>.<metric>``; a value that is no number is left
    out and said once (``validation.metric_problem``)."""
    kept = {}
    for key, value in values.items():
        problem = validation.metric_problem(key, value)
        if problem is None:
            kept[f"{collector}.{key}"] = value
        else:
            notice(f"collector {collector}: {problem}")
    return kept


def _notice_once(state: WorkerState, notices: list[str], text: str) -> None:
    if text not in state.reported:
        state.reported.add(text)
        notices.append(text)


def _failure(exc: BaseException, notices: list[str]) -> Outcome:
    text = describe_exception(exc)
    is_oom = isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError"
    is_oom = is_oom or any(marker in str(exc).lower() for marker in _OOM_MARKERS)
    if is_oom:
        _release_device_memory()
    return Outcome(Status.OOM if is_oom else Status.ERROR, text, notices=notices)


def _release_device_memory() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _success(
    case: Any, measurement: Measurement, threads: int, metrics: dict[str, Any], notices: list[str]
) -> Outcome:
    return Outcome(
        Status.OK, measured=measured_columns(case, measurement, threads, metrics), notices=notices
    )


def measured_columns(
    case: Any, measurement: Measurement, threads: int, metrics: dict[str, Any]
) -> Measured:
    """The result columns of a measured case."""
    median = measurement.summary.median_s
    # every timed call the collectors saw, over every sampling pass (energy per call divides by it)
    blocks = measurement.blocks_timed or len(measurement.samples_s)
    measured_calls = blocks * measurement.calls_per_sample
    if case.derived_metrics is not None:
        metrics = {**metrics, **case.derived_metrics(median)}
    device = measurement.device_samples_s
    return Measured(
        samples_s=measurement.samples_s,
        calls_per_sample=measurement.calls_per_sample,
        warmup_calls=measurement.warmup_calls,
        **measurement.summary.as_row(),  # type: ignore[typeddict-item]
        converged=measurement.converged,
        measure_s=measurement.measure_s,
        cache_flushed=measurement.cache_flushed,
        flops=case.flops,
        bytes=case.bytes,
        items=case.items,
        tflops=case.flops / median / 1e12 if case.flops else None,
        gbps=case.bytes / median / 1e9 if case.bytes else None,
        items_per_s=case.items / median if case.items else None,
        threads=threads,
        metrics={**metrics, "measured_calls": measured_calls},
        shift=measurement.drift.shift,
        drift_p=measurement.drift.p_value,
        stationary=measurement.drift.stationary,
        sampling_passes=measurement.passes,
        device_median_s=statistics.median(device) if device else None,
        device_samples_s=device,
    )
