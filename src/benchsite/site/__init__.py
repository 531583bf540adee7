"""The static site: ``build_site`` renders the store into HTML pages, charts and data files.

Pages are plugins (``register_pages``); each page's ``render`` gets the :class:`Site` being built.
What a page author uses is declared in ``__all__`` (documented in ``docs/plugins.md``, "The site
toolkit"): :class:`Site` (``site.render``, ``site.chart``, ``site.finding_views``,
``site.row_links``, ``site.tables``, ``site.findings``), the views a template receives
(:class:`ChartView`, :class:`FindingView`, :class:`EvidenceLink`, :class:`CaseTable` made by
:func:`case_table`), the chart functions (:mod:`.charts`) and their text descriptions
(:mod:`.describe`), :func:`slug` for file names, :func:`markdown_html` for Markdown and
:func:`read_static` for the theme's files. Other modules of this package are the build's own.
"""

from __future__ import annotations

from benchsite.site import charts, describe
from benchsite.site.build import BuildOptions, BuildReport, build_site
from benchsite.site.renderer import RUN_PAGE_ROWS, WORKLOAD_TABLE_ROWS, NavItem, Site
from benchsite.site.sanitize import markdown_html
from benchsite.site.theme import read_static
from benchsite.site.views import (
    FAILED,
    CaseTable,
    ChartView,
    EvidenceLink,
    FindingView,
    case_table,
    slug,
)

__all__ = [
    "FAILED",
    "RUN_PAGE_ROWS",
    "WORKLOAD_TABLE_ROWS",
    "BuildOptions",
    "BuildReport",
    "CaseTable",
    "ChartView",
    "EvidenceLink",
    "FindingView",
    "NavItem",
    "Site",
    "build_site",
    "case_table",
    "charts",
    "describe",
    "markdown_html",
    "read_static",
    "slug",
]
