"""What the validity flags of the ``flags`` column mean: the :class:`benchsite.records.Flag`
records plugins register (hook: ``register_flags``). The engine names no flag: a code is
suspect, or not a peak, only because the plugin that sets it says so."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Mapping

from benchsite.records import Flag

Flags = Mapping[str, Flag]  # code → what it means


def flag_map(flags: Flags | Iterable[Flag] | None) -> dict[str, Flag]:
    """``flags`` by code; ``None``: the flags of the installed plugins (:func:`installed`)."""
    if flags is None:
        return installed()
    if isinstance(flags, Mapping):
        return dict(flags)
    return {flag.name: flag for flag in flags}


def installed() -> dict[str, Flag]:
    """The flags the installed plugins register (the built-ins and entry points, as ``benchsite
    build`` loads them without ``-p``), loaded once per process."""
    return dict(_installed())


@functools.cache
def _installed() -> dict[str, Flag]:
    from benchsite.host import registry
    from benchsite.host.manager import load_plugins

    registered = registry.flags(load_plugins(()))
    return {name: entry.item for name, entry in registered.items()}


def suspect_codes(flags: Flags) -> frozenset[str]:
    """The codes that keep a number out of every headline (``Flag.suspect``)."""
    return frozenset(name for name, flag in flags.items() if flag.suspect)


def uncertain_codes(flags: Flags) -> frozenset[str]:
    """The codes that widen a number's interval in every verdict (``Flag.uncertain``)."""
    return frozenset(name for name, flag in flags.items() if flag.uncertain)


def not_a_peak_codes(flags: Flags) -> frozenset[str]:
    """The codes whose rates are no device's peak (``Flag.not_a_peak``)."""
    return frozenset(name for name, flag in flags.items() if flag.not_a_peak)


def deprecated_suspect_flags() -> frozenset[str]:
    """``SUSPECT_FLAGS`` of 0.2's first snapshots: the installed plugins' suspect codes."""
    warnings.warn(
        "benchsite.tables.SUSPECT_FLAGS is deprecated: read Tables.suspect_flags (the flags "
        "plugins register with register_flags, Flag.suspect)",
        DeprecationWarning,
        stacklevel=3,
    )
    return suspect_codes(installed())
