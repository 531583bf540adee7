"""``benchsite new-plugin NAME``: write a plugin package that installs and whose tests pass as
generated: a ``pyproject.toml`` declaring the ``benchsite`` entry point, a module with a
workload (``NAME-axpy``) and a collector (``NAME-wall``), and tests using the fixtures of
:mod:`benchsite.testing`. The plugin author renames and grows it from there."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from benchsite.errors import BenchsiteError
from benchsite.host.validation import NAME_RULE

PLUGIN_NAME = re.compile(r"^[a-z][a-z0-9-]*$")

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "benchsite-{name}"
version = "0.1.0"
description = "benchsite plugin {name}: a workload and a collector."
requires-python = ">=3.11"
dependencies = ["benchsite"]

[project.optional-dependencies]
test = ["pytest>=8"]

# benchsite finds the plugin through this entry point once the package is installed
[project.entry-points.benchsite]
{name} = "{module}"

[tool.setuptools.package-dir]
"" = "src"

# a page's own Jinja templates go in src/{module}/templates/: this ships them in the wheel
[tool.setuptools.package-data]
{module} = ["templates/*.html"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

MODULE = '''\
"""benchsite plugin {name}: the workload ``{name}-axpy`` and the collector ``{name}-wall``.

The hooks and records are documented in benchsite's docs/plugins.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from benchsite import Case, Collector, Device, Workload, hookimpl


def setup_axpy(device: Device, params: Mapping[str, Any]) -> Case:
    """One case: y += 2·x on float32 vectors of ``params["size"]`` elements on ``device``."""
    import torch

    size = int(params["size"])
    x = torch.rand(size, device=device.name)
    y = torch.rand(size, device=device.name)
    # per call: 2 FLOPs, 12 bytes moved (read x and y, write y) and one item per element
    return Case(run=lambda: y.add_(x, alpha=2.0), flops=2.0 * size, bytes=12.0 * size, items=size)


def start_wall(device: Device) -> Callable[[], Mapping[str, float]]:
    """Start timing the samples; the function returned stops and gives the metrics."""
    started = time.perf_counter()
    return lambda: {{"seconds": time.perf_counter() - started}}


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="{name}-axpy",
            description="y += 2·x on float32 vectors (memory-bound).",
            setup=setup_axpy,
            params={{"size": [2**16, 2**20, 2**24]}},  # full profile: every value
            quick={{"size": [2**16]}},  # `benchsite run` (quick profile) runs these
            axis="size",
            tags=("example",),
        )
    ]


@hookimpl
def register_collectors() -> list[Collector]:
    return [
        Collector(
            name="{name}-wall",
            description="Host wall-clock seconds spent in the timed samples.",
            start=start_wall,
        )
    ]
'''

CONFTEST = """\
# the fixtures benchsite's own tests use: benchsite_plugins, fake_device, results_dir,
# run_workloads, site_from_rows (see benchsite's docs/plugins.md, "Testing your plugin")
pytest_plugins = ["benchsite.testing"]
"""

TEST = '''\
"""Tests of the {name} plugin, with the fixtures of benchsite.testing (see conftest.py)."""

from __future__ import annotations

import json

from benchsite.host import registry
from {module} import setup_axpy


def test_the_plugin_is_found_through_its_entry_point(benchsite_plugins):
    plugins = benchsite_plugins()
    assert registry.workloads(plugins)["{name}-axpy"].plugin == "{name}"
    assert "{name}-wall" in registry.collectors(plugins)
    assert not plugins.infos["{name}"].error


def test_setup_builds_a_case_that_runs(fake_device):
    case = setup_axpy(fake_device, {{"size": 1024}})
    case.run()
    assert case.flops == 2048 and case.bytes == 12 * 1024


def test_a_real_run_stores_ok_rows_with_the_collector_metric(run_workloads):
    report, rows = run_workloads("{name}-axpy")
    assert report.statuses == {{"ok": 1}} and rows["gbps"].iloc[0] > 0
    assert json.loads(rows["metrics"].iloc[0])["{name}-wall.seconds"] > 0
'''

README = """\
# benchsite-{name}

A benchsite plugin: the workload `{name}-axpy` and the collector
`{name}-wall`, in `src/{module}/__init__.py`.

```bash
python -m pip install -e '.[test]'  # benchsite finds it through its `benchsite` entry point
benchsite workloads {name}-axpy
python -m pytest
```
"""


def module_name(name: str) -> str:
    return "benchsite_" + name.replace("-", "_")


def write_plugin(name: str, folder: Path) -> Path:
    """Write the package for plugin ``name`` into ``folder`` (which must not exist yet)."""
    if not PLUGIN_NAME.match(name):
        raise BenchsiteError(
            f"plugin name {name!r}: use lower-case letters, digits and '-', starting with a "
            f"letter (its workloads are then named like it: {NAME_RULE})"
        )
    if folder.exists():
        raise BenchsiteError(f"{folder} already exists: pass another --out, or remove it")
    module = module_name(name)
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        f"src/{module}/__init__.py": MODULE,
        "conftest.py": CONFTEST,
        f"tests/test_{module}.py": TEST,
    }
    for path, template in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(template.format(name=name, module=module), encoding="utf-8")
    return folder


def next_command(folder: Path) -> str:
    """The shell line that installs the new package with its test extra into the Python that
    runs benchsite's ``python`` and runs its tests: it works as printed in a fresh venv (a bare
    ``pytest`` may be another interpreter's; without ``[test]`` pytest may be missing)."""
    where = shlex.quote(str(folder))
    return f"python -m pip install -e {shlex.quote(f'{folder}[test]')} && python -m pytest {where}"
