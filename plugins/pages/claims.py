"""The Claims page: common claims about CPUs and GPUs, each checked against this store (findings
of kind ``claim`` with a verdict). Adds the ``verdict_class`` filter through
``prepare_jinja_env``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site

VERDICT_CLASSES = {
    "supported": "good",
    "contradicted": "bad",
    "depends": "warn",
    "untested": "muted",
}


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="claims", nav="Claims", order=60, render=render)]


@hookimpl
def prepare_jinja_env(env: Any) -> None:
    env.filters["verdict_class"] = lambda verdict: VERDICT_CLASSES.get(verdict or "", "muted")


def render(site: Site) -> list[RenderedPage]:
    from benchsite.toolkit.pages import render_findings_page

    return render_findings_page(
        site,
        page="claims",
        path="claims.html",
        title="Claims",
        intro="Claims often made about PyTorch on CPUs and GPUs, each checked against the "
        "measurements: supported, contradicted, it depends, or untested here.",
        kinds=("claim",),
        template="claims.html",
    )
