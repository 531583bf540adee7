"""Markdown from plugins and findings, turned into HTML that cannot run script.

Markdown is rendered as GitHub renders it (CommonMark with tables and strikethrough, by
GitHub's own cmark-gfm through :mod:`cmarkgfm`), then cleaned with :mod:`nh3` (an allow-list
HTML sanitizer):
``<script>``, ``<iframe>``, event handlers such as ``onerror`` and ``javascript:`` links are
removed, so a finding's text or a plugin's description can only ever be text, formatting and
links.
"""

from __future__ import annotations

import functools

import cmarkgfm
import nh3
from cmarkgfm.cmark import Options
from markupsafe import Markup

# no images: an <img src> would make a request leave the page (the site is self-contained)
ALLOWED_TAGS = nh3.ALLOWED_TAGS - {"img", "area", "map"}
ALLOWED_ATTRIBUTES = {**nh3.ALLOWED_ATTRIBUTES, "h2": {"id"}, "h3": {"id"}}


# made once: nh3.clean(html, tags=...) builds its rules anew on every call, 4x the time of
# the cleaning itself (a big store's site cleans ~2,000 findings)
CLEANER = nh3.Cleaner(
    tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes={"http", "https", "mailto"}
)


def clean_html(html: str) -> Markup:
    """HTML with everything but harmless formatting and links removed."""
    return Markup(CLEANER.clean(html))


def markdown_html(text: str | None) -> Markup:
    """Render Markdown ``text`` and sanitize the result; empty for ``None``. Cached: the same
    finding appears on several pages."""
    if not text:
        return Markup("")
    return _rendered(text)


# of GitHub's extensions, those the site has always rendered: a bare address stays text (no
# autolink), "[ ]" stays text (no task list); nh3 does what the tag filter would
EXTENSIONS = ["table", "strikethrough"]


@functools.lru_cache(maxsize=4096)
def _rendered(text: str) -> Markup:
    """CommonMark, not Python-Markdown (which this site used first): a list right after a line
    of text is a list there, as on GitHub, where the Markdown of plugins and docs is read too.
    Raw HTML passes through to :func:`clean_html` (``UNSAFE``), which keeps only what is
    harmless. cmark-gfm is C: ~13x faster than markdown-it-py (same HTML for every finding of
    the benchmark's store), which counts when a big store's findings carry hundreds of tables."""
    html = cmarkgfm.markdown_to_html_with_extensions(
        text, options=Options.CMARK_OPT_UNSAFE, extensions=EXTENSIONS
    )
    return clean_html(html)
