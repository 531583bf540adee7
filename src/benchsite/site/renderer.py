"""The :class:`Site` handed to every page's ``render``: the results, the findings, the Jinja
environment, the navigation, and helpers to render a template, embed a chart and link a row.

Every link a page writes is relative: a page at ``workloads/matmul.html`` gets ``root="../"``
and links ``{{ root }}hardware.html``, so the site works from ``file://``, from a host's root and
from a GitHub Pages project sub-path alike.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import altair as alt
import jinja2
import numpy as np
import pandas as pd
from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup

from benchsite.records import Finding, RenderedPage, Workload
from benchsite.site import assets, theme
from benchsite.site.analyse import Analysed
from benchsite.site.specs import ChartSpec, chart_spec
from benchsite.site.views import ChartView, EvidenceLink, FindingView, finding_view, slug
from benchsite.tables import Tables
from benchsite.tables.rows import RUN_ORDER, run_order

RUN_PAGE_ROWS = 400  # rows per run page (a longer run continues on numbered pages)
WORKLOAD_TABLE_ROWS = 150  # a workload with more current rows lists them on the run pages


def tabled(current: pd.DataFrame) -> pd.DataFrame:
    """The current rows that workload pages list: those of workloads with at most
    :data:`WORKLOAD_TABLE_ROWS` current rows (keeps every page small)."""
    counts = current.groupby("workload")["row_id"].transform("size")
    return current[counts <= WORKLOAD_TABLE_ROWS]


@dataclass(frozen=True)
class NavItem:
    """One entry of the navigation present on every page."""

    name: str
    label: str
    path: str


@dataclass
class Site:
    """What a page's ``render(site)`` gets. ``results`` holds every row (prepared, see
    :func:`benchsite.tables.rows.prepare`), ``current`` the newest row of every case; ``tables``
    every derived number (:class:`benchsite.tables.Tables`)."""

    title: str
    results: pd.DataFrame
    current: pd.DataFrame
    analysed: Analysed
    env: jinja2.Environment
    workloads: dict[str, Workload]
    built_at: datetime
    nav: list[NavItem] = field(default_factory=list)
    vega_script: str = assets.VEGA_BUNDLE
    # every chart a page embedded, by the path of its static SVG: the build draws the missing
    # ones at its end (assets.draw_missing)
    charts: dict[str, ChartSpec] = field(default_factory=dict, repr=False)
    row_links: Mapping[str, EvidenceLink] = field(default_factory=dict)
    _finding_cache: dict[int, FindingView] = field(default_factory=dict, repr=False)

    @property
    def findings(self) -> list[Finding]:
        return self.analysed.findings

    @property
    def tables(self) -> Tables:
        """The build's :class:`benchsite.tables.Tables`: every derived number, defined once."""
        assert self.analysed.tables is not None
        return self.analysed.tables

    def render(self, template: str, path: str, context: Any, page: str = "") -> RenderedPage:
        """Render ``template`` with ``ctx=context`` into the file ``path`` of the site."""
        root = "../" * path.count("/")
        html = theme.get_template(self.env, template).render(
            ctx=context, site=self, root=root, path=path, active=page, nav=self.nav
        )
        return RenderedPage(path, html)

    def chart(self, chart: alt.TopLevelMixin | ChartSpec, title: str, text: str) -> ChartView:
        """Embed ``chart``: its spec inline, a static SVG fallback, and ``text`` describing it."""
        spec = chart_spec(chart)
        self.charts.setdefault(spec.svg, spec)
        # Jinja's escaping of JSON for HTML, applied to the text made once (no second dumps)
        inline = htmlsafe_json_dumps(spec.spec, dumps=lambda _: spec.text)
        return ChartView("chart-" + spec.digest[:12], title, Markup(inline), spec.svg, text)

    def workload_path(self, name: str) -> str:
        return f"workloads/{slug(name)}.html"

    def run_path(self, run_id: str, part: int = 0) -> str:
        """A run's page; ``part`` > 0 names its continuation pages (:data:`RUN_PAGE_ROWS`)."""
        return f"runs/{slug(run_id)}{f'-{part + 1}' if part else ''}.html"

    def finding_views(self, findings: list[Finding]) -> list[FindingView]:
        """Findings ready for a template, with their evidence rows linked."""
        hrefs = {name: self.workload_path(name) for name in self.results["workload"].unique()}
        return [self._finding_view(finding, hrefs) for finding in findings]

    def _finding_view(self, finding: Finding, hrefs: dict[str, str]) -> FindingView:
        """Built once per finding (a finding shows on several pages)."""
        if id(finding) in self._finding_cache:
            return self._finding_cache[id(finding)]
        chart = None
        if finding.chart is not None:
            chart = self.chart(finding.chart, finding.title, finding.answer)
        view = finding_view(finding, self.row_links, hrefs, chart)
        self._finding_cache[id(finding)] = view
        return view


def row_links(site: Site) -> RowLinks:
    """Where each result row is shown: current rows on their workload page, every other row on
    its run's page (every row has an anchor ``row-<row_id>`` on its run page)."""
    results = site.results
    ordered = run_order(results[list(RUN_ORDER)])  # the order alone: no other column moved
    part = ordered.groupby("run_id", sort=False).cumcount() // RUN_PAGE_ROWS
    row_ids = results["row_id"].astype(object).map(str)  # as pages look them up
    current = row_ids.isin(set(tabled(site.current)["row_id"].astype(object).map(str))).to_numpy()
    # each distinct page's path worked out once: a row's own call cost ~1 µs, 100,000 times
    runs = pd.DataFrame({"run": results["run_id"], "part": part.reindex(results.index)})
    run_pages = runs.groupby(["run", "part"], sort=False).ngroup().to_numpy()
    paths = [site.run_path(run, int(n)) for run, n in runs.drop_duplicates().itertuples(False)]
    pages = np.array(paths, dtype=object)[run_pages]
    workloads = results["workload"][current]
    pages[current] = workloads.map({w: site.workload_path(w) for w in workloads.unique()})
    return RowLinks(
        dict(zip(row_ids.to_numpy(object).tolist(), range(len(results)), strict=True)),
        pages,
        tuple(results[name].to_numpy(object) for name in LABEL_COLUMNS),
    )


LABEL_COLUMNS = ("workload", "device", "params_text", "host")  # a link's label: w · d · p (h)


@dataclass(frozen=True)
class RowLinks(Mapping[str, EvidenceLink]):
    """Every row's :class:`EvidenceLink` by row id, made when asked for: a page wants only
    the rows its findings cite, and a big store has a million (their hrefs and labels made
    ahead of time took ~4 s of a build, while no page ran)."""

    positions: dict[str, int]
    pages: np.ndarray  # the page that shows each row
    label_columns: tuple[np.ndarray, ...]  # :data:`LABEL_COLUMNS`

    def __getitem__(self, row_id: str) -> EvidenceLink:
        at = self.positions[row_id]
        workload, device, params, host = self.label_columns
        return EvidenceLink(
            f"{self.pages[at]}#row-{row_id}",
            f"{workload[at]} · {device[at]} · {params[at]} ({host[at]})",
        )

    def __contains__(self, row_id: object) -> bool:
        return row_id in self.positions

    def __iter__(self) -> Iterator[str]:
        return iter(self.positions)

    def __len__(self) -> int:
        return len(self.positions)
