"""Fault injection for the crash-safety tests: kill this process at a named point of a write.

The store calls :func:`point` at every step of a write (``write:after-write``,
``compact:after-rename``, ...). When the environment variable ``BENCHSITE_FAULT`` names that
point, the process sends itself the signal asked for, for real: ``compact:after-write`` (SIGKILL
at the first pass), ``write:after-rename@3`` (at the third pass), ``compact:after-write=INT``
(SIGINT). Unset, a point costs one dictionary look-up. Only tests and ``benchmarks/soak.py`` set
the variable.
"""

from __future__ import annotations

import os
import signal

ENV_VAR = "BENCHSITE_FAULT"
_passes: dict[str, int] = {}


def point(name: str) -> None:
    """Mark a step of a write; kill this process here if ``BENCHSITE_FAULT`` says so."""
    wanted = os.environ.get(ENV_VAR)
    if not wanted:
        return
    where, _, how = wanted.partition("=")
    target, _, nth = where.partition("@")
    if target != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] == int(nth or 1):
        os.kill(os.getpid(), signal.Signals[f"SIG{how or 'KILL'}"])
