"""The files a site needs besides its pages: the Vega bundle, the theme's CSS and script, and a
static SVG of every chart.

The Vega bundle (Vega, Vega-Lite and vega-embed from ``vl_convert.javascript_bundle()``, ~900 KB)
is written once per site and loaded by every page as a classic ``<script src>`` — a module
script is blocked on ``file://``. Making it takes seconds, so it is cached per vl-convert
version (in the output folder and the user's cache folder). Chart SVGs are rendered by
vl-convert in parallel and named by a hash of their spec, so an unchanged chart is not rendered
again on the next build.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import vl_convert

ASSETS = "assets"
VEGA_BUNDLE = f"{ASSETS}/vega-{vl_convert.__version__}.js"
CHART_FOLDER = f"{ASSETS}/charts"


@dataclass(frozen=True)
class PendingSvg:
    """A chart whose static SVG still has to be written to ``path`` (relative to the site)."""

    path: str
    spec_json: str


def svg_path(spec_json: str) -> str:
    """Where a chart's SVG lives: named by the hash of its spec."""
    digest = hashlib.sha256(spec_json.encode()).hexdigest()[:16]
    return f"{CHART_FOLDER}/{digest}.svg"


def write_vega_bundle(out: Path) -> str:
    """Write the Vega bundle into the site (from a cache when possible); return its path."""
    target = out / VEGA_BUNDLE
    if target.exists():
        return VEGA_BUNDLE
    target.parent.mkdir(parents=True, exist_ok=True)
    cached = _cache_dir() / Path(VEGA_BUNDLE).name
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(cached, vl_convert.javascript_bundle())
    shutil.copyfile(cached, target)
    return VEGA_BUNDLE


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "benchsite"


def _write_atomic(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def write_svgs(out: Path, pending: Iterable[PendingSvg], workers: int | None = None) -> int:
    """Render every chart not already on disk to SVG; return how many were rendered."""
    todo = {item.path: item for item in pending if not (out / item.path).exists()}
    if not todo:
        return 0
    (out / CHART_FOLDER).mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=workers or min(4, os.cpu_count() or 1)) as pool:
        list(pool.map(lambda item: _render_svg(out, item), todo.values()))
    return len(todo)


def _render_svg(out: Path, item: PendingSvg) -> None:
    svg = vl_convert.vegalite_to_svg(item.spec_json)
    _write_atomic(out / item.path, svg)
