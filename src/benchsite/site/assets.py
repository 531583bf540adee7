"""The files a site needs besides its pages: the Vega bundle, the theme's CSS and script, and a
static SVG of every chart.

The Vega bundle (Vega, Vega-Lite and vega-embed from ``vl_convert.javascript_bundle()``, ~900 KB)
is written once per site and loaded by every page as a classic ``<script src>`` — a module
script is blocked on ``file://``. Making it takes seconds, so it is cached per vl-convert
version (in the output folder and the user's cache folder), and made in a process of its own
(:func:`start_vega_bundle`) that runs while the build's first stages use one core. Chart SVGs
are named by a hash of their spec, so an unchanged chart is taken from the published site and
not drawn again; the missing ones are drawn at the end of the build (:func:`draw_missing`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import platformdirs
import vl_convert

from benchsite._infra.cores import usable_cores
from benchsite._infra.pool import in_processes
from benchsite.errors import BenchsiteError, PluginError
from benchsite.site import chart_svg
from benchsite.site.publish import Staging, copy_file
from benchsite.site.specs import CHART_FOLDER, ChartSpec

ASSETS = "assets"
VEGA_BUNDLE = f"{ASSETS}/vega-{vl_convert.__version__}.js"
MAX_WORKERS = 8  # SVG-drawing processes; each holds a JavaScript runtime (~100 MB)


def start_vega_bundle(out: Path) -> subprocess.Popen[bytes] | None:
    """Start making the Vega bundle into the user's cache, unless the site or the cache has it
    already; :func:`write_vega_bundle` waits for it. Its own process keeps what vl-convert's
    bundler prints on stderr (vl-convert 2 prints each pass) out of the build's output."""
    if (out / VEGA_BUNDLE).exists() or _cached_bundle().exists():
        return None
    _cached_bundle().parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "benchsite.site.chart_svg", "--bundle", str(_cached_bundle())]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def write_vega_bundle(
    site: Path, published: Path, making: subprocess.Popen[bytes] | None = None
) -> str:
    """Put the Vega bundle into ``site``: from the ``published`` site, else from the user's
    cache, made there first when missing (by ``making``, the process :func:`start_vega_bundle`
    started); return its path."""
    target = site / VEGA_BUNDLE
    if (published / VEGA_BUNDLE).is_file():
        copy_file(published / VEGA_BUNDLE, target)
        return VEGA_BUNDLE
    making = making or start_vega_bundle(published)
    if making is not None:
        _, errors = making.communicate()
        if making.returncode != 0:
            last = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise BenchsiteError(
                f"vl-convert could not make the Vega bundle ({last[0]}); check that "
                f"vl-convert-python is installed and {_cached_bundle().parent} is writable"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_cached_bundle(), target)
    return VEGA_BUNDLE


def _cached_bundle() -> Path:
    return _cache_dir() / Path(VEGA_BUNDLE).name


def _cache_dir() -> Path:
    """The user's cache folder of benchsite (``$XDG_CACHE_HOME/benchsite`` or
    ``~/.cache/benchsite`` on Linux; the platform's own elsewhere)."""
    return Path(platformdirs.user_cache_dir("benchsite", appauthor=False))


def draw_missing(charts: Iterable[ChartSpec], staging: Staging) -> Drawn:
    """Give the ``staging`` folder the SVG of every chart: linked from the published site when
    an earlier build drew it (same spec, same name), else drawn, all
    missing ones in one pass of a pool of fresh processes (one per core: vl-convert holds the
    GIL; fresh, because vl-convert hangs in a fork of a process that had started it). A chart vl-convert cannot draw fails the build, named, after the others are drawn."""
    site, published, missing = staging.folder, staging.out, {}
    for chart in charts:
        if (published / chart.svg).is_file():
            copy_file(published / chart.svg, site / chart.svg)
        else:
            missing[chart.svg] = chart
    if not missing:
        return Drawn(0, 0.0)
    (site / CHART_FOLDER).mkdir(parents=True, exist_ok=True)
    targets = [site / path for path in missing]
    texts = [chart.text for chart in missing.values()]
    workers = min(len(texts), usable_cores(), MAX_WORKERS)
    answers = in_processes(chart_svg.draw, targets, texts, workers=workers, fresh=True)
    errors = [f"{t.name}: {a}" for t, a in zip(targets, answers, strict=True) if isinstance(a, str)]
    if errors:
        raise PluginError(
            f"{len(errors)} chart SVG(s) could not be drawn, the first: {errors[0]}; "
            "fix the chart of the plugin that made it"
        )
    return Drawn(len(texts), sum(answer for answer in answers if not isinstance(answer, str)))


@dataclass(frozen=True)
class Drawn:
    """How many chart SVGs a build drew, and the seconds vl-convert spent on them in all."""

    count: int
    seconds: float
