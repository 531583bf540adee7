"""Collecting ``register_*`` hook results, checked in one place.

Each plugin's implementation is called on its own, through pluggy
(:meth:`benchsite.host.manager.Plugins.call_each`), so a plugin whose hook raises is reported by
name and skipped, every record is checked (its type, then :mod:`benchsite.host.validation`: one
with a problem is reported in one line naming plugin, record and field, and left out; fatal
with ``--strict``), and two plugins that register the same name (or two pages the same path)
are an error naming both.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from benchsite.errors import PluginError
from benchsite.host import validation
from benchsite.host.manager import Plugins
from benchsite.records import Analysis, Collector, Device, Flag, Page, Workload

T = TypeVar("T", Device, Workload, Collector, Analysis, Page, Flag)


@dataclass(frozen=True)
class Registered(Generic[T]):
    """A record and the plugin that registered it."""

    item: T
    plugin: str


def collect(
    plugins: Plugins,
    hook_name: str,
    record_type: type[T],
    known_kinds: Collection[str] | None = None,
) -> dict[str, Registered[T]]:
    """Call ``hook_name`` on every plugin and return its valid records by name (device kinds
    a workload names are checked against ``known_kinds`` when given). The hook is called once
    per :class:`Plugins` (so once per process), whatever ``known_kinds``: a later call checks
    what the first returned."""
    key = (hook_name, None if known_kinds is None else frozenset(known_kinds))
    if key not in plugins.registered:
        plugins.registered[key] = _collect(plugins, hook_name, record_type, known_kinds)
    return dict(plugins.registered[key])


def _returned(plugins: Plugins, hook_name: str) -> list[tuple[str, Any]]:
    """``(plugin name, what it returned)`` of every implementation of ``hook_name``, called
    the first time it is asked for."""
    if hook_name not in plugins.returned:
        plugins.returned[hook_name] = list(plugins.call_each(hook_name))  # hook: register_*
    return plugins.returned[hook_name]


def _collect(
    plugins: Plugins,
    hook_name: str,
    record_type: type[T],
    known_kinds: Collection[str] | None,
) -> dict[str, Registered[T]]:
    found: dict[str, Registered[T]] = {}
    for plugin_name, items in _returned(plugins, hook_name):
        for item in items if isinstance(items, list | tuple) else [items]:
            if not _valid(plugins, item, record_type, hook_name, plugin_name, known_kinds):
                continue
            if item.name in found:
                raise PluginError(
                    f"{record_type.__name__.lower()} {item.name!r} is registered by both "
                    f"{found[item.name].plugin} and {plugin_name}: rename one or "
                    f"uninstall one of the plugins"
                )
            found[item.name] = Registered(item, plugin_name)
    return found


def _valid(
    plugins: Plugins,
    item: object,
    record_type: type,
    hook_name: str,
    plugin_name: str,
    known_kinds: Collection[str] | None,
) -> bool:
    """Whether ``item`` may be registered; if not, the plugin is told why in one line."""
    if not isinstance(item, record_type):
        problem = f"{hook_name} returned {type(item).__name__}, not a {record_type.__name__}"
        plugins.reject(plugin_name, problem, "it is left out")
        return False
    kind = record_type.__name__.lower()
    for problem in validation.problems(item, known_kinds):
        plugins.reject(plugin_name, f"{kind} {item.name!r}: {problem}", f"{kind} left out")
        return False
    return True


def devices(plugins: Plugins) -> dict[str, Registered[Device]]:
    return collect(plugins, "register_devices", Device)


def workloads(
    plugins: Plugins, known_kinds: Collection[str] | None = None
) -> dict[str, Registered[Workload]]:
    """The workloads by name; with ``known_kinds`` (the device kinds found), a workload that
    names a kind no device plugin provides is reported."""
    return collect(plugins, "register_workloads", Workload, known_kinds)


def collectors(plugins: Plugins) -> dict[str, Registered[Collector]]:
    return collect(plugins, "register_collectors", Collector)


def analyses(plugins: Plugins) -> dict[str, Registered[Analysis]]:
    """The analyses by name; one whose ``analyze`` names none of the arguments benchsite passes
    gets the results frame (the 0.1 form, ``analyze(results)``), and the author a note."""
    found = collect(plugins, "register_analyses", Analysis)
    for name, registered in found.items():
        unknown = validation.unknown_analysis_arguments(registered.item.analyze)
        if unknown:
            plugins.note(
                f"plugin {registered.plugin}: analysis {name!r}: analyze() takes "
                f"{', '.join(map(repr, unknown))}, which benchsite does not pass by name "
                f"({', '.join(validation.ANALYSIS_ARGUMENTS)}); it gets the results frame, as in "
                f"0.1: name the parameter results, tables or findings"
            )
    return found


def register_all(plugins: Plugins) -> None:
    """Call every ``register_*`` hook once, so that each plugin's problems are reported now
    (``benchsite plugins``) rather than in a worker process or halfway through a build."""
    kinds = {registered.item.kind for registered in devices(plugins).values()}
    workloads(plugins, kinds | validation.TORCH_DEVICE_KINDS)
    collectors(plugins)
    analyses(plugins)
    pages(plugins)
    flags(plugins)


def pages(plugins: Plugins) -> dict[str, Registered[Page]]:
    found = collect(plugins, "register_pages", Page)
    by_path: dict[str, Registered[Page]] = {}
    for registered in found.values():
        other = by_path.setdefault(registered.item.nav_path, registered)
        if other is not registered:
            raise PluginError(
                f"pages {other.item.name!r} ({other.plugin}) and {registered.item.name!r} "
                f"({registered.plugin}) both write {registered.item.nav_path}: give one a "
                f"different name or path"
            )
    return found


def flags(plugins: Plugins) -> dict[str, Registered[Flag]]:
    """What each validity flag means, by its code (hook: register_flags)."""
    return collect(plugins, "register_flags", Flag)
