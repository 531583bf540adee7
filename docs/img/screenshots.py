"""Take the README's screenshots of a built site: the overview and one workload page, at desktop
width in the light scheme and at phone width in the dark one, with Debian's Chromium.

    benchsite build --results examples/h200/results --out /tmp/site
    python docs/img/screenshots.py /tmp/site [--workload matmul]

Writes docs/img/{overview,workload}-{desktop,phone}.png (the top of each page). Look at them
before committing them. The screenshots of a CPU-only overview with the shipped H200 reference
(docs/references.md):

    mkdir -p /tmp/cpu-only && cp -r examples/h200/results/host=cpu-2core /tmp/cpu-only/
    benchsite build --results /tmp/cpu-only --out /tmp/cpu-site --reference h200
    python docs/img/screenshots.py /tmp/cpu-site --only overview --prefix reference- --at reference

write docs/img/reference-overview-{desktop,phone}.png, scrolled to the reference answer.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).parent
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
# to the element of an id, just below the sticky navigation
SCROLL_TO = """id => window.scrollTo(0, document.getElementById(id).getBoundingClientRect().top
    + window.scrollY - document.querySelector('header').getBoundingClientRect().height - 8)"""
VIEWS = {  # name: (viewport, colour scheme)
    "desktop": ({"width": 1280, "height": 1500}, "light"),
    "phone": ({"width": 390, "height": 1700}, "dark"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="a built site folder")
    parser.add_argument("--workload", default="matmul", help="workload page to show")
    parser.add_argument("--only", action="append", choices=["overview", "workload"])
    parser.add_argument("--prefix", default="", help="put before each file's name")
    parser.add_argument("--at", help="scroll to the element of this id first")
    args = parser.parse_args()
    pages = {
        "overview": args.site / "index.html",
        "workload": args.site / "workloads" / f"{args.workload}.html",
    }
    pages = {name: path for name, path in pages.items() if not args.only or name in args.only}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        for view, (viewport, scheme) in VIEWS.items():
            page = browser.new_page(viewport=viewport, color_scheme=scheme)
            for name, path in pages.items():
                page.goto(path.resolve().as_uri())
                if page.locator("[data-chart]").count():  # a page may have no chart
                    page.wait_for_selector("[data-chart].rendered", timeout=15_000)  # embed.js
                if args.at:
                    page.evaluate(SCROLL_TO, args.at)
                out = HERE / f"{args.prefix}{name}-{view}.png"
                page.screenshot(path=str(out))
                print(f"wrote {out}")
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
