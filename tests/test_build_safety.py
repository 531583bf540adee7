"""`benchsite build` publishes a site whole or not at all (issue 19): it writes into a staging
folder beside ``--out`` and swaps it in only when it succeeded; a broken template, a failed page
or analysis, Ctrl-C or a kill leave the last good site (and the user's own files) as they were;
a lock keeps two builds out of one folder; a bad ``--out`` or ``--results`` is one line before
any work. Each test runs the real command in a subprocess, with real signals."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLE_RESULTS, patience

SMALL_RUN = "host=cpu-2core"  # 53 rows of the example store: a build takes seconds


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("store") / "results"
    shutil.copytree(EXAMPLE_RESULTS / SMALL_RUN, results / SMALL_RUN)
    return results


@pytest.fixture(scope="module")
def good_site(tmp_path_factory: pytest.TempPathFactory, small_store: Path) -> Path:
    """A site built once from the small store, with files of the user's own beside the build's."""
    site = tmp_path_factory.mktemp("good") / "site"
    site.mkdir()
    (site / "CNAME").write_text("bench.example.org\n")  # the user's, before any build
    finished = build(small_store, site)
    assert finished.returncode == 0, finished.stderr
    (site / "notes").mkdir()
    (site / "notes" / "mine.txt").write_text("mine")  # the user's, after the first build
    return site


def start(*arguments: object, cwd: Path | None = None) -> subprocess.Popen[str]:
    """``benchsite build …`` in a new process group, with Ctrl-C handled as from a terminal
    (whatever this test process inherited)."""
    command = [sys.executable, "-m", "benchsite.cli.app", "build", *map(str, arguments)]
    env = {**os.environ, "COLUMNS": "1000"}  # rich wraps a long line at 80 columns in a pipe
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def build(results: Path, out: Path, *more: object, cwd: Path | None = None):
    process = start("--results", results, "--out", out, *more, cwd=cwd)
    stdout, stderr = process.communicate(timeout=patience(300))
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def snapshot(site: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(site)): path.read_bytes() for path in site.rglob("*") if path.is_file()
    }


def leftovers(site: Path) -> list[str]:
    """What a build may leave beside the site: only its lock file."""
    return sorted(
        path.name for path in site.parent.glob(f".{site.name}.*") if not path.name.endswith(".lock")
    )


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


@pytest.mark.parametrize("template", ["base.html", "overview.html"])
def test_a_broken_template_fails_the_build_and_leaves_the_last_good_site(
    tmp_path, small_store, good_site, template
):
    before = snapshot(good_site)
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / template).write_text("{{ 1 // 0 }}")
    failed = build(small_store, good_site, "--templates", theme)
    assert failed.returncode == 1, failed.stdout
    assert "ZeroDivisionError" in failed.stderr and "nothing was published" in failed.stderr
    assert "built" not in failed.stdout and "Traceback" not in failed.stderr
    assert snapshot(good_site) == before and leftovers(good_site) == []


def test_a_successful_rebuild_keeps_the_users_own_files(small_store, good_site):
    rebuilt = build(small_store, good_site)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert (good_site / "CNAME").read_text() == "bench.example.org\n"
    assert (good_site / "notes" / "mine.txt").read_text() == "mine"
    assert "CNAME" not in (good_site / ".benchsite-files").read_text()  # still the user's
    assert (good_site / "index.html").exists() and leftovers(good_site) == []


FAILING = """
from benchsite import Analysis, Page, hookimpl

def fail(anything):
    raise RuntimeError("this plugin always fails")

@hookimpl
def register_analyses():
    return [Analysis(name="always-fails", description="d", analyze=fail)]

@hookimpl
def register_pages():
    return [Page(name="broken", render=fail)]
