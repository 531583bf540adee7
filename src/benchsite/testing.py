"""Pytest fixtures for benchsite and its plugin authors.

Enable in a ``conftest.py`` with ``pytest_plugins = ["benchsite.testing"]``. The fixtures use
real parts: a real plugin manager, a real Parquet store in a temporary folder, real runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchsite import store
from benchsite.plugin_manager import Plugins, load_plugins
from benchsite.plugins.device_cpu import HostClockTimer
from benchsite.records import Device
from benchsite.runner import RunOptions, RunReport, run_benchmarks


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
    """Run workloads for real into ``results_dir`` with a small budget and return the report and
    the stored rows: ``run_workloads("matmul", plugins=("my_plugin.py",), devices=("cpu",))``."""

    def run(*workloads: str, **options: Any) -> tuple[RunReport, pd.DataFrame]:
        options.setdefault("budget_s", 0.2)
        options.setdefault("devices", ("cpu",))
        report = run_benchmarks(RunOptions(results=results_dir, workloads=workloads, **options))
        return report, store.read_results(results_dir)

    return run
