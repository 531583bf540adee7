"""The small typed records that plugins return from hooks.

Every hook in :mod:`benchsite.hookspecs` returns these (or lists of them), never loose dicts, so
that the engine can check them in one place (:mod:`benchsite.host.registry`).
"""

from __future__ import annotations

import abc
import functools
import itertools
import json
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any

from benchsite.errors import PluginDeprecationWarning

Params = Mapping[str, Any]
Grid = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]]


@dataclass(frozen=True)
class Device:
    """One device a case can run on.

    ``name`` is what users type (``cpu``, ``cuda:0``, ``mps``); ``kind`` is what workloads match
    on (``cpu``, ``cuda``, ``mps``). ``info`` is everything captured about the device (model,
    memory, driver, cores, affinity, ...) and ``fingerprint`` the subset of it that decides
    whether two runs are comparable.

    The callables are used inside the worker process: ``prepare`` runs once before the device's
    first case (set threads, select the GPU), ``synchronize`` waits for queued work, ``timer``
    returns a fresh :class:`Timer`, and ``flush_cache`` evicts caches between samples (optional).
    ``hold(seconds)`` (optional) keeps the device busy for about ``seconds`` so that calls made
    meanwhile queue up behind it, and returns a function that says whether it is still busy: the
    engine times the device's own work of launch-bound cases that way.
    """

    name: str
    kind: str
    info: Mapping[str, Any]
    fingerprint: str
    timer: Callable[[], Timer]
    prepare: Callable[[], None] = lambda: None
    synchronize: Callable[[], None] = lambda: None
    flush_cache: Callable[[], None] | None = None
    hold: Callable[[float], Callable[[], bool]] | None = None


class Timer(abc.ABC):
    """Times a block of calls on a device; ``start``/``stop`` bracket the block and ``elapsed``
    returns seconds once ``stop`` has run. Device plugins subclass it (host clock with a device
    synchronize, or device events)."""

    @abc.abstractmethod
    def start(self) -> None: ...

    @abc.abstractmethod
    def stop(self) -> None: ...

    @abc.abstractmethod
    def elapsed(self) -> float: ...


@dataclass
class Case:
    """One runnable case: a workload set up for one device and one parameter set.

    ``run`` performs one call (one matmul, one training step); the engine times blocks of calls.
    ``flops``, ``bytes`` and ``items`` are per call and give TFLOP/s, GB/s and items/s (what an
    item is, ``images/s``, the workload declares: :attr:`Workload.item`).
    ``threads`` pins the CPU thread count for this case (default: every usable core).
    ``flush_cache`` asks the engine to flush device caches between samples. ``metrics`` are
    extra numbers the setup measured (compile time, the largest batch found) and are stored
    with the result. ``teardown`` releases what setup built. ``derived_metrics(median_s)``, if
    given, returns metrics that follow from the measured median seconds per call (an
    all-reduce's bus bandwidth); the engine stores them with the others. In a distributed case
    ``flops``, ``bytes`` and ``items`` are the whole group's per call.
    """

    run: Callable[[], Any]
    flops: float | None = None
    bytes: float | None = None
    items: float | None = None
    threads: int | None = None
    flush_cache: bool = False
    metrics: dict[str, float] = field(default_factory=dict)
    teardown: Callable[[], None] | None = None
    derived_metrics: Callable[[float], Mapping[str, float]] | None = None


@dataclass(frozen=True)
class Workload:
    """A named, parameterised piece of work.

    ``params`` is the full grid and ``quick`` the smaller one: either a mapping of parameter
    name to values (its cartesian product) or a list of such mappings (their union).
    ``devices`` lists the device kinds it supports. ``axis`` names the parameter charts put on
    the x axis (``size``, ``batch``). ``setup(device, params)`` builds a :class:`Case` or raises
    :class:`benchsite.errors.SkipCase`. ``item`` says what one of its cases' ``items`` is, as a
    singular noun (``image``, ``sequence``, ``token``, ``sample``): its throughput then reads
    ``images/s``, and every row it stores says so (column ``item_unit``); left unset, ``items/s``.
    ``distributed=True`` makes it a distributed workload:
    its ``world_size`` parameter (default 1) says how many ranks run ``setup`` and the case,
    one process each, inside a ``torch.distributed`` process group (see
    :mod:`benchsite.measure.distributed.launch`).
    """

    name: str
    description: str
    setup: Callable[[Device, Params], Case]
    params: Grid
    quick: Grid | None = None
    tags: tuple[str, ...] = ()
    devices: tuple[str, ...] = ("cpu", "cuda", "mps")
    axis: str | None = None
    timeout_s: float | None = None
    distributed: bool = False
    item: str | None = None

    def grid(self, profile: str) -> list[dict[str, Any]]:
        """Every parameter set of ``profile`` (``quick`` or ``full``), in a stable order."""
        grid = self.quick if profile == "quick" and self.quick is not None else self.params
        return list(expand_grid(grid))