"""


def test_a_failed_page_or_analysis_publishes_nothing_unless_told_to_keep_going(
    tmp_path, small_store, good_site
):
    plugin = tmp_path / "failing.py"
    plugin.write_text(FAILING)
    before = snapshot(good_site)
    for strict in ([], ["--strict"]):
        failed = build(small_store, good_site, "-p", plugin, *strict)
        assert failed.returncode != 0 and "this plugin always fails" in failed.stderr
        assert "Traceback" not in failed.stderr
        assert snapshot(good_site) == before and leftovers(good_site) == []
    kept_going = build(small_store, tmp_path / "anyway", "-p", plugin, "--keep-going")
    assert kept_going.returncode == 0, kept_going.stderr
    assert "broken failed" in kept_going.stderr and (tmp_path / "anyway/index.html").exists()


def wait_for_staging(site: Path, process: subprocess.Popen[str], extra: float = 0.0) -> None:
    """Until the build has started writing (its staging folder exists), then ``extra`` s more."""
    deadline = time.monotonic() + patience(120)
    while not leftovers(site):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the build made no staging folder in time"
        time.sleep(0.02)
    time.sleep(extra)


def wait_for_file(path: Path, process: subprocess.Popen[str]) -> None:
    """Until ``path`` exists (a plugin writes it when the build reaches it)."""
    deadline = time.monotonic() + patience(120)
    while not path.exists():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)


SLOW = """
import time
from pathlib import Path
from benchsite import Analysis, hookimpl

def slow(results):
    Path(__file__).with_suffix(".started").write_text("analysing")
    time.sleep(120)  # mid-build for as long as the test needs, however fast the machine is
    return []

@hookimpl
def register_analyses():
    return [Analysis(name="slow", description="d", analyze=slow)]
"""


def test_ctrl_c_mid_build_publishes_nothing_and_stops_every_worker(
    tmp_path, small_store, good_site
):
    before = snapshot(good_site)
    plugin = tmp_path / "slow.py"
    plugin.write_text(SLOW)
    process = start("--results", small_store, "--out", good_site, "-p", plugin)
    wait_for_staging(good_site, process)
    wait_for_file(plugin.with_suffix(".started"), process)  # mid-build: in the analyses
    assert leftovers(good_site) and process.poll() is None, "the build ended before Ctrl-C"
    os.killpg(process.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole group
    stdout, stderr = process.communicate(timeout=patience(60))
    assert process.returncode == 130, stderr
    assert "interrupted: nothing published" in stdout and "Traceback" not in stderr, stderr
    assert snapshot(good_site) == before and leftovers(good_site) == []
    time.sleep(1)
    with pytest.raises(ProcessLookupError):  # no worker left behind
        os.killpg(process.pid, 0)


def test_a_second_build_is_refused_and_a_dead_builds_lock_is_taken_over(
    tmp_path, small_store, good_site
):
    plugin = tmp_path / "slow.py"
    plugin.write_text(SLOW)  # the first build is still building whatever the machine's speed
    first = start("--results", small_store, "--out", good_site, "-p", plugin)
    try:
        wait_for_staging(good_site, first)
        wait_for_file(plugin.with_suffix(".started"), first)
        os.killpg(first.pid, signal.SIGSTOP)  # the first build holds the lock, mid-build
        second = build(small_store, good_site)
        assert second.returncode == 2
        assert "another benchsite build" in one_error_line(second.stderr)
        assert str(first.pid) in second.stderr
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # dies holding the lock, its staging folder left
        first.communicate()
    assert leftovers(good_site)
    third = build(small_store, good_site)
    assert third.returncode == 0, third.stderr
    assert leftovers(good_site) == [] and (good_site / "CNAME").exists()


def test_an_unwritable_out_is_one_line_before_any_work(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    for out in (tmp_path / "a-file", tmp_path / "a-file" / "site", tmp_path):
        started = time.monotonic()
        failed = build(Path("results"), out, cwd=tmp_path)  # the default store: no suite run
        assert failed.returncode == 2
        assert str(out) in one_error_line(failed.stderr)
        assert not (tmp_path / "results").exists() and time.monotonic() - started < 30


def test_a_mistyped_results_is_an_error_not_a_suite_run(tmp_path, small_store):
    failed = build(small_store.with_name("resluts"), tmp_path / "site", cwd=tmp_path)
    assert failed.returncode == 2
    assert "resluts does not exist" in one_error_line(failed.stderr)
    assert not small_store.with_name("resluts").exists() and not (tmp_path / "site").exists()


def test_ctrl_c_during_the_automatic_suite_run_is_an_interruption(tmp_path):
    process = start("--out", tmp_path / "site", cwd=tmp_path)
    deadline = time.monotonic() + patience(120)
    while not (tmp_path / "results").exists():  # the quick suite has begun storing cases
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the suite stored nothing in time"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=patience(120))
    assert process.returncode == 130, stdout + stderr
    assert "interrupted" in stdout and "built" not in stdout and "Traceback" not in stderr
    assert not (tmp_path / "site").exists() and leftovers(tmp_path / "site") == []
