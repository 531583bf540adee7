"""The Methodology page: how timing, statistics, collectors and isolation work. The text is the
theme's ``methodology.md`` (Markdown, sanitized), so a user's ``--templates`` folder can replace
it like any template."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from markupsafe import Markup

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site


@dataclass(frozen=True)
class MethodologyContext:
    """``methodology.html``: the methodology text (sanitized Markdown)."""

    html: Markup


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="methodology", nav="Methodology", order=80, render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.site import markdown_html, read_static

    text = read_static(site.env, "methodology.md")
    context = MethodologyContext(markdown_html(text))
    return [site.render("methodology.html", "methodology.html", context, "methodology")]
