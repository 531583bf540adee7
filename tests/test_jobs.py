"""Independent jobs on every core: results in order, the same with one worker or several, and
an exception a job raises reaches the caller."""

from __future__ import annotations

import functools
import os

import pytest

from benchsite.jobs import can_fork, run_jobs


def square_and_pid(value: int) -> tuple[int, int]:
    return value * value, os.getpid()


def fail() -> None:
    raise ValueError("job 3 broke")


@pytest.mark.parametrize("workers", [1, 4])
def test_results_come_back_in_order(workers):
    jobs = [functools.partial(square_and_pid, value) for value in range(12)]
    results = run_jobs(jobs, workers=workers)
    assert [square for square, _ in results] == [value * value for value in range(12)]
    pids = {pid for _, pid in results}
    assert pids == {os.getpid()} if workers == 1 or not can_fork() else os.getpid() not in pids


@pytest.mark.parametrize("workers", [1, 2])
def test_an_exception_in_a_job_reaches_the_caller(workers):
    with pytest.raises(ValueError, match="job 3 broke"):
        run_jobs([functools.partial(square_and_pid, 1), fail], workers=workers)


def test_no_jobs_no_workers():
    assert run_jobs([]) == []


def nested(value: int) -> list[tuple[int, int]]:
    return run_jobs([functools.partial(square_and_pid, value)] * 2, workers=2)


def test_a_job_that_runs_jobs_runs_them_in_its_own_process():
    for inner in run_jobs([functools.partial(nested, 3)] * 2, workers=2):
        assert [square for square, _ in inner] == [9, 9] and len({pid for _, pid in inner}) == 1


@pytest.mark.parametrize("workers", [1, 4])
def test_each_result_is_handed_over_here_as_its_job_finishes(workers):
    seen: list[tuple[int, int, int]] = []
    jobs = [functools.partial(square_and_pid, value) for value in range(12)]
    run_jobs(jobs, workers=workers, on_result=lambda i, r: seen.append((i, r[0], os.getpid())))
    assert sorted(seen) == [(value, value * value, os.getpid()) for value in range(12)]
