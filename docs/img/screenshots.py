"""Take the README's screenshots of a built site: the overview and one workload page, at desktop
width in the light scheme and at phone width in the dark one, with Debian's Chromium.

    benchsite build --results examples/h200/results --out /tmp/site
    python docs/img/screenshots.py /tmp/site [--workload matmul]

Writes docs/img/{overview,workload}-{desktop,phone}.png (the top of each page). Look at them
before committing them.
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
VIEWS = {  # name: (viewport, colour scheme)
    "desktop": ({"width": 1280, "height": 1500}, "light"),
    "phone": ({"width": 390, "height": 1700}, "dark"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="a built site folder")
    parser.add_argument("--workload", default="matmul", help="workload page to show")
    args = parser.parse_args()
    pages = {
        "overview": args.site / "index.html",
        "workload": args.site / "workloads" / f"{args.workload}.html",
    }
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        for view, (viewport, scheme) in VIEWS.items():
            page = browser.new_page(viewport=viewport, color_scheme=scheme)
            for name, path in pages.items():
                page.goto(path.resolve().as_uri())
                page.wait_for_selector("[data-chart].rendered", timeout=15_000)  # see embed.js
                out = HERE / f"{name}-{view}.png"
                page.screenshot(path=str(out))
                print(f"wrote {out}")
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