def expand_grid(grid: Grid) -> Iterator[dict[str, Any]]:
    """Yield the parameter sets of a grid: a mapping's product, or a list of mappings' union."""
    for part in [grid] if isinstance(grid, Mapping) else grid:
        keys = list(part)
        for values in itertools.product(*(part[k] for k in keys)):
            yield dict(zip(keys, values, strict=True))


MERGE_RULES = (
    "max",
    "sum",
    "device_sum",
    "min",
    "or",
)  # how a collector metric combines over ranks


class CollectorUnavailable(Exception):
    """Raised by a collector's ``start`` when it cannot work here (no NVML, no RAPL); the engine
    says so once per run and records nothing for it."""


@dataclass(frozen=True)
class Collector:
    """A metric collector wrapped around each measurement.

    ``start(device)`` begins collecting just before the timed samples and returns a ``stop``
    function; ``stop()`` is called right after them and returns ``{metric: value}``. Metric
    names are stored as ``<collector>.<metric>`` in the row's ``metrics`` JSON column; a value
    that is no number is left out and reported. Raise :class:`CollectorUnavailable` from
    ``start`` when the collector cannot work on this machine: the run says so once and records
    nothing for it; any other exception of ``start`` or ``stop`` is reported once per worker and
    never fails the case.

    Where and when: both run in the case's own worker process and in the thread that calls
    the case (a distributed case: in each rank's process), with the case's thread count set.
    The window is the timed samples alone, every sampling pass of them (a pass the drift test
    rejects too) with the cache flushes between samples where the case asks for them. Outside
    it: the case's ``setup`` and the memory baseline before it, the warm-up and calibration
    calls, the device-time blocks of a short GPU case, and ``teardown``. The collectors start one
    after another before the first sample and stop in the reverse order after the last.
    A case measured in rounds is collected in each round's worker; the row keeps the metrics
    of one round (:mod:`benchsite.measure.rounds`).

    ``merge`` says how a metric of a distributed case combines over its ranks
    (``{metric: rule}``, the metric without the collector's prefix): ``"device_sum"`` for a
    total over the group's devices (energy, power, a price per device) — ranks that share a
    device, as gloo processes share a machine's CPU and read the same package counters, count
    it once, with their largest reading; ``"sum"`` for a total over the ranks themselves;
    ``"or"`` for bit flags, ``"min"``, or ``"max"`` — the rule of every metric not named (a
    peak per device, the worst rank).
    """

    name: str
    description: str
    start: Callable[[Device], Callable[[], Mapping[str, float | None]]]
    merge: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = {rule for rule in self.merge.values() if rule not in MERGE_RULES}
        if unknown:
            raise ValueError(
                f"collector {self.name}: merge rule(s) {sorted(unknown)} unknown; use one of "
                f"{', '.join(MERGE_RULES)}"
            )


@dataclass(frozen=True)
class Finding:
    """One answer computed from the store by an analysis plugin.

    ``kind`` groups findings (``speedup``, ``crossover``, ``recommendation``, ``faq``,
    ``claim``...). ``numbers`` holds the figures behind the answer with their uncertainty;
    ``evidence`` the ``row_id`` values of the result rows it rests on; ``scope`` which hosts,
    devices and workloads it covers; ``strength`` how strong the evidence is (``strong``,
    ``moderate``, ``weak``, ``none``). ``chart`` is an optional Altair chart.
    """

    id: str
    kind: str
    title: str
    answer: str
    explanation: str = ""
    numbers: Mapping[str, Any] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    scope: Mapping[str, Any] = field(default_factory=dict)
    strength: str = "moderate"
    chart: Any = None
    question: str | None = None
    verdict: str | None = None
    workload: str | None = None


