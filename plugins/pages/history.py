"""The History pages (``history/<workload>.html``): each case's median run by run, per host and
device, with each run's 95% interval as a bar and the changes the site flags between runs
marked (:attr:`benchsite.tables.Tables.case_history`, whose verdicts are
:mod:`benchsite.tables.compare`'s, as on the Runs pages and in ``benchsite compare``). A
report rebuilt on a schedule thus shows whether a driver or PyTorch upgrade moved a case, and
in which run. Linked from the Compare page and from each workload's page."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Page, RenderedPage, hookimpl
from benchsite.toolkit.charts import history_chart
from benchsite.units import format_ratio, format_seconds

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import ChartView, Site

MAX_CASES = 24  # charts per page: the cases that changed first, then those run most often
MAX_SERIES, MAX_RUNS = 12, 30  # lines per chart, and the newest runs each line draws


@dataclass(frozen=True)
class ChangeView:
    """One flagged change: where, which run, by how much (with its interval)."""

    series: str
    run_id: str
    verdict: str
    ratio: str
    href: str


@dataclass(frozen=True)
class CaseHistory:
    """One case: its chart (``None`` with a single run) and its flagged changes."""

    case: str
    runs: int
    chart: ChartView | None
    changes: list[ChangeView]


@dataclass(frozen=True)
class HistoryContext:
    """``history.html``: one workload's cases, each with its history."""

    workload: str
    workload_href: str
    cases: list[CaseHistory]
    hidden: int  # cases past MAX_CASES
    single: int  # cases measured in one run only


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="history", nav=None, order=75, render=render)]


def history_path(workload: str) -> str:
    """The history page of ``workload``, relative to the site's root."""
    from benchsite.site import slug

    return f"history/{slug(workload)}.html"


@hookimpl
def prepare_jinja_env(env: Any) -> None:
    env.globals["history_path"] = history_path  # the workload and Compare pages link here


def render(site: Site) -> Iterator[RenderedPage]:
    """A page for every workload of the store (one with no successful row says so)."""
    table = site.tables.case_history
    by_workload = dict(iter(table.groupby("workload", sort=True)))
    for workload in sorted(map(str, site.results["workload"].unique())):
        rows = by_workload.get(workload, table.iloc[:0])
        yield site.render("history.html", history_path(workload), _context(site, workload, rows))


def _context(site: Site, workload: str, rows: pd.DataFrame) -> HistoryContext:
    cases = []
    for key, case in rows.groupby("case_key", sort=False):
        cases.append((str(key), case))
    many = [(key, case) for key, case in cases if case["runs"].max() > 1]
    many.sort(key=lambda item: (-(item[1]["verdict"] != "").sum(), -item[1]["runs"].max()))
    shown = [_case(site, case) for _, case in many[:MAX_CASES]]
    return HistoryContext(
        workload=workload,
        workload_href=site.workload_path(workload),
        cases=shown,
        hidden=max(len(many) - MAX_CASES, 0),
        single=len(cases) - len(many),
    )


def _drawn(case: pd.DataFrame) -> pd.DataFrame:
    """The rows of one case a chart draws: its :data:`MAX_SERIES` series that changed or ran
    most (a fleet's hundred hosts would be a hundred lines), each its newest :data:`MAX_RUNS`."""
    series = case.groupby("series")["verdict"].agg(
        changed=lambda verdicts: int((verdicts != "").sum()), runs="size"
    )
    kept = series.sort_values(["changed", "runs"], ascending=False).index[:MAX_SERIES]
    rows = case[case["series"].isin(kept)]
    return rows.groupby("series", sort=False).tail(MAX_RUNS)


def _case(site: Site, case: pd.DataFrame) -> CaseHistory:
    case = _drawn(case)
    text = str(case["params_text"].iloc[0])
    changes = [
        ChangeView(
            series=str(row.series),
            run_id=str(row.run_id),
            verdict=str(row.verdict),
            ratio=f"{format_ratio(row.ratio)} the time of the run before (95% interval "
            f"{format_ratio(row.low)} – {format_ratio(row.high)})",
            href=site.row_links[str(row.row_id)].href,
        )
        for row in case[case["verdict"] != ""].itertuples()
    ]
    title = f"{case['workload'].iloc[0]} · {text}"
    drawn = history_chart(case)  # None where Altair is missing
    chart = site.chart(drawn, title, _chart_text(case, changes)) if drawn is not None else None
    return CaseHistory(text, int(case["runs"].max()), chart, changes)


def _chart_text(case: pd.DataFrame, changes: list[ChangeView]) -> str:
    parts = []
    for series, rows in case.groupby("series", sort=True):
        medians = ", ".join(format_seconds(v) for v in rows["median_s"])
        parts.append(f"{series}: {medians}")
    marked = "; ".join(f"{c.verdict} in run {c.run_id} on {c.series}" for c in changes)
    return (
        "Median time per run, oldest first. "
        + "; ".join(parts)
        + (f". Flagged: {marked}." if marked else ". No change flagged.")
    )
