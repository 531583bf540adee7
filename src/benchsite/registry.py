"""Collecting ``register_*`` hook results, checked in one place.

Each plugin's implementation is called on its own, through pluggy
(:meth:`benchsite.plugin_manager.Plugins.call_each`), so a plugin whose hook raises is reported by
name and skipped, every record is checked to be of the hook's type, and two plugins that
register the same name are an error naming both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from benchsite.errors import PluginError
from benchsite.plugin_manager import Plugins
from benchsite.records import Analysis, Collector, Device, Page, Workload

T = TypeVar("T", Device, Workload, Collector, Analysis, Page)


@dataclass(frozen=True)
class Registered(Generic[T]):
    """A record and the plugin that registered it."""

    item: T
    plugin: str


def collect(plugins: Plugins, hook_name: str, record_type: type[T]) -> dict[str, Registered[T]]:
    """Call ``hook_name`` on every plugin and return its records by name."""
    found: dict[str, Registered[T]] = {}
    for plugin_name, items in plugins.call_each(hook_name):  # hook: register_*
        for item in items or []:
            _check(item, record_type, hook_name, plugin_name)
            if item.name in found:
                raise PluginError(
                    f"{record_type.__name__.lower()} {item.name!r} is registered by both "
                    f"{found[item.name].plugin} and {plugin_name}: rename one or "
                    f"uninstall one of the plugins"
                )
            found[item.name] = Registered(item, plugin_name)
    return found


def _check(item: object, record_type: type, hook_name: str, plugin_name: str) -> None:
    if not isinstance(item, record_type):
        raise PluginError(
            f"plugin {plugin_name}: {hook_name} returned {type(item).__name__}, expected "
            f"{record_type.__name__}: fix the plugin"
        )


def devices(plugins: Plugins) -> dict[str, Registered[Device]]:
    return collect(plugins, "register_devices", Device)


def workloads(plugins: Plugins) -> dict[str, Registered[Workload]]:
    return collect(plugins, "register_workloads", Workload)


def collectors(plugins: Plugins) -> dict[str, Registered[Collector]]:
    return collect(plugins, "register_collectors", Collector)


def analyses(plugins: Plugins) -> dict[str, Registered[Analysis]]:
    return collect(plugins, "register_analyses", Analysis)


def pages(plugins: Plugins) -> dict[str, Registered[Page]]:
    return collect(plugins, "register_pages", Page)
