"""The Runs page: every run in the store, per host, over time; and one page per run listing
every row it stored (each with its anchor, so findings can link to any row)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import (
        CaseTable,
        ChartView,
        Site,
    )


@dataclass(frozen=True)
class RunRow:
    """One run in the runs table."""

    host: str
    run_id: str
    href: str
    started: str
    duration: str
    profile: str
    devices: str
    workloads: int
    cases: int
    ok: int
    skipped: int
    failed: int
    version: str
    labels: str = ""
    change: str = ""  # against the host's previous run (benchsite.tables.compare.run_changes)
    change_href: str = ""
    regressions: int = 0


@dataclass(frozen=True)
class RunsContext:
    """``runs.html``: every run in the store, per host, over time, newest first; a store of
    more than :data:`RUNS_PER_PAGE` runs (a fleet) continues on numbered pages listed in
    ``parts`` (label, path), the chart on the first."""

    runs: list[RunRow]
    chart: ChartView | None
    parts: list[tuple[str, str]] = field(default_factory=list)


RUNS_PER_PAGE = 200  # runs listed on one page of the runs table (~550 bytes each)


@dataclass(frozen=True)
class RunContext:
    """``runs/<run>.html``: every row of one run, each with its anchor; a long run continues on
    numbered pages listed in ``parts`` (label, path)."""

    run: RunRow
    cases: CaseTable
    parts: list[tuple[str, str]] = field(default_factory=list)


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="runs", nav="Runs", order=70, render=render)]


def render(site: Site) -> Iterator[RenderedPage]:
    """The runs table, then each run's pages, made a batch of runs at a time and yielded as
    they are made: a fleet's million rows as case-table lines and HTML at once held ~1.4 GB."""
    from benchsite.site import CaseTable, case_table, charts, describe
    from benchsite.tables import run_order

    table = site.tables.runs
    changes = {str(change.run_id): change for change in site.tables.run_changes.itertuples()}
    rows = {
        str(run.run_id): run_row(site, run, changes.get(str(run.run_id)))
        for run in table.itertuples()
    }
    chart = site.chart(charts.runs_chart(table), "Runs over time", describe.runs_text(table))
    yield from runs_pages(site, list(rows.values()), chart)
    run_hrefs = {run_id: row.href for run_id, row in rows.items()}

    for batch in whole_runs(run_order(site.results), BATCH_ROWS):
        # one table for a batch's rows (made a column at a time, it costs per call, not only
        # per row), then each run's lines: its rows, in frame order
        lines = case_table(batch, run_hrefs).rows
        positions = pd.Series(range(len(batch)), index=batch.index)
        for run_id, group in positions.groupby(batch["run_id"].to_numpy(), sort=False):
            yield from run_pages(site, rows[str(run_id)], CaseTable([lines[at] for at in group]))


BATCH_ROWS = 50_000  # rows made into case-table lines at once


def whole_runs(ordered: pd.DataFrame, rows: int) -> Iterator[pd.DataFrame]:
    """``ordered`` (each run's rows together) in slices of whole runs, each of at least
    ``rows`` rows but the last, and of one run where a run alone has more."""
    runs = ordered["run_id"].to_numpy()
    firsts = [0, *(np.flatnonzero(runs[1:] != runs[:-1]) + 1).tolist()]
    start = 0
    for first in [*firsts[1:], len(ordered)]:
        if first - start >= rows or first == len(ordered):
            yield ordered.iloc[start:first]
            start = first


def runs_pages(site: Site, runs: list[RunRow], chart: ChartView) -> list[RenderedPage]:
    """The runs table, :data:`RUNS_PER_PAGE` runs a page: ``runs.html``, ``runs-2.html``, …"""
    starts = range(0, max(len(runs), 1), RUNS_PER_PAGE)
    paths = ["runs.html", *(f"runs-{n + 1}.html" for n in range(1, len(starts)))]
    parts = [(str(n + 1), path) for n, path in enumerate(paths)] if len(paths) > 1 else []
    return [
        site.render(
            "runs.html",
            path,
            RunsContext(runs[start : start + RUNS_PER_PAGE], chart if n == 0 else None, parts),
            "runs",
        )
        for n, (start, path) in enumerate(zip(starts, paths, strict=True))
    ]


def run_pages(site: Site, run: RunRow, table: CaseTable) -> list[RenderedPage]:
    """A run's rows, :data:`RUN_PAGE_ROWS` per page (the order row links expect)."""
    from benchsite.site import RUN_PAGE_ROWS, CaseTable

    starts = range(0, len(table), RUN_PAGE_ROWS)
    parts = [(str(n + 1), site.run_path(run.run_id, n)) for n in range(len(starts))]
    return [
        site.render(
            "run.html",
            parts[n][1],
            RunContext(
                run,
                CaseTable(table.rows[start : start + RUN_PAGE_ROWS]),
                parts if len(parts) > 1 else [],
            ),
            "runs",
        )
        for n, start in enumerate(starts)
    ]


def run_row(site: Site, run: Any, change: Any = None) -> RunRow:
    seconds = (run.ended - run.started).total_seconds()
    return RunRow(
        **change_fields(change),
        host=str(run.host),
        run_id=str(run.run_id),
        href=site.run_path(str(run.run_id)),
        started=f"{run.started:%Y-%m-%d %H:%M} UTC",
        duration=f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s",
        profile=str(run.profile),
        devices=str(run.devices),
        workloads=int(run.workloads),
        cases=int(run.cases),
        ok=int(run.ok),
        skipped=int(run.skipped),
        failed=int(run.failed),
        version=str(run.version),
        labels=str(getattr(run, "labels", "") or ""),
    )


def change_fields(change: Any) -> dict[str, Any]:
    """How a run compares with its host's previous run, and the Compare page's link to it."""
    if change is None or not change.cases:
        return {}
    text = f"{change.cases} cases compared"
    href = f"compare.html?a={quote(str(change.base_run))}&b={quote(str(change.run_id))}"
    return {"change": text, "change_href": href, "regressions": int(change.regressions)}
