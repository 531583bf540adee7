"""Markdown from plugins and findings, turned into HTML that cannot run script.

Markdown is rendered with :mod:`markdown`, then cleaned with :mod:`nh3` (an allow-list HTML
sanitizer): ``<script>``, ``<iframe>``, event handlers such as ``onerror`` and ``javascript:``
links are removed, so a finding's text or a plugin's description can only ever be text,
formatting and links.
"""

from __future__ import annotations

import functools

import markdown
import nh3
from markupsafe import Markup

EXTENSIONS = ["tables", "fenced_code", "sane_lists"]
# no images: an <img src> would make a request leave the page (the site is self-contained)
ALLOWED_TAGS = nh3.ALLOWED_TAGS - {"img", "area", "map"}
ALLOWED_ATTRIBUTES = {**nh3.ALLOWED_ATTRIBUTES, "h2": {"id"}, "h3": {"id"}}


def clean_html(html: str) -> Markup:
    """HTML with everything but harmless formatting and links removed."""
    return Markup(
        nh3.clean(
            html,
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            url_schemes={"http", "https", "mailto"},
        )
    )


@functools.lru_cache(maxsize=4096)
def markdown_html(text: str | None) -> Markup:
    """Render Markdown ``text`` and sanitize the result; empty for ``None``. Cached: the same
    finding appears on several pages."""
    if not text:
        return Markup("")
    return clean_html(_converter().reset().convert(text))


@functools.cache
def _converter() -> markdown.Markdown:
    """One Markdown converter, reset before each text: building one loads every extension,
    which took half the time of converting a finding's text."""
    return markdown.Markdown(extensions=EXTENSIONS, output_format="html")
