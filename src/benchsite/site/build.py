"""``benchsite build``: read the store, compute findings, render every page, write the site.

The build reads top to bottom in :func:`build_site`, one labelled line per stage: read the
store, analyse it (``prepare_results``, the tables and every analysis' findings), render the
pages, write the files, then draw the chart SVGs that no earlier build drew.

Every file goes into a staging folder beside ``--out``, which replaces the published site only
when the build succeeded (:mod:`benchsite.site.publish`, which also holds the lock that keeps two
builds out of one folder): a build that fails or is interrupted leaves the last good site as it
was. A page or analysis that raises is reported by name and the build fails, publishing nothing
(``keep_going`` publishes the rest; ``strict`` stops at the first failure). A missing or empty
store is one line: the build measures nothing (``benchsite build`` runs the quick suite first
when the default store does not exist yet; that decision is the CLI's).

Text columns made during a build (``host``, ``workload``, a table's row ids) hold Python strings
(pandas' ``mode.string_storage`` "python"), not Arrow strings, pandas 3's default: the tables,
analyses and pages read them value by value in Python (``zip``, ``itertuples``, sets), which
is slower over Arrow (docs/architecture.md, "Read"). Vectorized operations cost the same
either way.
"""

from __future__ import annotations

import math
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pandas as pd

from benchsite._infra.cores import usable_cores
from benchsite._infra.pool import forks, in_processes
from benchsite.errors import BuildFailed, PluginError, StoreError, describe_exception
from benchsite.host import registry
from benchsite.host.manager import Plugins, load_plugins
from benchsite.records import Page, RenderedPage, Workload
from benchsite.site import assets, publish
from benchsite.site.analyse import Analysed, analyse
from benchsite.site.renderer import NavItem, Site, row_links
from benchsite.site.specs import ChartSpec
from benchsite.site.theme import make_environment, read_static
from benchsite.store import parts as store
from benchsite.store.reference import read_references
from benchsite.store.remote import locate

DEFAULT_RESULTS = Path("results")
THEME_FILES = ("site.css", "embed.js", "tables.js")
STAGES = ("plugins", "read", "analyse", "pages", "files", "charts")
T = TypeVar("T")


class Reporter(Protocol):
    """How a build tells its caller what happens (the CLI draws progress): stage ``index``
    (from 0) of ``count`` starts; a notice is one line."""

    def notice(self, text: str) -> None: ...
    def stage(self, name: str, index: int, count: int) -> None: ...


class SilentReporter:
    def notice(self, text: str) -> None: ...
    def stage(self, name: str, index: int, count: int) -> None: ...


@dataclass(frozen=True)
class BuildOptions:
    """Everything ``benchsite build`` can be told."""

    results: Path = DEFAULT_RESULTS
    out: Path = Path("site")
    templates: Path | None = None
    title: str = "PyTorch on CPU and GPU: what it buys you"
    plugins: tuple[str, ...] = ()
    strict: bool = False
    keep_going: bool = False  # publish even when a page or an analysis failed
    references: tuple[str, ...] = ()  # other stores' rows beside these (store/reference.py)


@dataclass
class BuildReport:
    """What a build did: where, how many files and rows, how long, and what failed."""

    out: Path
    files: int = 0
    rows: int = 0
    seconds: float = 0.0
    charts_rendered: int = 0
    chart_seconds: float = 0.0  # time vl-convert spent drawing them, over its processes
    stages: dict[str, float] = field(default_factory=dict)
    page_errors: dict[str, str] = field(default_factory=dict)
    analysis_errors: dict[str, str] = field(default_factory=dict)


