"""The Overview page (``index.html``): the headline GPU-vs-CPU speedup per workload with its
interval, the devices compared, the top findings and recommendations, and when and where it was
all measured."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site
    from benchsite.site.context import HeadlineRow
from benchsite.units import format_number

TOP_FINDINGS = 6
# what a visitor asks first, one finding of each; other kinds only fill the remaining places
HEADLINE_KINDS = ("speedup", "crossover", "multi-gpu", "memory", "batch-scaling", "technique",
                  "cpu-threads", "energy-cost")  # fmt: skip


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="overview", nav="Overview", order=0, path="index.html", render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.site import charts, describe, frames
    from benchsite.site.context import OverviewContext
    from benchsite.site.summaries import measured, what_to_run, workload_summaries
    top = frames.headline(frames.speedups(site.current))
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
    )
    return [site.render("overview.html", "index.html", context, "overview")]


def _strongest(findings: list) -> list:
    from benchsite.site.findings import by_strength
    return by_strength(findings)[:TOP_FINDINGS]


def _top_findings(findings: list) -> list:
    """The strongest finding of each headline kind (six crossovers in a row would hide the
    rest of the answers), then the strongest of the others."""
    from benchsite.site.findings import by_strength
    ranked = by_strength(findings)
    first_of: dict = {}
    for finding in ranked:
        first_of.setdefault(finding.kind, finding)
    chosen = [first_of[kind] for kind in HEADLINE_KINDS if kind in first_of][:TOP_FINDINGS]
    chosen += [f for f in ranked if all(f is not c for c in chosen)]
    return chosen[:TOP_FINDINGS]


def headline_rows(site: Site, top: pd.DataFrame) -> list[HeadlineRow]:
    from benchsite.site.context import HeadlineRow
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
