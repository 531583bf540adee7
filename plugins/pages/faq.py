"""The FAQ page: common CPU-versus-GPU questions answered from this store (findings of kind
``faq``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="faq", nav="FAQ", order=50, render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.toolkit.pages import render_findings_page

    return render_findings_page(
        site,
        page="faq",
        path="faq.html",
        title="FAQ",
        intro="The questions people ask about PyTorch on a CPU versus a GPU, answered with the "
        "numbers measured here rather than with received wisdom.",
        kinds=("faq",),
        template="faq.html",
    )
