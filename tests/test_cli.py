"""The command line as a user meets it: each plugin mistake is one exact line (a note, or with
--strict an error and exit status 2), run and build exit 1 when nothing succeeded or a part
failed, the listings are one line per item at 80 columns and in a pipe, results formats like
the site and exports, and help shows flags as flags. Through the real entry point
(``benchsite.cli.app.main``, in process, or the installed command in a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchsite.cli.app import main
from benchsite.host import registry
from benchsite.host.manager import load_plugins
from tests.conftest import CASEBOOK, EXAMPLE_RESULTS

STRICT = "(--strict makes this fatal)"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``benchsite ARGS`` in this process: (exit status, stdout, stderr)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    out = capsys.readouterr()
    return exited.value.code or 0, out.out, out.err


def plugin_file(tmp_path: Path, body: str, name: str = "bad") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text("from benchsite import *\nfrom benchsite import hookimpl\n" + body)
    return str(path)


RAISING = """
@hookimpl
def register_workloads():
    raise RuntimeError("boom")
"""


def test_a_raising_register_hook_is_one_note_and_fatal_when_strict(tmp_path, capsys):
    bad = plugin_file(tmp_path, RAISING)
    status, out, err = cli(capsys, "workloads", "-p", bad)
    problem = f"plugin bad ({bad}): register_workloads raised RuntimeError: boom (bad.py:6)"
    assert status == 0 and "matmul" in out
    assert err == f"note: {problem}; what its register_workloads gives is left out {STRICT}\n"
    assert cli(capsys, "workloads", "-p", bad, "--strict") == (2, "", f"error: {problem}\n")


MISSPELT = """
@hookimpl
def register_workload():
    return []
"""


def test_a_misspelt_hook_is_named_with_the_right_one(tmp_path, capsys):
    bad = plugin_file(tmp_path, MISSPELT)
    problem = (
        f"plugin bad ({bad}): register_workload is not a benchsite hook "
        "(did you mean register_workloads?)"
    )
    status, _, err = cli(capsys, "plugins", "-p", bad)
    assert status == 0 and err == f"note: {problem}; it is ignored {STRICT}\n"
    assert cli(capsys, "plugins", "-p", bad, "--strict") == (2, "", f"error: {problem}\n")


BAD_COLLECTORS = """
@hookimpl
def register_collectors():
    return [Collector(name="avg", description="d", start=lambda device: dict,
                      merge={"x": "average"})]
"""


def test_a_collector_problem_is_said_by_plugins_and_stops_a_strict_run(tmp_path, capsys):
    """Collectors are used in the measuring worker, which says nothing: the problem is found
    when the plugins are listed, and before a run measures anything."""
    bad = plugin_file(tmp_path, BAD_COLLECTORS)
    status, out, err = cli(capsys, "plugins", "-p", bad)
    assert (
        status == 0
        and "register_collectors raised ValueError: collector avg: merge rule(s)" in err
        and "unknown; use one of max, sum, device_sum, min, or" in err
    )
    assert "error: register_collectors raised" in out
    status, _, err = cli(
        capsys, "run", "-p", bad, "--strict", "-w", "matmul", "--results", str(tmp_path / "r")
    )
    assert status == 2 and err.startswith("error: plugin bad") and "merge rule" in err
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("*.parquet"))


def test_a_healthy_plugin_shows_no_error(capsys):
    status, out, _ = cli(capsys, "plugins", "workloads.matmul")
    assert status == 0 and "hooks: register_workloads" in out and "error" not in out
    status, out, _ = cli(capsys, "plugins", "workloads.matmul", "--json")
    assert status == 0 and json.loads(out)["error"] is None


ODD_ANALYSIS = """
@hookimpl
def register_analyses():
    return [Analysis(name="odd", description="d", analyze=lambda table: [])]
"""


def test_an_analysis_naming_no_argument_benchsite_passes_gets_a_note(tmp_path, capsys):
    status, _, err = cli(capsys, "plugins", "-p", plugin_file(tmp_path, ODD_ANALYSIS))
    assert (
        status == 0
        and "analysis 'odd': analyze() takes 'table', which benchsite does "
        "not pass by name (results, tables, findings)"
        in err
    )


WORKLOAD = """
def setup(device, params):
    return Case(run=lambda: None)

@hookimpl
def register_workloads():
    return [Workload(name={name!r}, description="d", setup=setup, {fields})]
