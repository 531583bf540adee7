"""The examples of docs/plugins.md run as written: the case-table page plugin and its template
build a real site, and the ``Plugins`` test passes against that plugin."""

from __future__ import annotations

import re

from tests.conftest import TESTS

GUIDE = (TESTS.parent / "docs" / "plugins.md").read_text(encoding="utf-8")


def code_blocks(after: str, count: int) -> list[str]:
    """The first ``count`` fenced code blocks of the guide after the text ``after``."""
    return re.findall(r"```[a-z]*\n(.*?)```", GUIDE.split(after, 1)[1], re.S)[:count]


def guide_plugin(tmp_path):
    """The case-table example as ``my_plugin.py``, its template in ``templates/`` beside it."""
    plugin, template = code_blocks("<!-- example: case-table -->", 2)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "myops_cases.html").write_text(template)
    path = tmp_path / "my_plugin.py"
    path.write_text(plugin)
    return path


def test_the_guides_case_table_page_builds(tmp_path, site_from_rows):
    plugin = guide_plugin(tmp_path)
    rows = [
        {"workload": "myops-saxpy", "params": {"size": 1024}, "median_s": 1e-5, "row_id": "aa1"},
        {"workload": "myops-saxpy", "params": {"size": 4096}, "median_s": 3e-5, "row_id": "aa2"},
        {"workload": "matmul", "params": {"n": 64}, "median_s": 1e-4, "row_id": "bb1"},
    ]
    out, _ = site_from_rows(rows, plugins=(str(plugin),))
    page = (out / "myops-cases.html").read_text()
    assert 'id="row-aa1"' in page and 'id="row-aa2"' in page and "row-bb1" not in page
    assert 'href="runs/' in page  # each row links to its run's page
    assert ">My ops<" in (out / "index.html").read_text()  # in the navigation


def test_the_guides_plugins_example_passes(tmp_path, benchsite_plugins, monkeypatch):
    guide_plugin(tmp_path)
    monkeypatch.chdir(tmp_path)  # the example names my_plugin.py as a path
    (example,) = code_blocks("### The `Plugins` object", 1)
    scope: dict = {}
    exec(compile(example, "docs/plugins.md", "exec"), scope)  # the guide's own code
    scope["test_my_plugin_registers_cleanly"](benchsite_plugins)
