"""The plugin contract: every hook documented, a plugin implementing every hook still works,
and a separately installed package is discovered through its entry point, run and stored."""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from benchsite import Page, hookspecs
from benchsite.host import registry
from benchsite.site import analyse as analysis
from benchsite.store import parts as store
from benchsite.tables import Tables
from tests.conftest import EXAMPLE_RESULTS, TESTS, install_into, patience

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
    # a flag this plugin registers as suspect keeps the rows carrying it out of the headlines
    assert analysed.tables.flags["every-odd"].suspect
    assert "every-odd" in analysed.tables.suspect_flags
    odd = analysed.results.assign(flags=[("every-odd",)] * len(rows))
    tables = Tables.of(odd, analysed.tables.flags)
    assert tables.usable.empty and set(tables.suspect["reasons"]) == {("every-odd",)}
    (finding,) = analysed.of_kind("note")
    assert finding.answer == "2 rows" and set(finding.evidence) == set(rows["row_id"])


GROUPED = """
import os
from benchsite import Analysis, Finding, hookimpl

SEEN = []  # what this process ran, in order

def ran(name):
    def analyze(results):
        SEEN.append(name)
        return [Finding(id=name, kind="note", title=name, answer=" ".join([str(os.getpid()), *SEEN]))]
    return analyze

def builds_on(tables, findings):
    SEEN.append("b")
    mine = [f.id for f in findings if f.kind == "note"]
    return [Finding(id="b", kind="note", title="b", answer=" ".join([str(os.getpid()), *mine]),
                    numbers={"pairs": len(tables.speedups)})]

@hookimpl
def register_analyses():
    return [Analysis(name="a", description="d", analyze=ran("a"), group="g"),
            Analysis(name="b", description="d", analyze=builds_on),
            Analysis(name="c", description="d", analyze=ran("c"))]
"""


def test_analyses_run_once_in_this_process_and_those_taking_findings_last(
    tmp_path, benchsite_plugins
):
    (tmp_path / "grouped.py").write_text(GROUPED)
    plugins = benchsite_plugins(str(tmp_path / "grouped.py"))
    rows = store.read_results(EXAMPLE_RESULTS)
    with pytest.warns(DeprecationWarning, match="group"):
        analysed = analysis.analyse(plugins, rows)
    mine = [finding for finding in analysed.findings if finding.id in {"a", "b", "c"}]
    assert [finding.id for finding in mine] == ["a", "b", "c"]  # in the order registered
    pids = {finding.answer.split()[0] for finding in mine}
    assert pids == {str(os.getpid())}
    assert mine[1].answer.split()[1:] == ["a", "c"]  # b ran after a and c and got their findings
    assert mine[1].numbers["pairs"] == len(analysed.tables.speedups) > 0
    assert analysed.of_kind("speedup") and analysed.of_kind("claim")


def test_a_page_that_says_it_needs_no_findings_is_deprecated_and_renders_all_the_same():
    with pytest.warns(DeprecationWarning, match=r"Page\(needs_findings=...\) for notes"):
        page = Page(name="notes", render=lambda site: [], needs_findings=False)
    assert page.render(None) == [] and page.nav_path == "notes.html"


OLD_PAGE = """
from benchsite import Page, hookimpl

@hookimpl
def register_pages():
    return [Page(name="old", render=lambda site: [], needs_findings=True)]
"""


def test_a_deprecation_is_one_note_per_command_however_often_its_plugin_loads(tmp_path):
    """Two plugin managers in one command (a build after the quick suite), with the warning
    filters changed between them (pandas and Altair do): the note is said once."""
    plugin = tmp_path / "old_page.py"
    plugin.write_text(OLD_PAGE)
    code = (
        "import warnings\n"
        "from benchsite.cli.app import show_warnings_as_notes\n"
        "from benchsite.host import registry\n"
        "from benchsite.host.manager import load_plugins\n"
        "show_warnings_as_notes()\n"
        "for _ in range(2):\n"
        f"    registry.pages(load_plugins([{str(plugin)!r}]))\n"
        "    with warnings.catch_warnings():\n"
        "        warnings.simplefilter('ignore')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=patience(120)
    )
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "needs_findings" in line]
    assert len(notes) == 1 and notes[0].startswith("note: Page(needs_findings=...) for old")


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory):
    """Install tests/thirdparty_plugin as a real distribution into a private folder."""
    target = install_into(tmp_path_factory.mktemp("site-packages"), TESTS / "thirdparty_plugin")
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
