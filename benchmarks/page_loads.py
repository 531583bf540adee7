"""How long does every page of a built site take to load and draw in a headless Chromium?

Opens each HTML page of SITE from ``file://`` in one tab at a desktop's width, one after
another, and, where a chart is not drawn yet, waits until every chart is (or says it could not
be), as the browser tests do; prints the total, the median page, each folder's share and the
slowest pages.

    benchsite build --results examples/h200/results --out /tmp/example-site
    python3 benchmarks/page_loads.py /tmp/example-site [--chromium /usr/bin/chromium]

Measured on the 2-core machine with the example site (407 pages): 77 s before pages without a
chart stopped loading the Vega bundle, 56 s after (median page 165 → 108 ms), both while still
polling for charts on every page (~30 ms a page); without that polling, 413 pages in 44.4 s
(median page 82 ms, 2026-12-02).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from pathlib import Path

from playwright.sync_api import sync_playwright

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DRAWN = (
    "() => [...document.querySelectorAll('.vega')].every(el => el.classList.contains("
    "'rendered') || el.textContent.includes('could not be drawn'))"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="a built site's folder")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    pages = sorted(path.relative_to(args.site).as_posix() for path in args.site.rglob("*.html"))
    seconds = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=FLAGS)
        tab = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        for name in pages:
            started = time.perf_counter()
            tab.goto((args.site / name).resolve().as_uri())
            if not tab.evaluate(DRAWN):  # a page without a chart is done: no polling for it
                tab.wait_for_function(DRAWN, timeout=15_000)
            seconds[name] = time.perf_counter() - started
        browser.close()
    folders: dict[str, float] = defaultdict(float)
    for name, took in seconds.items():
        folders[name.split("/")[0] if "/" in name else "(top)"] += took
    print(
        f"{len(pages)} pages in {sum(seconds.values()):.1f} s; median page "
        f"{statistics.median(seconds.values()) * 1000:.0f} ms"
    )
    for folder, took in sorted(folders.items(), key=lambda item: -item[1]):
        print(f"  {folder:<16} {took:6.1f} s")
    print("slowest:")
    for name in sorted(seconds, key=seconds.get, reverse=True)[:10]:
        print(f"  {seconds[name] * 1000:6.0f} ms  {name}")


if __name__ == "__main__":
    main()