def build_site(
    options: BuildOptions,
    reporter: Reporter | None = None,
    references: pd.DataFrame | None = None,
) -> BuildReport:
    """Build the site described by ``options``; see the module docstring. ``references``: the
    rows of ``options.references`` when the caller read them already
    (:func:`benchsite.store.reference.read_references`), else they are read here first."""
    started, reporter = time.perf_counter(), reporter or SilentReporter()
    report = BuildReport(options.out)
    stage = Stages(report, reporter, STAGES)  # times each stage; the reporter shows it
    # each reference read and checked before any other work: a bad one is one line, exit 2
    if references is None and options.references:
        references = read_references(options.references)
    # text columns held as Python strings, not in Arrow (pandas 3's default): the tables,
    # analyses and pages walk them in Python, ~4x slower over Arrow (module docstring)
    with pd.option_context("mode.string_storage", "python"), publish.staged(options.out) as staging:
        bundle = assets.start_vega_bundle(staging.out)  # made meanwhile unless cached
        plugins = stage("plugins", load_plugins, options.plugins, strict=options.strict)
        workloads = {name: reg.item for name, reg in registry.workloads(plugins).items()}
        results = with_declared_items(stage("read", read_store, options.results), workloads)
        if references is not None:
            references = with_declared_items(references, workloads)
        analysed = stage("analyse", analyse, plugins, results, usable_cores(), references)
        site = make_site(options, analysed, plugins, workloads)  # hook: prepare_jinja_env
        pages = stage("pages", render_pages, site, ordered_pages(plugins), staging, options)
        check_failures(options, analysed, pages, report, reporter)
        written = stage("files", write_files, staging, site, pages, bundle)  # theme, bundle
        charts = {chart.svg: chart for page in pages for chart in page.charts}
        drawn = stage("charts", assets.draw_missing, charts.values(), staging)  # missing ones
        written |= set(charts)
        seconds = {page.name: page.seconds for page in pages}  # the next build's order
        staging.publish(written, seconds)  # the swap: the new site replaces the published one
    report.rows, report.files = len(results), len(written)
    report.charts_rendered, report.chart_seconds = drawn.count, drawn.seconds
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class Stages:
    """Runs the build's stages one after another: tells the reporter which one starts (a
    progress line) and notes how long each took in ``report.stages``."""

    report: BuildReport
    reporter: Reporter
    names: tuple[str, ...]

    def __call__(self, name: str, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        self.reporter.stage(name, self.names.index(name), len(self.names))
        started = time.perf_counter()
        result = function(*args, **kwargs)
        self.report.stages[name] = time.perf_counter() - started
        return result


def read_store(results: Path) -> pd.DataFrame:
    """The store's rows; a missing or empty store is one line."""
    where = locate(results)  # a folder or an object store (benchsite.store.remote)
    rows = store.read_results(where)
    if rows.empty and not where.exists():
        raise StoreError(f"--results {where} does not exist: pass the folder of a store")
    if rows.empty:
        raise StoreError(f"{where} holds no results: measure first (benchsite run)")
    return rows


def with_declared_items(rows: pd.DataFrame, workloads: dict[str, Workload]) -> pd.DataFrame:
    """``rows`` where a row stored without ``item_unit`` (written before the column existed)
    takes the item its workload declares now, if an installed plugin registers that workload;
    a row that says what it counted keeps it, and the others stay null (items)."""
    declared = {name: workload.item for name, workload in workloads.items() if workload.item}
    if rows.empty or not declared:
        return rows
    stored = rows["item_unit"] if "item_unit" in rows else pd.Series(None, index=rows.index)
    now = rows["workload"].astype(str).map(declared)
    filled = stored.where(stored.notna(), now).astype(object)
    return rows.assign(item_unit=filled.where(filled.notna(), None))


def make_site(
    options: BuildOptions, analysed: Analysed, plugins: Plugins, workloads: dict[str, Workload]
) -> Site:
    """The :class:`Site` every page renders from: the tables' prepared results, the theme's
    environment (user templates, plugins' ``templates/`` folders, the default theme;
    ``prepare_jinja_env``), navigation (``register_pages``), row links."""
    env = make_environment(options.templates, plugins.template_folders())
    list(plugins.call_each("prepare_jinja_env", {"env": env}))  # hook: prepare_jinja_env
    env.globals["site_title"] = options.title
    tables = analysed.tables
    assert tables is not None  # analyse() always makes them
    site = Site(
        title=options.title,
        results=tables.rows,
        current=tables.current,
        analysed=analysed,
        env=env,
        workloads=workloads,
        built_at=datetime.now(UTC),
        nav=[
            NavItem(page.name, page.nav, page.nav_path)
            for page in ordered_pages(plugins)
            if page.nav
        ],
    )
    site.row_links = row_links(site)
    return site


def ordered_pages(plugins: Plugins) -> list[Page]:
    pages = [registered.item for registered in registry.pages(plugins).values()]  # hook
    return sorted(pages, key=lambda page: (page.order, page.name))


@dataclass
class PageOutput:
    """What one page gave: the files it wrote (paths in the site) and the charts they embed,
    or why it failed."""

    name: str
    files: list[str]
    charts: list[ChartSpec] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0  # how long it took to render and write


def render_pages(
    site: Site, pages: list[Page], staging: publish.Staging, options: BuildOptions
) -> list[PageOutput]:
    """Render every page and write its files into the staging folder; what each gave, in the
    order of ``pages``.

    Pages render side by side, one worker per usable core, in processes forked from this one
    (:mod:`benchsite._infra.pool`). Each worker writes its page's files itself: only their paths
    come back, not the HTML. Each page goes to the next free worker, the pages that took longest
    in the last build first (:func:`longest_first`); the measured effect is in
    ``benchmarks/site_build.py``'s output and the CHANGELOG.
    Where workers cannot be forked (they would start without the site), pages render here."""
    workers = min(len(pages), usable_cores())
    if workers <= 1 or not forks():
        return [render_page(site, page, staging.folder, options.strict) for page in pages]
    order = longest_first(pages, publish.page_seconds(staging.out))
    adopt = (site, pages, staging.folder, options.strict)  # inherited by each forked worker
    outputs = in_processes(_render_nth, order, workers=workers, initializer=_adopt, initargs=adopt)
    return [output for _, output in sorted(zip(order, outputs, strict=True))]


def longest_first(pages: list[Page], seconds: dict[str, float]) -> list[int]:
    """The indices of ``pages``, those that took longest last time first (a page new since
    then counts as longest), else in their order: each goes to the next free worker, so a long
    page handed out last would keep one worker busy while the others wait. In a rebuild of the
    100,000 rows of ``benchmarks/site_build.py``, handed out in the order of ``pages`` (the runs
    page eighth of eleven) the two workers finished 0.8 s apart, of 5.6 s; longest first, 0.2 s
    apart, of 5.1 s."""
    return sorted(range(len(pages)), key=lambda i: -seconds.get(pages[i].name, math.inf))


def render_page(site: Site, page: Page, folder: Path, strict: bool) -> PageOutput:
    """Render one page and write its files into ``folder``, each as it comes (a page may yield
    them: one of thousands of files then never holds them all); a page that raises leaves none
    of its files there and gives its error (fatal with ``strict``)."""
    known, written, started = len(site.charts), [], time.perf_counter()
    try:
        for file in page.render(site):
            written.append(write_file(folder, file))
    except Exception as exc:
        for path in written:
            (folder / path).unlink(missing_ok=True)
        if strict:
            raise PluginError(f"page {page.name} failed: {describe_exception(exc)}") from exc
        return PageOutput(page.name, [], error=describe_exception(exc))
    seconds = time.perf_counter() - started
    return PageOutput(page.name, written, list(site.charts.values())[known:], seconds=seconds)


_ADOPTED: dict[str, Any] = {}  # in a page worker only: what it renders from (see _adopt)


def _adopt(site: Site, pages: list[Page], folder: Path, strict: bool) -> None:
    _ADOPTED.update(site=site, pages=pages, folder=folder, strict=strict)


def _render_nth(index: int) -> PageOutput:
    page = _ADOPTED["pages"][index]
    return render_page(_ADOPTED["site"], page, _ADOPTED["folder"], _ADOPTED["strict"])


def check_failures(
    options: BuildOptions,
    analysed: Analysed,
    pages: list[PageOutput],
    report: BuildReport,
    reporter: Reporter,
) -> None:
    """Note every analysis and page that failed; unless ``keep_going``, fail the build then
    (nothing is published)."""
    report.analysis_errors = dict(analysed.errors)
    report.page_errors = {page.name: page.error for page in pages if page.error is not None}
    failed = {
        **{f"analysis {n}": e for n, e in report.analysis_errors.items()},
        **{f"page {n}": e for n, e in report.page_errors.items()},
    }
    if not failed or options.keep_going:
        return
    for name, error in failed.items():
        reporter.notice(f"{name} failed: {error}")
    first = next(iter(failed))
    raise BuildFailed(
        f"{len(failed)} part(s) of the site failed ({first}: {failed[first]}); nothing was "
        f"published, {options.out} is as it was: fix them, or pass --keep-going to publish "
        "the rest"
    )


def write_files(
    staging: publish.Staging,
    site: Site,
    pages: list[PageOutput],
    bundle: subprocess.Popen[bytes] | None,
) -> set[str]:
    """Write the theme's static files and the Vega bundle into the staging folder beside the
    pages' files; every path written, relative to it."""
    theme = [
        RenderedPage(f"{assets.ASSETS}/{name}", read_static(site.env, name)) for name in THEME_FILES
    ]
    written = {path for page in pages for path in page.files}
    written |= {write_file(staging.folder, file) for file in [*theme, NOJEKYLL]}
    written.add(assets.write_vega_bundle(staging.folder, staging.out, bundle))
    return written


NOJEKYLL = RenderedPage(".nojekyll", "")  # GitHub Pages: serve the site as it is


def write_file(folder: Path, file: RenderedPage) -> str:
    """Write ``file`` into ``folder``; its path (checked on its text: resolving it on disk,
    twice a file, took ~0.25 s for the 2,100 files of a big store's site)."""
    inside = os.path.normpath(file.path)
    if os.path.isabs(inside) or inside == ".." or inside.startswith(".." + os.sep):
        raise PluginError(f"a page wants to write {file.path}, outside the site: fix the plugin")
    target = folder / file.path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(file.content, bytes):
        target.write_bytes(file.content)
    else:
        target.write_text(file.content, encoding="utf-8")
    return file.path
