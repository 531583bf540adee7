from __future__ import annotations

import functools
import subprocess
import sys
import time
from pathlib import Path

pytest_plugins = ["benchsite.testing", "pytester"]

TESTS = Path(__file__).parent
CASEBOOK = str(TESTS / "plugins" / "casebook.py")
# `benchsite run` options of a real run made cheap: the casebook's workloads on the CPU, a small
# budget, one round, so one worker process (a run's rounds themselves: tests/test_rounds.py)
FAST_RUN = ("-p", CASEBOOK, "-d", "cpu", "--budget", "0.05", "--rounds", "1")


def install_into(target: Path, package: Path) -> Path:
    """``pip install --no-deps --target target package``: a real, non-editable install of a
    plugin package (pip builds it in isolation, with a setuptools new enough for its
    pyproject; this machine's own is older)."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    subprocess.run([*command, "--target", str(target), str(package)], check=True)
    return target


QUIET_TORCH_IMPORT_S = 1.5  # `import torch` in a fresh interpreter on a quiet 2-core machine


@functools.cache
def slowness() -> float:
    """How many times slower than a quiet machine this one is now, at least 1: the seconds
    ``import torch`` takes in a fresh interpreter (how every subprocess a test waits on
    starts), measured once per test process, over :data:`QUIET_TORCH_IMPORT_S`."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return max(1.0, (time.monotonic() - started) / QUIET_TORCH_IMPORT_S)


def patience(seconds: float) -> float:
    """How long to wait for what takes well under ``seconds`` on a quiet machine: scaled by
    :func:`slowness`, so a loaded machine (a shared CI runner) waits longer, not fails."""
    return seconds * slowness()


def pytest_collection_modifyitems(items: list) -> None:
    """The files holding a test marked ``slow`` first (their slow tests first), the rest in
    their order. The workers get whole files, one at a time (``--dist loadfile`` in
    pyproject.toml), so a module's fixtures are built once; with two workers (scripts/test) the
    long files then run beside the many short ones instead of alone at the end. A file is kept
    in one piece: tests of other files between two of its tests would make pytest tear down
    its module fixtures and build them again."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(
        key=lambda item: (item.path not in slow_files, item.get_closest_marker("slow") is None)
    )


# -- site fixtures (issue 4: `benchsite build`) -------------------------------------------------
# One site is built per test session from the committed example results (examples/h200/results:
# a full H200 run, the distributed workloads on two H200s and a 2-core CPU's quick run), the
# same store the Pages workflow publishes, and shared by the site tests; the browser is Debian's
# Chromium driven by Playwright (never a downloaded browser).

import pytest  # noqa: E402 - kept inside this section

EXAMPLE_RESULTS = TESTS.parent / "examples" / "h200" / "results"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory):
    """The example site, built once from ``examples/h200/results``: (folder, BuildReport)."""
    from benchsite.site import BuildOptions, build_site

    out = tmp_path_factory.mktemp("example") / "site"
    report = build_site(BuildOptions(results=EXAMPLE_RESULTS, out=out))
    return out, report


@pytest.fixture(scope="session")
def chromium():
    """A headless Chromium (skips only where /usr/bin/chromium is missing; CI installs it)."""
    if not CHROMIUM.exists():
        pytest.skip(
            "Debian's chromium is not installed at /usr/bin/chromium (apt install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
