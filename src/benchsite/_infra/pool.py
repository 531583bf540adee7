"""Running one function over many items in a pool of worker processes, for the two parts of a
build that need more than one core: rendering pages and drawing chart SVGs.

Workers are forked where that is safe (Linux: they start in milliseconds with everything the
build holds, nothing copied in; only what a call returns comes back, pickled) and spawned
elsewhere (macOS: forking a process that loaded system frameworks can crash; Windows: no
fork). Ctrl-C reaches every process of the terminal's group: workers ignore it and leave it to
the build, which stops them, so no traceback comes from each.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def in_processes(
    function: Callable[..., T],
    *arguments: Iterable[Any],
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    fresh: bool = False,
) -> list[T]:
    """``function`` over the ``arguments`` (as :func:`map`) in ``workers`` processes, each first
    running ``initializer(*initargs)``; the results in order, each call handed to the next
    free worker. An exception a call raised is raised here; then, and on Ctrl-C, the workers
    are stopped at once. ``fresh`` workers are new interpreters, never forks: a library that
    runs threads of its own (vl-convert's JavaScript engine) hangs in a child forked from a
    process where it had started."""
    start = multiprocessing.get_context("spawn") if fresh else context()
    forking = start.get_start_method() == "fork"
    with _interrupts_held(), _frozen_for_forks(forking):  # Ctrl-C held until each worker
        pool = start.Pool(workers, _started, (initializer, initargs))  # ignores it
    with pool:  # terminated on the way out, whatever happened
        return pool.starmap(function, zip(*arguments, strict=True), chunksize=1)


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
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool's terminate(): end, say nothing
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def _frozen_for_forks(forking: bool) -> Iterator[None]:
    """While workers fork in the block, every object this process holds is out of the garbage
    collector's reach (``gc.freeze``, as Python's documentation advises before a fork): a
    collection in a worker would otherwise walk the objects it inherited, and writing their
    reference counts makes the kernel copy each page they sit on into the worker. Measured on
    the 100,000 rows of ``benchmarks/site_build.py``: a rebuild 10-20% faster, ~2 CPU-s less."""
    if not forking:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()  # the workers keep theirs frozen


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C back in this thread (and the processes it forks) for the block, where the
    platform allows; one that came meanwhile arrives at its end."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
