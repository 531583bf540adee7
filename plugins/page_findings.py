"""The Findings page: every finding the analysis plugins computed, grouped by kind, and one
evidence page per finding linking every result row it rests on."""

from __future__ import annotations

from benchsite.plugins._shared.pages import render_evidence_pages, render_findings_page

from benchsite import Page, RenderedPage, hookimpl
from benchsite.site import Site


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="findings", nav="Findings", order=30, render=render_findings)]


def render_findings(site: Site) -> list[RenderedPage]:
    return [
        *render_evidence_pages(site),
        *render_findings_page(
            site,
            page="findings",
            path="findings.html",
            title="Findings",
            intro="Everything the analysis plugins concluded from the store, grouped by kind. "
            "Each finding links to the result rows it rests on.",
            kinds=None,
            template="findings.html",
        ),
    ]
