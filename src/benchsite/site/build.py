"""``benchsite build``: read the store, compute findings, render every page, write the site.

The pipeline reads top to bottom in :func:`build_site`, one labelled line per stage. A store
with no results first gets the quick suite run on this machine (so that one command on a fresh
clone ends in a site). A page plugin that raises is reported by name and skipped (``strict``
makes it fatal); the site still builds.
"""

from __future__ import annotations

import functools
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from benchsite import registry, store
from benchsite.analysis import Analysed, analyse
from benchsite.errors import PluginError, describe_exception
from benchsite.jobs import run_jobs
from benchsite.plugin_manager import Plugins, load_plugins
from benchsite.records import Page, RenderedPage
from benchsite.runner import Reporter, RunOptions, SilentReporter, run_benchmarks
from benchsite.site import assets
from benchsite.site.renderer import NavItem, Site, row_links
from benchsite.site.theme import make_environment, read_static
from benchsite.specs import CHART_FOLDER

MANIFEST = ".benchsite-files"
THEME_FILES = ("site.css", "embed.js")
STAGES = ("plugins", "read", "analyse", "site", "pages", "assets")
T = TypeVar("T")


@dataclass(frozen=True)
class BuildOptions:
    """Everything ``benchsite build`` can be told."""

    results: Path = Path("results")
    out: Path = Path("site")
    templates: Path | None = None
    title: str = "PyTorch on CPU and GPU: what it buys you"
    plugins: tuple[str, ...] = ()
    strict: bool = False


@dataclass
class BuildReport:
    """What a build did: where, how many files and rows, how long, and what failed."""

    out: Path
    files: int = 0
    rows: int = 0
    seconds: float = 0.0
    ran_suite: bool = False
    charts_rendered: int = 0
    chart_seconds: float = 0.0  # time vl-convert spent drawing them, over its processes
    stages: dict[str, float] = field(default_factory=dict)
    page_errors: dict[str, str] = field(default_factory=dict)
    analysis_errors: dict[str, str] = field(default_factory=dict)


def build_site(options: BuildOptions, reporter: Reporter | None = None) -> BuildReport:
    """Build the site described by ``options``; see the module docstring."""
    started, reporter = time.perf_counter(), reporter or SilentReporter()
    report, out = BuildReport(options.out), Path(options.out)
    load = functools.partial(load_plugins, options.plugins, strict=options.strict)
    first_build = not (out / CHART_FOLDER).is_dir()
    stage = Stages(report, reporter, STAGES)  # times each stage; the reporter shows it
    bundle = assets.start_vega_bundle(out)  # the Vega scripts, made meanwhile when not cached
    with assets.SvgRenderer(out, eager=first_build) as svgs:  # draws chart SVGs meanwhile
        plugins = stage("plugins", load)  # built-ins, entry points, -p modules
        results = stage("read", read_or_run, options, reporter, report)  # suite if empty
        analysed = stage("analyse", analyse, plugins, results)  # prepare_results, analyses
        env = make_environment(options.templates, plugins.template_folders())  # user, plugins, theme
        list(plugins.call_each("prepare_jinja_env", {"env": env}))  # hook: prepare_jinja_env
        pages = ordered_pages(plugins)  # hook: register_pages
        site = stage("site", make_site, options, analysed, env, plugins, pages)
        site.on_chart = svgs.send  # a page's charts are drawn as it makes them
        writer = PageWriter(out, site, report, options.strict)
        written = stage("pages", writer.write, pages)
        stage("assets", write_assets, out, site, written, report, svgs, bundle)  # theme, SVGs
    report.rows, report.analysis_errors = len(results), analysed.errors
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class Stages:
    """Runs the build's stages one after another: tells the reporter which one starts (a
    progress line) and notes how long each took in ``report.stages``."""

    report: BuildReport
    reporter: Reporter
    names: tuple[str, ...]

    def __call__(self, name: str, function: Callable[..., T], *args: Any) -> T:
        self.reporter.stage(name, self.names.index(name), len(self.names))
        started = time.perf_counter()
        result = function(*args)
        self.report.stages[name] = time.perf_counter() - started
        return result


def read_or_run(options: BuildOptions, reporter: Reporter, report: BuildReport) -> pd.DataFrame:
    """The store's rows; when it holds none, run the quick suite here first and read again."""
    results = store.read_results(options.results)
    if not results.empty:
        return results
    reporter.notice(
        f"{options.results} holds no results: running the quick suite on this machine first"
    )
    run = RunOptions(results=options.results, plugins=options.plugins, strict=options.strict)
    run_benchmarks(run, reporter)
    report.ran_suite = True
    return store.read_results(options.results)


