"""Checks of the records plugins register, run once when each is registered.

Each check returns the problems it found as short texts naming the field (``params['size'] is
1024, one value: give a list, like [1024]``); :mod:`benchsite.host.registry` puts the plugin and the
record in front of each and reports it as one line. A record with a problem is left out, so a
mistake shows up when the plugin is loaded, not as a raw ``TypeError`` in the middle of a run.

The naming rules (also in ``docs/plugins.md``):

- record names (workloads, collectors, analyses, pages, device kinds): a letter or digit, then
  letters, digits, ``-``, ``_``, ``.`` or ``+``; device names may also hold ``:`` (``cuda:0``);
- parameter names are identifier-like (``batch``, ``seq_len``): they become keys of every row's
  ``params`` and names on the site;
- ``index`` is no workload name (``workloads/index.html`` lists them all), and a page may not
  write under ``assets/`` (the site's scripts and chart images live there).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping

from benchsite.records import Analysis, Collector, Device, Flag, Page, Workload, expand_grid
from benchsite.units import is_item_noun

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
DEVICE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+:-]*$")
PARAMETER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED_WORKLOAD_NAMES = frozenset({"index"})
RESERVED_FOLDERS = ("assets/",)
# the device kinds torch itself names, supported or not by a plugin on this machine
TORCH_DEVICE_KINDS = frozenset({"cpu", "cuda", "mps", "xpu", "hpu", "mtia", "xla", "meta"})
ANALYSIS_ARGUMENTS = ("results", "tables", "findings")  # what an analysis' analyze() may name
NAME_RULE = "letters, digits, '-', '_', '.' or '+', starting with a letter or digit"


def problems(item: object, known_kinds: Collection[str] | None = None) -> list[str]:
    """What is wrong with a registered record (empty when nothing is)."""
    check = CHECKS.get(type(item))
    return check(item, known_kinds) if check else []  # type: ignore[operator]


def _name(value: object, pattern: re.Pattern[str] = NAME) -> list[str]:
    if not isinstance(value, str) or not pattern.match(value):
        return [f"name {value!r} is not a valid name: use {NAME_RULE}"]
    return []


def _callable(item: object, *fields: str) -> list[str]:
    return [f"{name} is not callable" for name in fields if not callable(getattr(item, name))]


def check_workload(workload: Workload, known_kinds: Collection[str] | None = None) -> list[str]:
    found = _name(workload.name) + _callable(workload, "setup")
    if workload.name in RESERVED_WORKLOAD_NAMES:
        found.append(f"name {workload.name!r} is reserved (the list of workloads): rename it")
    found += grid_problems("params", workload.params)
    if workload.quick is not None:
        found += grid_problems("quick", workload.quick)
    if found:  # the grids cannot be read further
        return found
    names = grid_names(workload.params)
    extra = sorted(grid_names(workload.quick) - names) if workload.quick is not None else []
    found += [
        f"quick names {key!r}, which is no parameter of params ({_listed(names)})" for key in extra
    ]
    if workload.axis is not None and workload.axis not in names:
        found.append(f"axis {workload.axis!r} is no parameter of params ({_listed(names)})")
    return found + _devices_problems(workload.devices, known_kinds) + _other_fields(workload)


def grid_problems(field: str, grid: object) -> list[str]:
    """A grid is a mapping of parameter name to a list of values, or a list of such mappings."""
    parts = [grid] if isinstance(grid, Mapping) else grid
    if isinstance(parts, str) or not isinstance(parts, list | tuple) or not parts:
        return [f"{field} is {_short(grid)}: give a mapping like {{'size': [1024, 4096]}}"]
    found = []
    for part in parts:
        if not isinstance(part, Mapping):
            found.append(f"{field} holds {_short(part)}, not a mapping of parameter to values")
            continue
        for key, values in part.items():
            found += _parameter_problems(field, key, values)
    return found


def _parameter_problems(field: str, key: object, values: object) -> list[str]:
    if not isinstance(key, str) or not PARAMETER.match(key):
        return [f"{field} parameter name {key!r} is not identifier-like (letters, digits, '_')"]
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, list | tuple | range):
        return [
            f"{field}[{key!r}] is {_short(values)}, one value: give a list, like [{_short(values)}]"
        ]
    if len(values) == 0:
        return [f"{field}[{key!r}] is empty: give at least one value"]
    return []


def grid_names(grid: object) -> set[str]:
    """Every parameter name a (valid) grid uses."""
    return {key for params in expand_grid(grid) for key in params}  # type: ignore[arg-type]


def _devices_problems(devices: object, known_kinds: Collection[str] | None) -> list[str]:
    if isinstance(devices, str) or not isinstance(devices, tuple | list):
        return [f"devices is {_short(devices)}: give a tuple of device kinds, like ('cpu', 'cuda')"]
    if known_kinds is None:
        return []
    return [
        f"devices names kind {kind!r}, which no device plugin provides "
        f"(known: {_listed(known_kinds)})"
        for kind in devices
        if kind not in known_kinds
    ]


def _other_fields(workload: Workload) -> list[str]:
    found = []
    timeout = workload.timeout_s
    if timeout is not None and not (_is_number(timeout) and timeout > 0 and timeout != math.inf):
        found.append(f"timeout_s is {timeout!r}: give a positive number of seconds, or None")
    if isinstance(workload.tags, str) or not all(isinstance(tag, str) for tag in workload.tags):
        found.append(f"tags is {_short(workload.tags)}: give a tuple of words, like ('training',)")
    if not isinstance(workload.description, str):
        found.append("description is not text")
    if workload.item is not None and not is_item_noun(workload.item):
        found.append(
            f"item is {_short(workload.item)}: give what one item is as a singular noun in lower "
            "case, like 'image' or 'token'"
        )
    return found


def check_collector(collector: Collector, known_kinds: object = None) -> list[str]:
    return _name(collector.name) + _callable(collector, "start")


def check_analysis(analysis: Analysis, known_kinds: object = None) -> list[str]:
    return _name(analysis.name) + _callable(analysis, "analyze")


def check_device(device: Device, known_kinds: object = None) -> list[str]:
    kind = (
        [f"kind {device.kind!r} is not a valid name: use {NAME_RULE}"] if _name(device.kind) else []
    )
    return _name(device.name, DEVICE_NAME) + kind + _callable(device, "timer")


def check_page(page: Page, known_kinds: object = None) -> list[str]:
    found = _name(page.name) + _callable(page, "render")
    if page.nav_path.startswith(RESERVED_FOLDERS) or page.nav_path.startswith(("/", "..")):
        found.append(f"path {page.nav_path!r} is reserved or outside the site: choose another")
    return found


def metric_problem(name: str, value: object) -> str | None:
    """Why a collector's metric value cannot be stored (``None`` when it can: a number or
    ``None``)."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return None
    return f"metric {name!r} is {_short(value)} ({type(value).__name__}), not a number: not stored"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _listed(names: Collection[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def check_flag(flag: Flag, known_kinds: Collection[str] | None = None) -> list[str]:
    found = _name(flag.name)
    if not isinstance(flag.description, str) or not flag.description.strip():
        found.append("description is empty: say in a line what the flag found")
    return found


CHECKS: dict[type, Callable[..., list[str]]] = {
    Workload: check_workload,
    Collector: check_collector,
    Analysis: check_analysis,
    Device: check_device,
    Page: check_page,
    Flag: check_flag,
}

__all__ = ["grid_problems", "metric_problem", "problems"]


def analysis_parameters(analyze: Callable[..., object]) -> list[str]:
    """The parameters benchsite fills in a call of ``analyze``: those without a default, and
    any of :data:`ANALYSIS_ARGUMENTS` (``["results"]`` for a callable without a signature)."""
    import inspect

    try:
        parameters = inspect.signature(analyze).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: the original form
        return ["results"]
    return [
        p.name
        for p in parameters
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and (p.default is p.empty or p.name in ANALYSIS_ARGUMENTS)
    ]


def unknown_analysis_arguments(analyze: Callable[..., object]) -> list[str]:
    """The parameters of ``analyze`` that benchsite does not pass by name, when it names none
    that it does (then the first gets the results frame, the 0.1 form)."""
    names = analysis_parameters(analyze)
    return [] if any(name in ANALYSIS_ARGUMENTS for name in names) else names
