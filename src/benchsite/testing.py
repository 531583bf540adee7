"""Pytest fixtures for benchsite and its plugin authors.

Enable in a ``conftest.py`` with ``pytest_plugins = ["benchsite.testing"]``. The fixtures use
real parts: a real plugin manager, a real Parquet store in a temporary folder, real runs, a real
site build. Each is documented in ``docs/plugins.md`` ("Testing your plugin"):

- ``fake_device`` → :class:`~benchsite.records.Device`
- ``benchsite_plugins(*specs, strict=False)`` → :class:`~benchsite.host.manager.Plugins`
- ``results_dir`` → :class:`~pathlib.Path` (an empty store folder)
- ``run_workloads(*names, **run_options)`` → ``(RunReport, DataFrame)``
- ``site_from_rows(rows, **build_options)`` → ``(Path, BuildReport)``
- ``benchsite_timer(setup, name=None, params=None)`` → ``{device name: Timed}``: times a
  function on every device inside a test and stores it as rows in the store that
  ``--benchsite-results DIR`` (or ``BENCHSITE_RESULTS``) names
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchsite.host import registry
from benchsite.host.manager import Plugins, load_plugins
from benchsite.measure.in_tests import Setup, TestTimer, Timed
from benchsite.measure.runner import RunOptions, RunReport, run_benchmarks
from benchsite.records import Device
from benchsite.store import parts as store
from benchsite.toolkit.timing import HostClockTimer


@pytest.fixture
def fake_device() -> Device:
    """A CPU-backed device of kind ``cpu`` named ``cpu``, for calling a workload's setup
    directly without discovering the machine's devices."""
    return Device(
        name="cpu", kind="cpu", info={"model": "fake"}, fingerprint="fake", timer=HostClockTimer
    )


@pytest.fixture
def benchsite_plugins() -> Callable[..., Plugins]:
    """Load a fresh plugin manager: ``benchsite_plugins("path/to/plugin.py", strict=False)``."""
    return lambda *specs, strict=False: load_plugins(specs, strict=strict)


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    """An empty results store folder."""
    return tmp_path / "results"


@pytest.fixture
def run_workloads(results_dir: Path) -> Callable[..., tuple[RunReport, pd.DataFrame]]:
    """Run workloads for real into ``results_dir`` with a small budget, in one round (one
    worker process; ``rounds=3`` to measure as a run does), and return the report and the
    stored rows: ``run_workloads("matmul", plugins=("my_plugin.py",), devices=("cpu",))``."""

    def run(*workloads: str, **options: Any) -> tuple[RunReport, pd.DataFrame]:
        options.setdefault("budget_s", 0.2)
        options.setdefault("rounds", 1)
        options.setdefault("devices", ("cpu",))
        report = run_benchmarks(RunOptions(results=results_dir, workloads=workloads, **options))
        return report, store.read_results(results_dir)

    return run


ROW_DEFAULTS: dict[str, Any] = {
    "run_id": "test-run",
    "host": "test-host",
    "device": "cpu",
    "device_kind": "cpu",
    "device_model": "test CPU",
    "fingerprint": "test",
    "plugin": "test",
    "profile": "quick",
    "status": "ok",
    "n_samples": 5,
    "calls_per_sample": 1,
    "world_size": 1,
}


def complete_row(
    row: Mapping[str, Any], axis: str | None = None, item: str | None = None
) -> dict[str, Any]:
    """A store row from the columns given (at least ``workload``; ``params`` as a dict), the
    rest filled in: the defaults above, a fresh ``row_id``, now as ``timestamp``, the case
    key, ``axis`` and ``item_unit`` (the workload's ``axis`` and ``item``, given here) and ``axis_value`` as a run stores
    them, and for an ``ok`` row with ``median_s`` its interval when none is given."""
    full = {**ROW_DEFAULTS, **row}
    full.setdefault("item_unit", item)
    params = full.setdefault("params", {})
    if axis is not None and full.get("axis") is None and axis in params:
        full["axis"] = axis
        full.setdefault("axis_value", None)
        if full["axis_value"] is None and isinstance(params[axis], int | float):
            full["axis_value"] = float(params[axis])
    full.setdefault("row_id", uuid.uuid4().hex)
    full.setdefault("timestamp", datetime.now(UTC))
    full.setdefault("case_key", f"{full['workload']}?{json.dumps(params, sort_keys=True)}")
    full.setdefault("schema_version", store.SCHEMA_VERSION)
    if full.get("median_s") is not None:
        full.setdefault("ci_low_s", full["median_s"])
        full.setdefault("ci_high_s", full["median_s"])
    return full