"""

INVALID = [
    ("w", 'params={"size": 1024}', "params['size'] is 1024, one value: give a list, like [1024]"),
    ("w", 'params={"size": [1]}, axis="n"', "axis 'n' is no parameter of params (size)"),
    (
        "w",
        'params={"size": [1]}, quick={"szie": [1]}',
        "quick names 'szie', which is no parameter of params (size)",
    ),
    (
        "w",
        'params={"my size": [1]}',
        "params parameter name 'my size' is not identifier-like (letters, digits, '_')",
    ),
    ("index", 'params={"n": [1]}', "name 'index' is reserved (the list of workloads): rename it"),
    (
        "w",
        'params={"n": [1]}, devices="cpu"',
        "devices is 'cpu': give a tuple of device kinds, like ('cpu', 'cuda')",
    ),
    (
        "w",
        'params={"n": [1]}, timeout_s=0',
        "timeout_s is 0: give a positive number of seconds, or None",
    ),
    (
        "w",
        'params={"n": [1]}, item="images/s"',
        "item is 'images/s': give what one item is as a singular noun in lower case, like "
        "'image' or 'token'",
    ),
    (
        "my workload",
        'params={"n": [1]}',
        "name 'my workload' is not a valid name: use letters, digits, '-', '_', '.' or '+', "
        "starting with a letter or digit",
    ),
]


@pytest.mark.parametrize(("name", "fields", "problem"), INVALID)
def test_an_invalid_workload_is_one_line_naming_plugin_workload_and_field(
    tmp_path, capsys, name, fields, problem
):
    bad = plugin_file(tmp_path, WORKLOAD.format(name=name, fields=fields))
    status, out, err = cli(capsys, "workloads", "-p", bad)
    line = f"plugin bad ({bad}): workload {name!r}: {problem}"
    assert status == 0 and err == f"note: {line}; workload left out {STRICT}\n"
    assert f"\n{name} " not in out
    assert cli(capsys, "workloads", "-p", bad, "--strict") == (2, "", f"error: {line}\n")


def test_a_device_kind_no_plugin_provides_is_reported_when_running(tmp_path, capsys):
    bad = plugin_file(
        tmp_path, WORKLOAD.format(name="w", fields='params={"n": [1]}, devices=("tpu",)')
    )
    status, _, err = cli(
        capsys, "run", "-w", "w", "-d", "cpu", "-p", bad, "--results", str(tmp_path)
    )
    kinds = "cpu, cuda, hpu, meta, mps, mtia, xla, xpu"
    assert status == 2
    assert err == (
        f"note: plugin bad ({bad}): workload 'w': devices names kind 'tpu', which no device "
        f"plugin provides (known: {kinds}); workload left out {STRICT}\n"
        "error: no workload matches w; see `benchsite workloads` for names\n"
    )


def test_a_page_on_a_reserved_or_taken_path_is_refused(tmp_path, capsys):
    pages = """
@hookimpl
def register_pages():
    return [Page(name="index", render=lambda site: []),
            Page(name="x", path="assets/x.html", render=lambda site: [])]
"""
    bad = plugin_file(tmp_path, pages)
    args = ("build", "--results", str(EXAMPLE_RESULTS), "--out", str(tmp_path / "site"))
    status, _, err = cli(capsys, *args, "-p", bad)
    assert status == 2 and err == (
        f"note: plugin bad ({bad}): page 'x': path 'assets/x.html' is reserved or outside the "
        f"site: choose another; page left out {STRICT}\n"
        "error: pages 'index' (bad) and 'overview' (pages.overview) both write index.html: give "
        "one a different name or path\n"
    )


COLLECTOR = """
@hookimpl
def register_collectors():
    return [Collector(name="words", description="d", start=lambda device: lambda: {"mood": "fine", "n": 2})]
"""


def test_run_exits_1_when_no_case_succeeded_and_prints_plain_lines(tmp_path, capsys):
    words = plugin_file(tmp_path, COLLECTOR, "words")
    args = ("run", "-w", "case-raise", "-w", "case-add", "-d", "cpu", "--budget", "0.05")
    args += ("--rounds", "1")
    status, out, err = cli(
        capsys, *args, "-p", CASEBOOK, "-p", words, "--results", str(tmp_path / "a")
    )
    assert status == 0
    assert (
        "[1/3] error case-raise n=1 on cpu: ValueError: this case always fails (casebook.py:18)\n"
        in out
    )
    assert "[2/3] ok case-add size=1024 on cpu: " in out
    assert "note: collector words: metric 'mood' is 'fine' (str), not a number: not stored\n" in out

    store = tmp_path / "b"
    status, out, err = cli(capsys, *args[:3], *args[5:], "-p", CASEBOOK, "--results", str(store))
    assert status == 1
    assert err.endswith(
        f"error: no case succeeded (1 error): see the lines above, or "
        f"`benchsite results --results {store}`\n"
    )


FAILING_PAGE = """
@hookimpl
def register_pages():
    def render(site):
        raise ValueError("no luck")
    return [Page(name="broken", render=render)]
