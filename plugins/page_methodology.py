"""The Methodology page: how timing, statistics, collectors and isolation work. The text is the
theme's ``methodology.md`` (Markdown, sanitized), so a user's ``--templates`` folder can replace
it like any template."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="methodology", nav="Methodology", order=80, render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.site.context import MethodologyContext
    from benchsite.site.sanitize import markdown_html
    from benchsite.site.theme import read_static
    text = read_static(site.env, "methodology.md")
    context = MethodologyContext(markdown_html(text))
    return [site.render("methodology.html", "methodology.html", context, "methodology")]
