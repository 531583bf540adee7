"""The Claims page: common claims about CPUs and GPUs, each checked against this store (findings
of kind ``claim`` with a verdict). Adds the ``verdict_class`` filter through
``prepare_jinja_env``."""

from __future__ import annotations

from typing import Any

from benchsite.plugins._shared.pages import render_findings_page

from benchsite import Page, RenderedPage, hookimpl
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