@dataclass(frozen=True)
class Analysis:
    """An analysis plugin's entry: ``analyze`` turns the store into a list of :class:`Finding`
    (may be empty when the store holds nothing it can use). It is called with the arguments it
    names: ``results`` (the prepared data frame), ``tables`` (:class:`benchsite.tables.Tables`)
    and ``findings`` (those of the analyses that take none); see :mod:`benchsite.site.analyse`.

    ``group`` is deprecated and ignored (it scheduled analyses that shared a per-process cache;
    the tables are computed once per build): still accepted, with a
    :class:`DeprecationWarning`, until the next release."""

    name: str
    description: str
    analyze: Callable[..., list[Finding]]
    group: InitVar[str | None] = None

    def __post_init__(self, group: str | None) -> None:
        if group is not None:
            _deprecated(f"Analysis(group={group!r}) for {self.name}")


@dataclass(frozen=True)
class Page:
    """A page of the site. ``render(site)`` returns its files, :class:`RenderedPage` records, in
    a list or any iterable (one page may expand into several, like one page per workload; a
    generator that yields each file as it is made keeps thousands from being held at once).
    ``nav`` is the label in the navigation (``None`` to stay out of it) and ``order`` its
    position. ``path`` is the file the navigation links to, relative to the site root (default
    ``<name>.html``). Every page renders after the analyses, with every finding.

    ``needs_findings`` is deprecated and ignored: still accepted, with a
    :class:`DeprecationWarning`, until the next release."""

    name: str
    render: Callable[[Any], Iterable[RenderedPage]]
    nav: str | None = None
    order: int = 100
    path: str | None = None
    needs_findings: InitVar[bool | None] = None

    def __post_init__(self, needs_findings: bool | None) -> None:
        if needs_findings is not None:
            _deprecated(f"Page(needs_findings=...) for {self.name}")

    @property
    def nav_path(self) -> str:
        return self.path or f"{self.name}.html"


@dataclass(frozen=True)
class Flag:
    """What a validity flag means: ``name`` is the code a ``prepare_results`` plugin puts in a
    row's ``flags`` column (a tuple of codes), ``description`` says in a line what it found.

    A flagged row is never dropped; the flag says how far its number may be trusted:
    ``suspect`` — the number cannot be right (the tables mark the row suspect, with the
    flag as its reason: it is shown, marked, and never a headline, a verdict or a crossover's
    answer); ``uncertain`` — the number is less certain than its interval says (noisy,
    drifting): it stays in every verdict with its interval widened to its samples' spread
    (:mod:`benchsite.tables.rows`); ``not_a_peak`` — its rate measured something other than
    the device (a cache, launch overhead), so it counts as the device's peak only where nothing
    else was measured. A flag with none qualifies a number without disqualifying it."""

    name: str
    description: str
    suspect: bool = False
    not_a_peak: bool = False
    uncertain: bool = False


def _deprecated(what: str) -> None:
    warnings.warn(
        f"{what} is deprecated and ignored (the build schedules its own work): remove the "
        "argument, the next release refuses it (CHANGELOG.md)",
        PluginDeprecationWarning,
        stacklevel=4,  # the plugin's call: _deprecated, __post_init__, __init__, the plugin
    )


@dataclass(frozen=True)
class RenderedPage:
    """A rendered file of the site: ``path`` relative to the site root, and its content."""

    path: str
    content: str | bytes


# -- case parameters -----------------------------------------------------------------------------


def precision_of(params: Mapping[str, Any]) -> str:
    """The precision a case ran at (``precision``, or an older ``dtype`` parameter; else fp32)."""
    return str(params.get("precision") or params.get("dtype") or "fp32")


def without(params: Mapping[str, Any], *names: str) -> str:
    """A stable key of ``params`` without ``names``: rows equal on it differ only in those."""
    try:
        return _without(tuple((k, type(v), v) for k, v in params.items()), names)
    except TypeError:  # a value that cannot be hashed (a list): not cached
        return json.dumps({k: v for k, v in params.items() if k not in names}, sort_keys=True)


@functools.lru_cache(maxsize=1 << 14)
def _without(items: tuple[tuple[str, type, Any], ...], names: tuple[str, ...]) -> str:
    # the value's type is part of the key: 1, 1.0 and True are equal, their JSON is not
    return json.dumps({k: v for k, _, v in items if k not in names}, sort_keys=True)
