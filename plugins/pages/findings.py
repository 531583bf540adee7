"""The Findings page: every finding the analysis plugins computed, grouped by kind, and one
evidence page per finding linking every result row it rests on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="findings", nav="Findings", order=30, render=render_findings)]


def render_findings(site: Site) -> list[RenderedPage]:
    from benchsite.toolkit.pages import render_evidence_pages, render_findings_page

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
