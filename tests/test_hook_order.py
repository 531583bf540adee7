"""Each hook is called when, how often, in which order and in which process its docstring in
``benchsite.hookspecs`` says: a real run and a real build with two recording plugins
(``tests/plugins/recording``: every hook, each call written down with its process), loaded
from a ``-p`` folder, so ``second`` is registered after ``first``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchsite._infra.cores import usable_cores
from benchsite._infra.pool import forks
from benchsite.measure.runner import RunOptions, run_benchmarks
from benchsite.site import BuildOptions, build_site
from tests.conftest import TESTS

RECORDING = str(TESTS / "plugins" / "recording")
NEWEST_FIRST = ["second", "first"]  # pluggy's order: the newest registered first


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """The calls the recording plugins wrote in one real run and one real build of its store
    (``run``, ``build``), each call's process named: ``main`` (this one) or ``child <pid>``."""
    folder = tmp_path_factory.mktemp("hook-order")
    record = folder / "calls.jsonl"
    record.touch()
    found: dict[str, list[dict[str, Any]]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCHSITE_TEST_RECORD", str(record))  # inherited by every child
        options = RunOptions(
            results=folder / "results",
            workloads=("record-*",),
            devices=("cpu",),
            plugins=(RECORDING,),
            budget_s=0.2,
            rounds=1,  # one worker, one setup a case (each round has its own: test_rounds.py)
        )
        found["statuses"] = [run_benchmarks(options).statuses]  # type: ignore[list-item]
        found["run"] = _read(record)
        build = BuildOptions(results=folder / "results", out=folder / "site", plugins=(RECORDING,))
        build_site(build)
        found["build"] = _read(record)
    return found


def _read(record: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    record.write_text("")
    for line in lines:
        line["where"] = "main" if line["pid"] == os.getpid() else f"child {line['pid']}"
    return lines


def _plugins(lines: list[dict[str, Any]], hook: str, where: str | None = None) -> list[str]:
    return [
        line["plugin"]
        for line in lines
        if line["hook"] == hook and (where is None or line["where"] == where)
    ]


def _first_index(lines: list[dict[str, Any]], hook: str) -> int:
    return next(i for i, line in enumerate(lines) if line["hook"] == hook)


def test_a_run_registers_once_in_its_process_and_once_in_each_worker(recorded):
    assert recorded["statuses"] == [{"ok": 2}]
    lines = recorded["run"]
    main = [line for line in lines if line["where"] == "main"]
    assert [(line["hook"], line["plugin"]) for line in main] == [
        *(("register_workloads", name) for name in NEWEST_FIRST),  # once, the names first
        *(("register_devices", name) for name in NEWEST_FIRST),  # once, before planning
        *(("register_collectors", name) for name in NEWEST_FIRST),  # before the first case
    ]
    workers = {line["where"] for line in lines} - {"main"}
    assert workers  # every case was set up in a worker process, none in the run's
    assert not _plugins(main, "setup")
    for worker in workers:
        own = [line for line in lines if line["where"] == worker]
        for hook in ("register_devices", "register_workloads", "register_collectors"):
            assert sorted(_plugins(own, hook)) == ["first", "second"]  # once each
            assert _first_index(own, hook) < _first_index(own, "setup")  # before its first case
    assert sorted(_plugins(lines, "setup")) == ["first", "second"]  # one case each
    for index, line in enumerate(lines):  # each collector starts around every case
        if line["hook"] == "setup":
            assert sorted(_plugins(lines[index + 1 : index + 3], "collector.start")) == [
                "first",
                "second",
            ]


def test_a_build_calls_each_hook_once_in_its_process_in_the_documented_order(recorded):
    lines = recorded["build"]
    for hook in (
        "prepare_results flags=False",  # newest first, and before the built-ins (no flags yet)
        "register_flags",
        "register_analyses",
        "prepare_jinja_env",
        "register_workloads",
        "register_pages",
    ):
        assert _plugins(lines, hook) == NEWEST_FIRST, hook
        assert _plugins(lines, hook, "main") == NEWEST_FIRST, hook
    side_by_side = forks() and usable_cores() > 1  # else in the build's process
    for hook in ("analyze", "render"):
        assert sorted(_plugins(lines, hook)) == ["first", "second"], hook  # once each
        where = {line["where"] for line in lines if line["hook"] == hook}
        assert ("main" not in where) is side_by_side, (hook, where)
    order = [
        "prepare_results flags=False",
        "register_analyses",
        "analyze",
        "prepare_jinja_env",
        "register_pages",
        "render",
    ]
    firsts = [_first_index(lines, hook) for hook in order]
    assert _first_index(lines, "register_flags") < _first_index(lines, "analyze")
    assert firsts == sorted(firsts)
    assert _first_index(lines, "analyze") > max(
        i for i, line in enumerate(lines) if line["hook"].startswith("prepare_results")
    )
