"""Light start-up (issue 17): listing workloads, asking for help and measuring (loading the
plugins as ``run``, its workers and distributed ranks do) import no part of the site stack:
not Altair, vl-convert or Jinja. Each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import patience

SITE_STACK = ("altair", "vl_convert", "jinja2")
REPORT = "import json, sys; print(json.dumps(sorted(m for m in {stack} if m in sys.modules)))"


def imported_after(code: str, stack: tuple[str, ...] = SITE_STACK) -> list[str]:
    """The modules of ``stack`` (the site stack) in ``sys.modules`` after ``code`` ran, in a
    new process."""
    report = REPORT.format(stack=stack)
    finished = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"],
        capture_output=True,
        text=True,
        timeout=patience(120),
    )
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout.splitlines()[-1])


def test_loading_the_plugins_as_run_and_its_workers_do_imports_no_site_stack():
    code = "from benchsite.host.manager import load_plugins\nload_plugins(())"
    assert imported_after(code) == []


@pytest.mark.parametrize("arguments", [["--help"], ["workloads"]])
def test_the_command_line_imports_no_site_stack_for(arguments):
    code = (
        "import contextlib, io, sys\n"
        f"sys.argv = ['benchsite', *{arguments!r}]\n"
        "from benchsite.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()"
    )
    assert imported_after(code) == []


@pytest.mark.parametrize("arguments", [["--help"], ["--version"], ["compare", "--help"]])
def test_help_and_version_import_no_data_stack(arguments):
    """Neither pandas, numpy nor pyarrow (about a CPU-second): what a command needs loads when
    it runs."""
    code = (
        "import contextlib, io, sys\n"
        f"sys.argv = ['benchsite', *{arguments!r}]\n"
        "from benchsite.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()"
    )
    assert imported_after(code, ("pandas", "numpy", "pyarrow", "torch")) == []


def test_a_mistyped_workload_is_told_before_torch_is_imported(tmp_path):
    """``benchsite run -w matmull`` answers from the workloads' names: discovering the devices
    (which imports torch, seconds of CPU) comes after."""
    code = (
        "import contextlib, io, sys\n"
        f"sys.argv = ['benchsite', 'run', '-w', 'matmull', '--results', {str(tmp_path / 'r')!r}]\n"
        "from benchsite.cli.app import main\n"
        "err = io.StringIO()\n"
        "with contextlib.redirect_stderr(err), contextlib.suppress(SystemExit):\n"
        "    main()\n"
        "assert err.getvalue().startswith('error: no workload matches matmull'), err.getvalue()"
    )
    assert imported_after(code, ("torch",)) == []