def _declared(plugin_specs: tuple[str, ...]) -> dict[str, tuple[str | None, str | None]]:
    """Each registered workload's axis and item (the built-ins' and those of
    ``plugin_specs``)."""
    plugins = load_plugins(plugin_specs, quiet=True)
    return {
        name: (registered.item.axis, registered.item.item)
        for name, registered in registry.workloads(plugins).items()
    }


@pytest.fixture
def site_from_rows(tmp_path: Path) -> Callable[..., tuple[Path, Any]]:
    """Build a real site from the rows given, without running anything:
    ``site_from_rows([{"workload": "saxpy", "params": {"size": 1024}, "median_s": 1e-3}],
    plugins=("my_plugin.py",))`` writes them (completed by :func:`complete_row`) into a store
    in a temporary folder, builds the site with ``benchsite.site.build_site`` (keyword
    arguments go to its ``BuildOptions``) and returns ``(site folder, BuildReport)``. A page or
    an analysis that raises makes it raise :class:`benchsite.errors.BuildFailed` with the
    reason (with ``keep_going=True`` the report's ``page_errors`` and ``analysis_errors`` hold
    them instead)."""

    def build(rows: Iterable[Mapping[str, Any]], **options: Any) -> tuple[Path, Any]:
        from benchsite.site import BuildOptions, build_site

        results, out = tmp_path / "site-results", tmp_path / "site"
        declared = _declared(tuple(options.get("plugins", ())))
        completed = (complete_row(row, *declared.get(str(row["workload"]), ())) for row in rows)
        runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in completed:
            runs.setdefault((row["host"], row["run_id"]), []).append(row)
        for (host, run_id), run_rows in runs.items():
            store.write_rows(results, host, run_id, run_rows)
        return out, build_site(BuildOptions(results=results, out=out, **options))

    return build


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("benchsite")
    group.addoption(
        "--benchsite-results",
        metavar="DIR|URL",
        default=os.environ.get("BENCHSITE_RESULTS"),
        help="Store what benchsite_timer measures in this results store (default: "
        "$BENCHSITE_RESULTS; unset: measured, not stored).",
    )
    group.addoption(
        "--benchsite-device",
        action="append",
        default=[],
        metavar="DEVICE",
        help="Device name or glob benchsite_timer measures on (default: every device).",
    )


@pytest.fixture(scope="session")
def benchsite_session_timer(request: pytest.FixtureRequest) -> TestTimer:
    """The session's :class:`~benchsite.measure.in_tests.TestTimer`: one run id for every
    test, the store and devices of the command line."""
    from benchsite.store.remote import locate

    where = request.config.getoption("--benchsite-results")
    devices = tuple(request.config.getoption("--benchsite-device"))
    return TestTimer(results=locate(where) if where else None, devices=devices)


@pytest.fixture
def benchsite_timer(
    request: pytest.FixtureRequest, benchsite_session_timer: TestTimer
) -> Callable[..., dict[str, Timed]]:
    """Time a function on every device, as ``benchsite run`` times a case, and store a row per
    device: ``benchsite_timer(setup, name=None, params=None)``. ``setup(device)`` returns the
    callable to time (or a :class:`~benchsite.Case`, with its FLOPs or bytes); build its
    inputs there, on ``device.name``. ``name`` is the workload name the rows carry (default:
    the test's name); ``params`` its parameters. Returns ``{device name: Timed}`` (``median_s``,
    ``ci_low_s``, ``ci_high_s``, ``row``) of the devices it measured."""

    def timer(
        setup: Setup, name: str | None = None, params: dict[str, Any] | None = None
    ) -> dict[str, Timed]:
        return benchsite_session_timer.time(
            setup, name or _workload_name(request.node.name), params
        )

    return timer


def _workload_name(test_name: str) -> str:
    """``test_matmul[256-fp32]`` → ``test-matmul-256-fp32``."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", test_name).strip("-").lower()
