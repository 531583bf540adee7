"""Independent jobs on every CPU core: the analyses of a build, and its pages.

A big store keeps one core busy for tens of seconds with work that splits into independent
jobs (each analysis plugin, each page plugin). :func:`run_jobs` runs them in worker processes
forked from this one, so each worker starts with everything the build holds (the results,
the findings, the Jinja environment) and nothing is copied in; only what a job returns is sent
back, pickled. Where processes cannot be forked safely (Windows has no fork; on macOS forking a
process that loaded system frameworks can crash), or with one worker, the jobs run here, in
order. A job must therefore not rely on another job's side effects.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

# the jobs of the running run_jobs call: a forked worker finds them here, by index
_JOBS: Sequence[Callable[[], Any]] = ()


def run_jobs(
    jobs: Sequence[Callable[[], T]],
    workers: int | None = None,
    on_result: Callable[[int, T], None] | None = None,
) -> list[T]:
    """Every job's result, in the order of ``jobs``; ``workers`` defaults to the CPU count.

    Workers take the next job as they finish one, so a long job does not hold up the rest.
    ``on_result(index, result)``, when given, is called here as each job finishes (in the order
    they finish), so the caller can act on a result while the other jobs still run. An exception
    a job raises is raised here (jobs that must not stop the others catch their own).
    """
    workers = min(len(jobs), workers or os.cpu_count() or 1)
    if workers <= 1 or not can_fork():
        finished: Iterable[tuple[int, T]] = ((index, job()) for index, job in enumerate(jobs))
        return _collect(finished, on_result, len(jobs))
    global _JOBS
    _JOBS = jobs
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(workers, initializer=ignore_interrupts) as pool:
            finished = pool.imap_unordered(_run, range(len(jobs)), chunksize=1)
            return _collect(finished, on_result, len(jobs))
    finally:
        _JOBS = ()


def _collect(
    finished: Iterable[tuple[int, T]],
    on_result: Callable[[int, T], None] | None,
    count: int,
) -> list[T]:
    """The results of ``finished`` (index, result) pairs put back in job order."""
    results: dict[int, T] = {}
    for index, result in finished:
        results[index] = result
        if on_result is not None:
            on_result(index, result)
    return [results[index] for index in range(count)]


def ignore_interrupts() -> None:
    """In a worker: Ctrl-C reaches every process of the terminal's group, and the worker leaves
    it to the process that started it, which stops its workers (no traceback from each)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def can_fork() -> bool:
    """Whether worker processes can be forked from this one safely (see the module docstring);
    not from a worker itself (a job that runs jobs runs them in order)."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and sys.platform != "darwin"
        and not multiprocessing.current_process().daemon
    )


def _run(index: int) -> tuple[int, Any]:
    return index, _JOBS[index]()
