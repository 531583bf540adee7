"""Every page of the example site in real headless Chromium from an HTTP sub-path, and every
kind of page from file:// (one walk of every page, the suite's longest test): no console error, page error, failed request or Vega load warning; every chart draws
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
    el.classList.contains('rendered') && el.dataset.layout == el.clientWidth)"""
# What on a page is wider than its column: the page itself scrolling sideways, a scroll box in
# the content holding more than it shows (a table, a code block, a chart), or a table, code block,
# image or chart reaching past the card or column it sits in.
TOO_WIDE = """() => {
  const out = [], root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) out.push(`page ${root.scrollWidth} px wide`);
  const name = el => el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined
    ? '.' + el.className.trim().replace(/ +/g, '.') : '');
  for (const el of document.querySelectorAll('main *')) {
    const style = getComputedStyle(el);
    if (/auto|scroll/.test(style.overflowX) && el.scrollWidth > el.clientWidth + 1)
      out.push(`${name(el)} holds ${el.scrollWidth} px in ${el.clientWidth} px`);
  }
  for (const el of document.querySelectorAll('main table, main pre, main img, main .vega svg')) {
    const column = el.parentElement.closest('.table-wrap, .finding, .device, .chart, main');
    const box = column.getBoundingClientRect(), own = el.getBoundingClientRect();
    const right = box.right - parseFloat(getComputedStyle(column).paddingRight);
    if (own.width && own.right > right + 1)
      out.push(`${name(el)} ${Math.round(own.width)} px reaches ${Math.round(own.right - right)} px past its ${name(column)}`);
  }
  return out;
}"""
REFERENCES = """() => [...document.querySelectorAll('a[href], link[href], script[src]')]
    .map(el => el.href || el.src).concat(
    [...document.querySelectorAll('noscript')].flatMap(n =>
        [...n.textContent.matchAll(/src="([^"]+)"/g)].map(m => new URL(m[1], location.href).href)))"""


def pages(site: Path) -> list[str]:
    return sorted(str(path.relative_to(site)) for path in site.rglob("*.html"))


def kinds_of_page(site: Path, each: int = 3) -> list[str]:
    """Every page but the folders' many of one template: the first ``each`` of each folder
    (an evidence folder holds hundreds of pages of one kind). The every-page walk is the
    suite's longest test: it is made once, the other walk loads these."""
    seen: dict[str, int] = {}
    chosen = []
    for name in pages(site):
        folder = name.rpartition("/")[0]
        seen[folder] = seen.get(folder, 0) + 1
        if not folder or seen[folder] <= each:
            chosen.append(name)
    return chosen


def watched(page) -> list[str]:
    """The problems ``page`` will report: console errors and warnings, page errors, failed
    requests, dialogs."""
    problems: list[str] = []
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(m.text))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.on("dialog", lambda d: problems.append(f"dialog: {d.message}"))
    return problems


SETTLED = """() => [...document.querySelectorAll('.vega')].every(el =>
    el.classList.contains('rendered') || el.textContent.includes('could not be drawn'))"""


def load(page, url: str) -> None:
    """Go to ``url`` and wait until every chart is drawn (or says it could not be). Most pages
    have no chart and are settled once loaded: asking first spares them the wait's polling
    (one animation frame or more, ~30 ms a page here)."""
    page.goto(url)
    if not page.evaluate(SETTLED):
        page.wait_for_function(SETTLED, timeout=15_000)


DESKTOP, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}


def visit(browser, base: str, names: list[str], viewport: dict[str, int]) -> dict[str, set[str]]:
    """Load the pages ``names`` in a window of ``viewport``; fail on any error and on anything
    wider than its column; return each page's internal references."""
    context = browser.new_context(viewport=viewport)
    references: dict[str, set[str]] = {}
    page = context.new_page()
    problems = watched(page)
    too_wide = {}
    for name in names:
        load(page, urljoin(base, name))
        drawn = page.evaluate(CHARTS_DRAWN)
        assert all(count > 0 for count in drawn), f"{name}: a chart drew no marks: {drawn}"
        references[name] = set(page.evaluate(REFERENCES))
        assert not problems, f"{name}: {problems}"
        if found := page.evaluate(TOO_WIDE):
            too_wide[name] = found[:3]
    assert not too_wide, f"wider than their column at {viewport['width']} px: {too_wide}"
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


def test_every_kind_of_page_works_from_file_urls(example_site, chromium):
    """... at a desktop's width, where no table, code block or card's content is wider than
    its column: each top page and the first pages of each folder (:func:`kinds_of_page`),
    every page they link to resolving."""
    site, _ = example_site
    base = site.as_uri() + "/"
    names = kinds_of_page(site)
    references = visit(chromium, base, names, DESKTOP)
    count = check_references(
        references,
        base,
        lambda url: Path(unquote(urlparse(url).path)).read_text(errors="replace"),
    )
    assert count >= len(names)


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


@pytest.mark.slow
def test_every_page_works_served_under_a_sub_path(example_site, chromium, served_under_sub_path):
    """... at a phone's width, where no table, code block or card's content is wider than its
    column either (a case table shows each case as a card; tables.js stacks the others)."""
    site, _ = example_site
    base = served_under_sub_path
    references = visit(chromium, base, pages(site), PHONE)
    context = chromium.new_context()

    def fetch(url: str) -> str:
        response = context.request.get(url)
        assert response.ok, f"{url}: HTTP {response.status}"
        is_text = url.endswith((".html", "/"))
        return response.text() if is_text else ""

    check_references(references, base, fetch)
    context.close()