"""


def test_build_exits_1_when_a_page_failed_unless_keep_going(tmp_path, capsys):
    bad = plugin_file(tmp_path, FAILING_PAGE)
    store, out = tmp_path / "store", tmp_path / "site"
    cli(
        capsys,
        "run",
        "-w",
        "case-add",
        "-d",
        "cpu",
        "-p",
        CASEBOOK,
        "--budget",
        "0.05",
        "--rounds",
        "1",
        "--results",
        str(store),
    )
    args = ("build", "--results", str(store), "--out", str(out), "-p", bad, "-p", CASEBOOK)
    status, printed, err = cli(capsys, *args)
    assert status == 1 and not (out / "index.html").exists()  # nothing published
    assert "building the site: reading the store (" in printed  # plain lines, not a bar
    assert err.startswith("error: 1 part(s) of the site failed (page broken: ValueError: no luck")
    assert err.count("\n") == 1 and "pass --keep-going to publish the rest" in err
    status, _, err = cli(capsys, *args, "--keep-going")
    assert status == 0 and (out / "index.html").is_file()
    assert err == "note: broken failed: ValueError: no luck (bad.py:7)\n"


def test_listings_are_one_line_per_item_in_a_pipe_at_80_columns():
    env = {**os.environ, "COLUMNS": "80"}
    command = [sys.executable, "-m", "benchsite.cli.app"]
    piped = subprocess.run(
        [*command, "workloads"], capture_output=True, text=True, env=env, check=True
    )
    names = sorted(registry.workloads(load_plugins()))
    lines = piped.stdout.splitlines()
    assert [line.split()[0] for line in lines] == names and piped.stderr == ""
    one = subprocess.run(
        [*command, "workloads", "matmul"], capture_output=True, text=True, check=True
    )
    assert "quick grid (8 cases):\n  size=16, 64, 256, 1024  precision=fp32\n" in one.stdout


def test_listings_give_json_and_details(capsys):
    status, out, _ = cli(capsys, "workloads", "--json")
    rows = json.loads(out)
    matmul = next(row for row in rows if row["name"] == "matmul")
    assert status == 0 and matmul["quick_cases"] == 8 and matmul["axis"] == "size"
    assert matmul["timeout_s"] == 600.0  # the default, said
    status, out, _ = cli(capsys, "devices", "cpu")
    assert status == 0 and out.startswith("name: cpu\nkind: cpu\n")
    assert json.loads(cli(capsys, "plugins", "--json")[1])[0]["source"] == "builtin"
    assert cli(capsys, "workloads", "nope")[2].startswith(
        "error: no workload named 'nope'; there are: "
    )


def test_results_picks_any_run_formats_like_the_site_and_exports(tmp_path, capsys):
    args = ("results", "--results", str(EXAMPLE_RESULTS))
    status, out, _ = cli(capsys, *args, "--host", "cpu-2core", "--csv", str(tmp_path / "r.csv"))
    assert status == 0 and out.startswith("run 20261130T180247Z-98b30c on cpu-2core")
    assert ".0×" not in out and "e-0" not in out and "FLOP/s" in out
    csv = (tmp_path / "r.csv").read_text().splitlines()  # the site's CSV writer: names quoted
    assert (
        csv[0]
        .replace('"', "")
        .startswith("run_id,host,timestamp,workload,params,device,status,median_s")
    )
    status, out, _ = cli(
        capsys, *args, "--run", "20261202T004043Z", "--json", str(tmp_path / "r.json")
    )
    rows = json.loads((tmp_path / "r.json").read_text())
    assert status == 0 and {row["run_id"] for row in rows} == {"20261202T004043Z-b8717f"}
    status, _, err = cli(capsys, *args, "--run", "1999")
    assert status == 2 and err.startswith("error: no run matching '1999' in ")


def test_version_and_help_show_flags_as_flags(capsys):
    status, out, _ = cli(capsys, "--version")
    assert status == 0 and out.startswith("benchsite ")
    status, out, _ = cli(capsys, "run", "--help")
    assert status == 0 and "  --quick " in out and "<bool>" not in out


def test_a_run_on_a_terminal_prints_each_finished_case_above_the_bar(fake_device):
    import io

    from rich.console import Console

    from benchsite import Workload
    from benchsite.cli.progress import ProgressReporter
    from benchsite.host.registry import Registered
    from benchsite.measure.runner import PlannedCase

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, color_system=None)
    workload = Workload(name="w", description="d", setup=lambda d, p: None, params={"n": [1]})
    case = PlannedCase(Registered(workload, "tests"), fake_device, {"n": 1})
    with ProgressReporter(console) as reporter:
        reporter.started("run-1", 2, 0)
        reporter.case_finished(case, {"status": "ok", "median_s": 1.5e-3})
        reporter.case_finished(case, {"status": "error", "error": "ValueError: no"})
    shown = screen.getvalue()
    assert "ok w n=1 on cpu: 1.5 ms" in shown and "error w n=1 on cpu: ValueError: no" in shown
