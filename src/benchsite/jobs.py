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
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

# the jobs of the running run_jobs call: a forked worker finds them here, by index
_JOBS: Sequence[Callable[[], Any]] = ()


def run_jobs(jobs: Sequence[Callable[[], T]], workers: int | None = None) -> list[T]:
    """Every job's result, in the order of ``jobs``; ``workers`` defaults to the CPU count.

    Workers take the next job as they finish one, so a long job does not hold up the rest. An
    exception a job raises is raised here (jobs that must not stop the others catch their own).
    """
    workers = min(len(jobs), workers or os.cpu_count() or 1)
    if workers <= 1 or not can_fork():
        return [job() for job in jobs]
    global _JOBS
    _JOBS = jobs
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return pool.map(_run, range(len(jobs)), chunksize=1)
    finally:
        _JOBS = ()


def can_fork() -> bool:
    """Whether worker processes can be forked from this one safely (see the module docstring);
    not from a worker itself (a job that runs jobs runs them in order)."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and sys.platform != "darwin"
        and not multiprocessing.current_process().daemon
    )


def _run(index: int) -> Any:
    return _JOBS[index]()
