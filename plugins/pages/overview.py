"""The Overview page (``index.html``): the headline GPU-vs-CPU speedup per workload with its
interval, the devices compared, the top findings and recommendations, and when and where it was
all measured."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from benchsite import Page, RenderedPage, hookimpl
from benchsite.units import format_number

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.plugins._shared.pages import (
        Measured,
        WorkloadSummary,
    )

    from benchsite.site import ChartView, FindingView, Site

TOP_FINDINGS = 6
# what a visitor asks first, one finding of each; other kinds only fill the remaining places
HEADLINE_KINDS = ("speedup", "crossover", "multi-gpu", "memory", "batch-scaling", "technique",
                  "cpu-threads", "energy-cost")  # fmt: skip


@dataclass(frozen=True)
class HeadlineRow:
    """One workload's accelerator speedup at the largest size measured on both devices."""

    workload: str
    href: str
    variant: str
    series: str
    at: str
    speedup: str
    interval: str
    evidence: str


@dataclass(frozen=True)
class OverviewContext:
    """``index.html``: the headline speedups (table and chart, or what to run to get them), the
    devices compared, the top findings and recommendations, and when and where it was measured."""

    measured: Measured
    headline: list[HeadlineRow]
    headline_chart: ChartView | None
    missing_speedup: str | None
    findings: list[FindingView]
    recommendations: list[FindingView]
    missing_findings: str | None
    workloads: list[WorkloadSummary]
    suspect: list[str] = field(default_factory=list)  # workloads left out of the headline, why


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="overview", nav="Overview", order=0, path="index.html", render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.plugins._shared.pages import measured, what_to_run, workload_summaries

    from benchsite.site import charts, describe

    top = site.tables.headline
    findings = [f for f in site.findings if f.kind not in ("recommendation", "faq", "claim")]
    context = OverviewContext(
        measured=measured(site),
        headline=headline_rows(site, top),
        headline_chart=(
            site.chart(
                charts.headline_chart(top),
                "Speedup over the CPU per workload",
                describe.headline_text(top),
            )
            if not top.empty
            else None
        ),
        missing_speedup=None
        if not top.empty
        else (
            "No workload was measured on both a CPU and an accelerator of the same host, so "
            "there is no speedup to show. " + what_to_run(site)
        ),
        findings=site.finding_views(_top_findings(findings)),
        recommendations=site.finding_views(_strongest(site.analysed.of_kind("recommendation"))),
        missing_findings=None
        if site.findings
        else (
            f"The installed analysis plugins produced no findings from these {len(site.results)} "
            f"rows. {what_to_run(site)}"
        ),
        workloads=workload_summaries(site),
        suspect=suspect_lines(site.tables.suspect_headlines),
    )
    return [site.render("overview.html", "index.html", context, "overview")]


def _strongest(findings: list) -> list:
    from benchsite.plugins._shared.pages import by_strength

    return by_strength(findings)[:TOP_FINDINGS]


def _top_findings(findings: list) -> list:
    """The strongest finding of each headline kind (six crossovers in a row would hide the
    rest of the answers), then the strongest of the others."""
    from benchsite.plugins._shared.pages import by_strength

    ranked = by_strength(findings)
    first_of: dict = {}
    for finding in ranked:
        first_of.setdefault(finding.kind, finding)
    chosen = [first_of[kind] for kind in HEADLINE_KINDS if kind in first_of][:TOP_FINDINGS]
    chosen += [f for f in ranked if all(f is not c for c in chosen)]
    return chosen[:TOP_FINDINGS]


def suspect_lines(pairs: pd.DataFrame) -> list[str]:
    """``lstm-infer (precision=bf16) on h200 · cuda:0 at batch = 64: 4.66×, flagged noisy``:
    the pairs of the workloads left out of the headline because they are suspect."""
    return [
        f"{row.workload} ({row.variant}) on {row.series}"
        + (f" at {row.axis} = {format_number(row.axis_value)}" if pd.notna(row.axis_value) else "")
        + f": {row.speedup:.3g}×, flagged {', '.join(row.reasons)}"
        for row in pairs.itertuples()
    ]


def headline_rows(site: Site, top: pd.DataFrame) -> list[HeadlineRow]:
    return [
        HeadlineRow(
            workload=str(row.workload),
            href=site.workload_path(str(row.workload)),
            variant=str(row.variant),
            series=str(row.series),
            at=f"{row.axis} = {format_number(row.axis_value)}" if pd.notna(row.axis_value) else "",
            speedup=f"{row.speedup:.3g}×",
            interval=f"{row.low:.3g}× – {row.high:.3g}×",
            evidence=site.row_links[str(row.row_id)].href,
        )
        for row in top.itertuples()
    ]