def test_only_a_page_with_charts_loads_the_vega_bundle(example_site, chromium):
    site, _ = example_site
    page = chromium.new_page()
    problems = watched(page)
    for name, charted in (("methodology.html", False), ("runs.html", True)):
        loaded: list[str] = []
        page.on("request", lambda request, into=loaded: into.append(request.url))
        load(page, (site / name).as_uri())
        bundle = [url for url in loaded if "/assets/vega-" in url]
        assert bool(bundle) is charted, (name, loaded)
        assert page.evaluate("typeof vegaEmbed") == ("function" if charted else "undefined")
    assert page.locator("[data-chart].rendered").count() >= 1 and not problems
    page.close()


def test_charts_fit_a_phone_screen(example_site, chromium):
    """At a phone's width the charts (made for a wide column) are laid out for the narrow one,
    panels one under another and legends below, instead of being drawn wide and cut off: each
    is drawn within a few pixels of its column's width (the stylesheet scales those away) and
    still draws its marks. Pages with every kind of chart: single, layered, faceted, stacked.
    Made wide again, the window gets the charts as a wide page draws them."""
    site, _ = example_site
    names = ["index.html", "findings.html", *(f"workloads/{n}" for n in pages(site / "workloads"))]
    context = chromium.new_context(viewport=PHONE)
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


SECONDS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
SHOWN_ROWS = "t => [...t.tBodies[0].rows].filter(r => !r.hidden)"
MEDIANS = f"t => ({SHOWN_ROWS})(t).map(r => r.querySelector('td.med')?.firstChild.textContent)"


def seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) * SECONDS[unit]


def test_a_case_table_sorts_filters_and_links_each_case(example_site, chromium):
    """matmul's table of every case, in a browser: its median header sorts the cases by time
    (µs before ms, either way), its filter box keeps the rows holding every word typed, and each
    case has an anchor a link opens, a skipped case's too (its collapsed list opened)."""
    site, _ = example_site
    page = chromium.new_page(viewport=DESKTOP)
    problems = watched(page)
    load(page, (site / "workloads" / "matmul.html").as_uri())
    table = page.locator("table.cases").first
    header = table.locator("thead th", has_text="median")
    for way in ("ascending", "descending"):
        header.locator("button").click()
        assert header.get_attribute("aria-sort") == way
        times = [seconds(text) for text in table.evaluate(MEDIANS) if text and text != "–"]
        assert len(times) > 20 and times == sorted(times, reverse=way == "descending")
    every = table.evaluate("t => t.tBodies[0].rows.length")
    page.locator(".table-filter input").first.fill("cuda:0 bf16")
    shown = table.evaluate(f"t => ({SHOWN_ROWS})(t).map(r => r.textContent)")
    assert 0 < len(shown) < every and all("cuda:0" in row and "bf16" in row for row in shown)
    assert (
        page.locator(".table-filter .count").first.inner_text() == f"{len(shown)} of {every} rows"
    )
    ids = page.evaluate(
        "() => [...document.querySelectorAll('table.cases tbody tr')].map(r => r.id)"
    )
    assert all(re.fullmatch(r"row-[0-9a-f]{32}", row) for row in ids) and len(set(ids)) == len(ids)
    skipped = page.locator("details.skipped tbody tr").first.get_attribute("id")
    page.goto(f"{(site / 'workloads' / 'matmul.html').as_uri()}#{skipped}")
    assert page.locator("details.skipped").first.evaluate("d => d.open")
    assert page.locator(f"#{skipped}").is_visible()
    assert page.locator(f"#{skipped} a.case").get_attribute("href") == f"#{skipped}"
    assert not problems, problems
    page.close()


def test_pagination_links_sit_in_a_line(example_site, chromium):
    """The findings page's "All 62, by page: 1 2 3 …" reads as one line of links, not a column
    of numbers."""
    site, _ = example_site
    page = chromium.new_page(viewport=DESKTOP)
    page.goto((site / "findings.html").as_uri())
    navs = page.locator("nav.pages")
    assert navs.count() > 0
    for nav in navs.all():
        tops = nav.evaluate(
            "n => [...n.querySelectorAll('a')].map(a => a.getBoundingClientRect().top)"
        )
        assert len(tops) > 1 and max(tops) - min(tops) < 2, tops
    page.close()


def test_on_a_phone_the_whole_menu_is_in_sight(example_site, chromium):
    """At 390 px every entry of the navigation lies inside the window, none scrolled off to
    the side (the menu wraps onto a few rows)."""
    site, _ = example_site
    page = chromium.new_page(viewport=PHONE)
    page.goto((site / "index.html").as_uri())
    boxes = [link.bounding_box() for link in page.locator("header nav a").all()]
    assert len(boxes) > 8
    outside = [box for box in boxes if box["x"] < 0 or box["x"] + box["width"] > PHONE["width"]]
    assert not outside, f"{len(outside)} of {len(boxes)} menu entries outside the window"
    assert page.evaluate("document.querySelector('header nav ul').scrollWidth") <= PHONE["width"]
    page.close()
