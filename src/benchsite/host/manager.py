"""Finding and loading plugins: the built-ins, entry points, and ``-p/--plugin`` paths.

Each plugin loads in isolation: one that fails to import, implements a function marked
``@hookimpl`` whose name is no hook (a misspelt ``register_workload``), or whose ``register_*``
hook raises or returns an invalid record is recorded in :attr:`Plugins.load_errors`, reported as
one ``note:`` line on stderr, and skipped (``strict=True`` raises instead). ``benchsite
plugins`` lists what was found, from where, its version and the hooks it implements.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from benchsite import hookspecs
from benchsite.errors import ConfigError, PluginError, describe_exception
from benchsite.host import config
from benchsite.version import __version__

ENTRY_POINT_GROUP = "benchsite"
BUILTIN_PACKAGE = "benchsite.plugins"


@dataclass(frozen=True)
class PluginInfo:
    """One plugin found, as ``benchsite plugins`` shows it: ``source`` is ``builtin``, ``entry
    point (<distribution>)`` or the ``-p`` spec; ``hooks`` the hooks it implements; ``error``
    the one line that says what of it was left out (it did not import, a ``register_*`` hook
    raised, a record it returned is invalid), ``None`` while none was."""

    name: str
    source: str  # "builtin", "entry point <dist>", or the path given with -p
    version: str
    hooks: tuple[str, ...] = ()
    error: str | None = None


@dataclass
class Plugins:
    """A loaded plugin manager and what happened while loading it: ``infos`` holds a
    :class:`PluginInfo` per plugin name, ``load_errors`` those with an ``error``; ``manager``
    is the pluggy ``PluginManager`` (``plugins.hook.register_workloads()`` calls a hook on
    every plugin; :mod:`benchsite.host.registry` calls them as a run or build does, each once,
    with every record checked).

    A plugin's records are checked when a ``register_*`` hook is first called (once per
    :class:`Plugins`), not when it is imported: until then ``load_errors`` holds only the
    plugins that did not import. :func:`benchsite.host.registry.register_all` calls every
    hook (``benchsite plugins`` does), so that every error is in ``infos`` after it.
    """

    manager: pluggy.PluginManager
    infos: dict[str, PluginInfo] = field(default_factory=dict)
    plugin_specs: tuple[str, ...] = ()
    strict: bool = False
    quiet: bool = False  # True in worker processes: the parent already reported the errors
    noted: list[str] = field(default_factory=list)
    # what each register_* hook returned, by hook, and its valid records by (hook, device
    # kinds checked): benchsite.host.registry
    returned: dict[str, list[tuple[str, Any]]] = field(default_factory=dict, repr=False)
    registered: dict[tuple[str, frozenset[str] | None], dict[str, Any]] = field(
        default_factory=dict, repr=False
    )

    @property
    def hook(self) -> pluggy.HookRelay:
        return self.manager.hook

    @property
    def load_errors(self) -> list[PluginInfo]:
        """The plugins whose ``error`` is set, in load order."""
        return [info for info in self.infos.values() if info.error]

    def version_of(self, plugin_name: str) -> str:
        info = self.infos.get(plugin_name)
        return info.version if info else "unknown"

    def fail(
        self, name: str, source: str, version: str, error: str, consequence: str = "not loaded"
    ) -> None:
        """Record that plugin ``name`` failed and say so in one note saying what was left out
        (``consequence``); raise instead when strict."""
        if self.strict:
            raise PluginError(f"plugin {name} ({source}): {error}")
        known = self.infos.get(name)
        self.infos[name] = (
            replace(known, error=error) if known else PluginInfo(name, source, version, error=error)
        )
        self.note(f"plugin {name} ({source}): {error}; {consequence} (--strict makes this fatal)")

    def reject(self, plugin_name: str, error: str, consequence: str = "left out") -> None:
        """Plugin ``plugin_name`` registered something wrong: :meth:`fail` with ``error``."""
        info = self.infos.get(plugin_name)
        source, version = (info.source, info.version) if info else ("?", "?")
        self.fail(plugin_name, source, version, error, consequence)

    def note(self, text: str) -> None:
        """Say ``text`` once, as one ``note:`` line on stderr (not when ``quiet``)."""
        if text not in self.noted:
            self.noted.append(text)
            if not self.quiet:
                print(f"note: {text}", file=sys.stderr, flush=True)

    def template_folders(self) -> list[Path]:
        """The ``templates/`` folder next to each plugin's module, where there is one (a
        plugin's own templates; the site's Jinja loader searches them after ``--templates``)."""
        files = (getattr(plugin, "__file__", None) for plugin in self.manager.get_plugins())
        folders = {Path(file).parent / "templates" for file in files if file}
        return sorted(folder for folder in folders if folder.is_dir())

    def call_each(
        self, hook_name: str, arguments: dict[str, Any] | None = None
    ) -> Iterator[tuple[str, Any]]:
        """Call hook ``hook_name`` one implementation at a time, in pluggy's own call order
        (``tryfirst``/``trylast`` honoured, else newest registered first), and yield
        ``(plugin_name, result)`` for each implementation that returned something.

        Each call is an ordinary pluggy hook call restricted to one plugin
        (:meth:`pluggy.PluginManager.subset_hook_caller`), so every implementation gets only
        the arguments it names, hook wrappers wrap it and tracing sees it (where a plugin
        implements the hook under another name, through ``specname``, pluggy cannot leave it
        out of a subset: the implementations are then called directly, unwrapped). An implementation
        that raises is recorded with :meth:`fail` (raised when strict) and skipped, so one
        broken plugin cannot take the others' results with it; a
        :class:`benchsite.errors.ConfigError` (the user's settings are wrong) is raised. The caller may change
        ``arguments`` between two implementations (a ``prepare_*`` hook hands each
        implementation what the previous one returned): it is read afresh for every call."""
        arguments = {} if arguments is None else arguments
        plain = [i for i in getattr(self.hook, hook_name).get_hookimpls() if not _wraps(i)]
        for impl in reversed(plain):  # pluggy calls the last of this list first
            try:
                results = self._only(hook_name, impl, plain)(**arguments)
            except ConfigError:  # the user's configuration or options: theirs to fix, one line
                raise
            except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, not fatal
                error = f"{hook_name} raised {describe_exception(exc)}"
                self.reject(impl.plugin_name, error, f"what its {hook_name} gives is left out")
                continue
            for result in results:  # pluggy leaves out an implementation's None
                yield impl.plugin_name, result

    def _only(
        self, hook_name: str, impl: pluggy.HookImpl, plain: list[pluggy.HookImpl]
    ) -> Callable[..., list[Any]]:
        """A caller of hook ``hook_name`` that runs ``impl`` alone among the ``plain``
        implementations (wrappers still wrap it). pluggy leaves in a plugin that has no
        attribute of the hook's name (an implementation named otherwise, through
        ``specname``): should one remain, ``impl`` is called directly, with its arguments."""
        others = [other.plugin for other in plain if other is not impl]
        subset = self.manager.subset_hook_caller(hook_name, others)
        if [i for i in subset.get_hookimpls() if not _wraps(i)] == [impl]:
            return subset

        def direct(**given: Any) -> list[Any]:
            result = impl.function(*(given[name] for name in impl.argnames))
            return [] if result is None else [result]

        return direct


def _wraps(impl: pluggy.HookImpl) -> bool:
    """Whether ``impl`` is a hook wrapper (new style or old) rather than an implementation."""
    return bool(impl.wrapper or impl.hookwrapper)


def load_plugins(
    plugin_specs: Sequence[str] = (),
    *,
    strict: bool = False,
    quiet: bool = False,
    models: Sequence[str] = (),
) -> Plugins:
    """Build a plugin manager with every plugin found; see the module docstring. ``models``
    are the ``--model`` values, kept for the plugins that read them
    (:func:`benchsite.config.command_line`)."""
    config.set_command_line("model", models)
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    plugins = Plugins(manager, plugin_specs=tuple(plugin_specs), strict=strict, quiet=quiet)
    for name, loader, source, version in _candidates(plugin_specs):
        _load_one(plugins, name, loader, source, version)
    return plugins


def _candidates(plugin_specs: Sequence[str]) -> Iterator[tuple[str, object, str, str]]:
    """(name, loader, source, version) for every plugin, in load order."""
    for name, full in _builtin_modules():
        loader = lambda full=full: importlib.import_module(full)  # noqa: E731
        yield name, loader, "builtin", __version__
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = entry.dist
        source = f"entry point ({dist.name})" if dist else "entry point"
        version = dist.version if dist else "unknown"
        yield entry.name, entry.load, source, version
    for spec in plugin_specs:
        for name, loader in _local_plugins(spec):
            yield name, loader, spec, "local"


def _builtin_modules() -> Iterator[tuple[str, str]]:
    """(plugin name, module) of each built-in: every module of a kind folder of
    ``benchsite.plugins`` (``devices``, ``workloads``, ``collectors``, ``analyses``, ``pages``),
    named ``<kind>.<module>``; folders and modules starting with ``_`` (``_shared``) are not
    plugins."""
    package = importlib.import_module(BUILTIN_PACKAGE)
    for kind in pkgutil.iter_modules(package.__path__):
        if not kind.ispkg or kind.name.startswith("_"):
            continue
        folder = importlib.import_module(f"{BUILTIN_PACKAGE}.{kind.name}")
        for module in pkgutil.iter_modules(folder.__path__):
            if not module.name.startswith("_"):
                yield f"{kind.name}.{module.name}", f"{folder.__name__}.{module.name}"


def _local_plugins(spec: str) -> Iterator[tuple[str, object]]:
    """A ``-p`` value: a ``.py`` file, a folder of them, or an importable module name."""
    path = Path(spec)
    if path.is_dir():
        for file in sorted(path.glob("*.py")):
            if not file.name.startswith("_"):
                yield file.stem, lambda file=file: _import_file(file)
    elif path.suffix == ".py":
        if not path.is_file():
            raise PluginError(f"plugin file {spec} does not exist: check the -p/--plugin path")
        yield path.stem, lambda: _import_file(path)
    else:
        yield spec, lambda: importlib.import_module(spec)


def _import_file(path: Path) -> ModuleType:
    name = f"benchsite_local_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load_one(plugins: Plugins, name: str, loader: object, source: str, version: str) -> None:
    try:
        plugin = loader()  # type: ignore[operator]
        plugins.manager.register(plugin, name=name)
    except Exception as exc:  # noqa: BLE001 - any import failure must be reported, not fatal
        plugins.fail(name, source, version, describe_exception(exc))
        return
    callers = plugins.manager.get_hookcallers(plugin) or ()
    hooks = tuple(caller.name for caller in callers if caller.spec is not None)
    plugins.infos[name] = PluginInfo(name, source, version, hooks)
    for unknown in (caller.name for caller in callers if caller.spec is None):
        if plugins.strict:
            raise PluginError(f"plugin {name} ({source}): {unknown_hook(unknown)}")
        plugins.note(
            f"plugin {name} ({source}): {unknown_hook(unknown)}; it is ignored "
            "(--strict makes this fatal)"
        )


def unknown_hook(name: str) -> str:
    """What to say about an implementation of ``name``, which is no hook."""
    close = difflib.get_close_matches(name, hookspecs.HOOK_NAMES, n=1)
    hint = f"did you mean {close[0]}?" if close else f"hooks: {', '.join(hookspecs.HOOK_NAMES)}"
    return f"{name} is not a benchsite hook ({hint})"
