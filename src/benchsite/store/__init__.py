"""The Parquet store: the parts of a run (schema, write, compact, read), object stores,
the check of a store, resuming a run and the fault points the tests use.

Imports nothing of ``benchsite.site`` or ``benchsite.tables``.
"""

from __future__ import annotations

import importlib
import warnings

__all__ = ["read_results"]


def __getattr__(name: str) -> object:
    """``benchsite.store.read_results``, the store's documented reader, and the other public
    names of the 0.1 module ``benchsite.store`` (now :mod:`benchsite.store.parts`), which still
    read with a :class:`DeprecationWarning`; loaded only when asked for."""
    parts = importlib.import_module("benchsite.store.parts")  # not `from ... import`: it asks here
    if name.startswith("_") or not hasattr(parts, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in __all__:
        warnings.warn(
            f"benchsite.store.{name} moved to benchsite.store.parts.{name} (CHANGELOG.md, "
            "'What moved')",
            DeprecationWarning,
            stacklevel=2,
        )
    return getattr(parts, name)
