from __future__ import annotations

from pathlib import Path

pytest_plugins = ["benchsite.testing"]

TESTS = Path(__file__).parent
CASEBOOK = str(TESTS / "plugins" / "casebook.py")


# -- site fixtures (issue 4: `benchsite build`) -------------------------------------------------
# One site is built from the committed golden results per test session and shared by the site
# tests; the browser is Debian's Chromium driven by Playwright (never a downloaded browser).

import pytest  # noqa: E402 - kept inside this section

GOLDEN_RESULTS = TESTS / "golden" / "results"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def golden_site(tmp_path_factory: pytest.TempPathFactory):
    """A site built once from ``tests/golden/results``: (site folder, BuildReport)."""
    from benchsite.site import BuildOptions, build_site

    out = tmp_path_factory.mktemp("golden") / "site"
    report = build_site(BuildOptions(results=GOLDEN_RESULTS, out=out))
    return out, report


@pytest.fixture(scope="session")
def chromium():
    """A headless Chromium (skips only where /usr/bin/chromium is missing; CI installs it)."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (apt install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