def ordered_pages(plugins: Plugins) -> list[Page]:
    pages = [registered.item for registered in registry.pages(plugins).values()]
    return sorted(pages, key=lambda page: (page.order, page.name))


def make_site(
    options: BuildOptions, analysed: Analysed, env: object, plugins: Plugins, pages: list[Page]
) -> Site:
    """The :class:`Site` every page renders from: prepared results, navigation, row links."""
    tables = analysed.tables
    assert tables is not None
    workloads = {name: reg.item for name, reg in registry.workloads(plugins).items()}
    site = Site(
        title=options.title,
        results=tables.rows,
        current=tables.current,
        analysed=analysed,
        env=env,  # type: ignore[arg-type]
        workloads=workloads,
        built_at=datetime.now(UTC),
        nav=[NavItem(page.name, page.nav, page.nav_path) for page in pages if page.nav],
    )
    site.row_links = row_links(site)
    env.globals["site_title"] = options.title  # type: ignore[attr-defined]
    return site


@dataclass
class PageOutput:
    """What one page gave: the files it wrote, or why it failed."""

    paths: list[str]
    error: str | None = None


@dataclass
class PageWriter:
    """Renders pages into the site side by side (:func:`benchsite.jobs.run_jobs`), each page
    writing its own files (the SVGs of its charts are drawn as it makes them: ``Site.on_chart``).
    A page that raises is reported (or fatal with ``strict``) and writes nothing."""

    out: Path
    site: Site
    report: BuildReport
    strict: bool

    def jobs(self, pages: list[Page]) -> list[Callable[[], PageOutput]]:
        return [
            functools.partial(_write_page, self.out, self.site, page, self.strict) for page in pages
        ]

    def record(self, pages: list[Page], outputs: list[PageOutput]) -> list[str]:
        """Note the pages that failed; the files the others wrote (relative to the site)."""
        for page, output in zip(pages, outputs, strict=True):
            if output.error is not None:
                self.report.page_errors[page.name] = output.error
        return [path for output in outputs for path in output.paths]

    def write(self, pages: list[Page]) -> list[str]:
        """Render ``pages``; the files they wrote."""
        # pages differ tenfold in cost: with two workers per core the system shares the cores
        # out, where one per core leaves a worker with two big pages and the other idle
        workers = 2 * (os.cpu_count() or 1)
        outputs = run_jobs(self.jobs(pages), workers)
        return self.record(pages, outputs)


def _write_page(out: Path, site: Site, page: Page, strict: bool) -> PageOutput:
    try:
        files = page.render(site)
    except Exception as exc:
        if strict:
            raise PluginError(f"page {page.name} failed: {describe_exception(exc)}") from exc
        return PageOutput([], describe_exception(exc))
    return PageOutput([_write(out, file) for file in files])


def write_assets(
    out: Path,
    site: Site,
    written: list[str],
    report: BuildReport,
    svgs: assets.SvgRenderer,
    bundle: subprocess.Popen[bytes] | None,
) -> None:
    """Write the theme's static files and the Vega bundle, wait for the chart SVGs, and remove
    files an earlier build wrote that this one did not (``written``: what the pages wrote)."""
    theme = [
        RenderedPage(f"{assets.ASSETS}/{name}", read_static(site.env, name)) for name in THEME_FILES
    ]
    written = [*written, *(_write(out, file) for file in [*theme, RenderedPage(".nojekyll", "")])]
    written.append(assets.write_vega_bundle(out, bundle))
    report.charts_rendered = svgs.finish()
    report.chart_seconds = svgs.seconds
    written += svgs.paths
    _remove_stale(out, set(written))
    report.files = len(set(written))


def _write(out: Path, file: RenderedPage) -> str:
    # checked on the path's text: resolving it on disk (twice a file) took ~0.25 s for the
    # 2,100 files of a big store's site; the site's own folders are not links
    inside = os.path.normpath(file.path)
    if os.path.isabs(inside) or inside == ".." or inside.startswith(".." + os.sep):
        raise PluginError(f"a page wants to write {file.path}, outside the site: fix the plugin")
    target = out / file.path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(file.content, bytes):
        target.write_bytes(file.content)
    else:
        target.write_text(file.content, encoding="utf-8")
    return file.path


def _remove_stale(out: Path, written: set[str]) -> None:
    """Delete what the previous build listed in its manifest and this build did not write."""
    manifest = out / MANIFEST
    if manifest.exists():
        for old in manifest.read_text(encoding="utf-8").splitlines():
            stale = out / old
            if old and old not in written and stale.is_file():
                stale.unlink()
    manifest.write_text("\n".join(sorted(written)) + "\n", encoding="utf-8")
