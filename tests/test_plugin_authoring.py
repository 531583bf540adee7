"""What a plugin author starts from: `benchsite new-plugin` writes a package that installs and
whose generated tests pass; a plugin's own templates/ folder is found without wiring a loader;
the site_from_rows fixture builds a real site from given rows."""

from __future__ import annotations

import os
import subprocess
import sys

from benchsite.cli.app import main
from tests.conftest import install_into


def test_new_plugin_writes_a_package_that_installs_and_passes_its_tests(tmp_path, capsys):
    folder = tmp_path / "fast-ops"
    try:
        main(["new-plugin", "fast-ops", "--out", str(folder)])
    except SystemExit as exited:
        assert not exited.code
    out = capsys.readouterr().out
    assert f"wrote {folder}" in out
    command = f"python -m pip install -e '{folder}[test]' && python -m pytest {folder}"
    assert f"next: {command}\n" in out  # the test extra, and pytest of the same Python
    assert 'test = ["pytest' in (folder / "pyproject.toml").read_text()
    target = install_into(tmp_path / "site-packages", folder)
    assert (target / "benchsite_fast_ops" / "__init__.py").is_file()
    env = {**os.environ, "PYTHONPATH": str(target)}
    tests = subprocess.run(  # the printed line's second half, from where it was printed
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "3 passed" in tests.stdout


def test_new_plugin_refuses_a_bad_name_or_an_existing_folder(tmp_path, capsys):
    for args in (["new-plugin", "Fast Ops"], ["new-plugin", "ops", "--out", str(tmp_path)]):
        try:
            main(args)
        except SystemExit as exited:
            assert exited.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: plugin name 'Fast Ops': use lower-case letters, digits")
    assert err[1] == f"error: {tmp_path} already exists: pass another --out, or remove it"


PAGE_PLUGIN = """
from benchsite import Page, RenderedPage, hookimpl

def render(site):
    return [site.render("shout.html", "shout.html", {"word": "hello"}, "shout")]

@hookimpl
def register_pages():
    return [Page(name="shout", nav="Shout", render=render)]
"""

TEMPLATE = """{% extends "base.html" %}
{% block content %}<p id="shout">{{ ctx.word | upper }} from {{ site.title }}</p>{% endblock %}
"""


def test_a_plugins_templates_folder_is_found_and_a_site_built_from_rows(tmp_path, site_from_rows):
    (tmp_path / "shouting.py").write_text(PAGE_PLUGIN)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "shout.html").write_text(TEMPLATE)
    rows = [
        {
            "workload": "matmul",
            "params": {"size": size},
            "device": device,
            "device_kind": kind,
            "median_s": seconds,
            "flops": 2.0 * size**3,
            "axis": "size",
            "axis_value": size,
        }
        for size, device, kind, seconds in [
            (256, "cpu", "cpu", 1e-3),
            (256, "cuda:0", "cuda", 1e-4),
        ]
    ]
    out, report = site_from_rows(rows, plugins=(str(tmp_path / "shouting.py"),))
    assert not report.page_errors and report.rows == 2
    assert '<p id="shout">HELLO from ' in (out / "shout.html").read_text()
    assert "matmul" in (out / "workloads" / "matmul.html").read_text()
