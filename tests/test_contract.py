"""The plugin contract: every hook documented, a plugin implementing every hook still works,
and a separately installed package is discovered through its entry point, run and stored."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from benchsite import analysis, hookspecs, registry
from tests.conftest import TESTS

EVERY_HOOK = str(TESTS / "plugins" / "every_hook.py")


@pytest.mark.parametrize("name", hookspecs.HOOK_NAMES)
def test_every_hook_is_documented(name):
    doc = inspect.getdoc(getattr(hookspecs, name)) or ""
    for part in ("When:", "Returns:", "Example::", "Since:"):
        assert part in doc, f"hook {name} docstring lacks {part!r}"


def test_the_guide_lists_every_hook():
    guide = (TESTS.parent / "docs" / "plugins.md").read_text()
    for name in hookspecs.HOOK_NAMES:
        assert f"`{name}" in guide, f"docs/plugins.md does not document {name}"


def test_a_plugin_implementing_every_hook_works(benchsite_plugins, run_workloads):
    plugins = benchsite_plugins(EVERY_HOOK)
    assert set(plugins.infos["every_hook"].hooks) == set(hookspecs.HOOK_NAMES)
    assert "every:0" in registry.devices(plugins) and "every" in registry.collectors(plugins)
    assert "every" in registry.pages(plugins)
    env = jinja2.Environment()
    plugins.hook.prepare_jinja_env(env=env)
    assert env.from_string("{{ 'x' | every }}").render() == "every x"

    _, rows = run_workloads("every-sum", plugins=(EVERY_HOOK,), devices=("cpu", "every:0"))
    assert sorted(rows["device"]) == ["cpu", "every:0"] and set(rows["status"]) == {"ok"}
    assert '"every.one": 1.0' in rows["metrics"].iloc[0]
    analysed = analysis.analyse(plugins, rows)
    assert analysed.results["every"].all()
    (finding,) = analysed.of_kind("note")
    assert finding.answer == "2 rows" and set(finding.evidence) == set(rows["row_id"])


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory):
    """Install tests/thirdparty_plugin as a real distribution into a private folder."""
    target = tmp_path_factory.mktemp("site-packages")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(TESTS / "thirdparty_plugin"),
        ],
        check=True,
    )
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    yield target
    sys.path.remove(str(target))
    sys.modules.pop("benchsite_example", None)


def test_installed_package_is_discovered_run_and_stored(
    installed_example, benchsite_plugins, run_workloads
):
    plugins = benchsite_plugins()
    info = plugins.infos["example"]
    assert info.source == "entry point (benchsite-example)" and info.version == "1.2.3"
    assert set(info.hooks) == {"register_workloads", "register_collectors"}
    assert registry.workloads(plugins)["example-saxpy"].plugin == "example"

    _, rows = run_workloads("example-saxpy")
    row = rows.iloc[0]
    assert row["status"] == "ok" and row["plugin"] == "example" and row["plugin_version"] == "1.2.3"
    assert row["tflops"] > 0 and row["gbps"] > 0
    assert "example-wall.seconds" in row["metrics"]
    assert Path(installed_example, "benchsite_example").is_dir()
