"""The process that draws chart SVGs for a site build: ``python -m benchsite.svg_worker``;
with ``--bundle FILE``, the process that writes the Vega bundle there (see
:mod:`benchsite.site.assets`).

vl-convert draws in one JavaScript runtime per process and holds the GIL while it does, so a
build draws its charts in a few of these processes (:class:`benchsite.site.assets.SvgRenderer`)
while it goes on rendering pages. The module imports vl-convert and nothing heavy (pandas,
Altair) so that it starts fast; starting vl-convert's runtime takes ~1 s and is done first,
before any chart arrives.

Protocol, one chart per exchange: the parent writes two lines, the target file (a JSON string)
and the Vega-Lite spec (JSON on one line); the worker writes the SVG there, atomically (drawn as
a picture: :func:`static`), and answers one line: ``ok <seconds it took>`` or ``error: <why>``.
The end of its input ends it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import vl_convert

WARM_UP = '{"mark": "point"}'
DATA_KEYS = ("data", "datasets", "values")


def static(spec: Any) -> dict[str, Any]:
    """The chart as a picture: without its tooltips (nothing to hover in an image) and without
    Vega's ARIA labels (a page shows the SVG through ``<img>``, which exposes only its ``alt``
    text, the chart's description). The same pixels (compared on the 144 charts of
    ``benchmarks/site_build.py``'s site), ~28% smaller files, a little less drawing."""
    _drop_tooltips(spec)
    spec.setdefault("config", {})["aria"] = False
    return spec


def _drop_tooltips(part: Any) -> None:
    if isinstance(part, dict):
        part.pop("tooltip", None)  # on a mark ({"tooltip": true}) or in an encoding
        for key, value in part.items():
            if key not in DATA_KEYS:  # a data column may be called "tooltip"
                _drop_tooltips(value)
    elif isinstance(part, list):
        for value in part:
            _drop_tooltips(value)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader never sees half a file."""
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def draw(target: Path, spec_json: str) -> str:
    """Draw one chart into ``target``; the answer line for the parent."""
    started = time.perf_counter()
    try:
        write_atomic(target, vl_convert.vegalite_to_svg(static(json.loads(spec_json))))
    except Exception as exc:  # noqa: BLE001 - a chart that cannot be drawn is reported, not fatal here
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return "error: " + " ".join(lines[:2])  # what failed and why, not the JavaScript stack
    return f"ok {time.perf_counter() - started:.4f}"


def main() -> None:
    if sys.argv[1:2] == ["--bundle"]:  # Ctrl-C stops it: an interrupted build leaves nothing
        write_atomic(Path(sys.argv[2]), vl_convert.javascript_bundle())
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle: it stops us
    for stream in (sys.stdin, sys.stdout):
        stream.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    vl_convert.vegalite_to_svg(WARM_UP)
    for target in sys.stdin:
        spec_json = sys.stdin.readline()
        sys.stdout.write(draw(Path(json.loads(target)), spec_json) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
