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
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from benchsite._infra import signals

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
    with signals.held(signal.SIGINT), _frozen_for_forks(forking):  # until each worker
        pool = start.Pool(workers, _started, (initializer, initargs))  # ignores Ctrl-C
    with pool:  # terminated on the way out, whatever happened
        return pool.starmap(function, zip(*arguments, strict=True), chunksize=1)


def context() -> multiprocessing.context.BaseContext:
    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


def forks() -> bool:
    """Whether workers start as forks of this process (and so hold what it holds)."""
    return context().get_start_method() == "fork"


def _started(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    signals.leave_interrupts_to_parent()
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def _frozen_for_forks(forking: bool) -> Iterator[None]:
    """While workers fork in the block, every object this process holds is out of the garbage
    collector's reach (``gc.freeze``, as Python's documentation advises before a fork): a
    collection in a worker would otherwise walk the objects it inherited, and writing their
    reference counts makes the kernel copy each page they sit on into the worker."""
    if not forking:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()  # the workers keep theirs frozen
