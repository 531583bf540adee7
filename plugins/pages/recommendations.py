"""The Recommendations page: what to do, from findings of kind ``recommendation``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="recommendations", nav="Recommendations", order=40, render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.toolkit.pages import render_findings_page

    return render_findings_page(
        site,
        page="recommendations",
        path="recommendations.html",
        title="Recommendations",
        intro="What to do, and the measurements each advice follows from. Which device to use "
        "is judged at the sizes on each workload's page, with the same precision on both "
        "devices and the data already on the GPU (copies not timed) unless the advice says "
        "otherwise.",
        kinds=("recommendation",),
        template="recommendations.html",
    )
