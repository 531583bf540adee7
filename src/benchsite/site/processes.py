"""Running one function over many items in a pool of worker processes, for the two parts of a
build that need more than one core: rendering pages and drawing chart SVGs.

Workers are forked where that is safe (Linux: they start in milliseconds with everything the
build holds, nothing copied in; only what a call returns comes back, pickled) and spawned
elsewhere (macOS: forking a process that loaded system frameworks can crash; Windows: no
fork). Ctrl-C reaches every process of the terminal's group: workers ignore it and leave it to
the build, which drops the calls not started and stops them, so no traceback comes from each.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def in_processes(
    function: Callable[..., T],
    *arguments: Iterable[Any],
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> list[T]:
    """``function`` over the ``arguments`` (as :func:`map`) in ``workers`` processes, each first
    running ``initializer(*initargs)``; the results in order. An exception a call raised is
    raised here, after the calls not started are dropped."""
    pool = ProcessPoolExecutor(
        workers, context(), initializer=_started, initargs=(initializer, initargs)
    )
    try:
        return list(pool.map(function, *arguments))
    finally:
        pool.shutdown(cancel_futures=True)


def context() -> multiprocessing.context.BaseContext:
    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


def forks() -> bool:
    """Whether workers start as forks of this process (and so hold what it holds)."""
    return context().get_start_method() == "fork"


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _started(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)
