"""Every page of the example site in real headless Chromium, from file:// and from an HTTP
sub-path: no console error, page error, failed request or Vega load warning; every chart draws
marks; every internal link, script, stylesheet and fallback image resolves. And at a phone's
width, every chart fits its column."""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest

from benchsite.site.serve import QuietHandler

MARKS = "svg .mark-symbol path, svg .mark-line path, svg .mark-area path, svg .mark-rule line"
CHARTS_DRAWN = """() => [...document.querySelectorAll('.vega')].map(
    el => el.classList.contains('rendered') ? el.querySelectorAll(MARKS).length : -1)
""".replace("MARKS", repr(MARKS))
WIDTHS = """() => [...document.querySelectorAll('.vega')].map(el => [el.clientWidth,
    Number(el.querySelector('svg').getAttribute('width')), el.querySelectorAll(MARKS).length])
""".replace("MARKS", repr(MARKS))
LAID_OUT_AGAIN = """() => [...document.querySelectorAll('.vega')].every(el =>
    el.classList.contains('rendered') && el.dataset.layout == (el.clientWidth < 600 ? el.clientWidth : 0))"""
REFERENCES = """() => [...document.querySelectorAll('a[href], link[href], script[src]')]
    .map(el => el.href || el.src).concat(
    [...document.querySelectorAll('noscript')].flatMap(n =>
        [...n.textContent.matchAll(/src="([^"]+)"/g)].map(m => new URL(m[1], location.href).href)))"""


def pages(site: Path) -> list[str]:
    return sorted(str(path.relative_to(site)) for path in site.rglob("*.html"))


def watched(page) -> list[str]:
    """The problems ``page`` will report: console errors and warnings, page errors, failed
    requests, dialogs."""
    problems: list[str] = []
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(m.text))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.on("dialog", lambda d: problems.append(f"dialog: {d.message}"))
    return problems


def load(page, url: str) -> None:
    """Go to ``url`` and wait until every chart is drawn (or says it could not be)."""
    page.goto(url)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.vega')].every(el => el.classList.contains("
        "'rendered') || el.textContent.includes('could not be drawn'))", timeout=15_000)


def visit(browser, base: str, site: Path) -> dict[str, set[str]]:
    """Load every page; fail on any error; return each page's internal references."""
    context = browser.new_context()
    references: dict[str, set[str]] = {}
    page = context.new_page()
    problems = watched(page)
    for name in pages(site):
        load(page, urljoin(base, name))
        drawn = page.evaluate(CHARTS_DRAWN)
        assert all(count > 0 for count in drawn), f"{name}: a chart drew no marks: {drawn}"
        references[name] = set(page.evaluate(REFERENCES))
        assert not problems, f"{name}: {problems}"
    context.close()
    return references


def check_references(references: dict[str, set[str]], base: str, fetch) -> int:
    """Every reference inside the site resolves (and its #fragment exists); returns the count."""
    checked: dict[str, str] = {}
    for name, urls in references.items():
        for url in urls:
            if url.startswith("data:"):
                continue
            target, fragment = urldefrag(url)
            assert target.startswith(base), f"{name} links outside the site: {url}"
            if target not in checked:
                checked[target] = fetch(target)
            if fragment:
                assert re.search(f'id="{re.escape(fragment)}"', checked[target]), f"{name}: {url}"
    return len(checked)


def test_every_page_works_from_file_urls(example_site, chromium):
    site, _ = example_site
    base = site.as_uri() + "/"
    references = visit(chromium, base, site)
    count = check_references(
        references, base,
        lambda url: Path(unquote(urlparse(url).path)).read_text(errors="replace"),
    )
    assert count >= len(pages(site))


@pytest.fixture
def served_under_sub_path(example_site, tmp_path):
    """The example site served from 127.0.0.1 under /benchsite-report/, as GitHub Pages does."""
    site, _ = example_site
    shutil.copytree(site, tmp_path / "benchsite-report")
    handler = functools.partial(QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/benchsite-report/"
    server.shutdown()
    server.server_close()


def test_every_page_works_served_under_a_sub_path(example_site, chromium, served_under_sub_path):
    site, _ = example_site
    base = served_under_sub_path
    references = visit(chromium, base, site)
    context = chromium.new_context()

    def fetch(url: str) -> str:
        response = context.request.get(url)
        assert response.ok, f"{url}: HTTP {response.status}"
        is_text = url.endswith((".html", "/"))
        return response.text() if is_text else ""

    check_references(references, base, fetch)
    context.close()


def test_charts_fit_a_phone_screen(example_site, chromium):
    """At a phone's width the charts (made for a wide column) are laid out for the narrow one,
    panels one under another and legends below, instead of being drawn wide and cut off: each
    is drawn within a few pixels of its column's width (the stylesheet scales those away) and
    still draws its marks. Pages with every kind of chart: single, layered, faceted, stacked.
    Made wide again, the window gets the charts as a wide page draws them."""
    site, _ = example_site
    names = ["index.html", "findings.html", *(f"workloads/{n}" for n in pages(site / "workloads"))]
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    problems = watched(page)
    for name in names:
        load(page, (site / name).as_uri())
        for column, width, marks in page.evaluate(WIDTHS):
            assert marks > 0, f"{name}: a chart drew no marks"
            assert width <= 1.05 * column, f"{name}: a chart {width} px wide in {column} px"
        assert not problems, f"{name}: {problems}"
    page.set_viewport_size({"width": 1280, "height": 844})  # the window made wide: drawn again
    page.wait_for_function(LAID_OUT_AGAIN)
    redrawn = page.evaluate(WIDTHS)
    load(page, page.url)  # the same page drawn wide from the start
    assert redrawn == page.evaluate(WIDTHS)
    assert not problems, f"{names[-1]}, redrawn: {problems}"
    context.close()
