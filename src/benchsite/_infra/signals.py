"""The one signal mask: holding signals back over a few steps that must not be cut in two, and
how a child process leaves Ctrl-C to its parent.

Ctrl-C reaches every process of the terminal's group. A child of benchsite (a case worker, a
page worker) ignores it: the parent decides what it means and stops the child.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

_MASKS = hasattr(signal, "pthread_sigmask")  # not on Windows


@contextlib.contextmanager
def held(*signals: signal.Signals) -> Iterator[None]:
    """Hold ``signals`` back for the block: one that comes meanwhile arrives, with its usual
    handling, when the block ends. In the main thread their Python handlers are deferred
    (a signal sent to the process may be delivered to any of its threads, and Python then
    runs its handler in the main thread at once); where the platform allows, this thread also
    masks them, so that a process forked in the block starts with them held."""
    came: list[int] = []
    with _deferred(signals, came), _masked(signals):
        yield
    for number in came:
        signal.raise_signal(number)


@contextlib.contextmanager
def _deferred(signals: tuple[signal.Signals, ...], came: list[int]) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers (and only it runs them)
        return
    previous = {number: signal.signal(number, lambda n, _: came.append(n)) for number in signals}
    try:
        yield
    finally:
        for number, handler in previous.items():  # None: a handler set outside Python
            signal.signal(number, signal.SIG_DFL if handler is None else handler)


@contextlib.contextmanager
def _masked(signals: tuple[signal.Signals, ...]) -> Iterator[None]:
    if not _MASKS:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, set(signals))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def leave_interrupts_to_parent() -> None:
    """In a child process: ignore Ctrl-C, and stop holding it back (a child forked inside
    :func:`held` would otherwise keep it held, and a later handler would never see it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _MASKS:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
