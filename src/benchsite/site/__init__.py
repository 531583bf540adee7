"""The static site: ``build_site`` renders the store into HTML pages, charts and data files.

Pages are plugins (``register_pages``); each page's ``render`` gets the :class:`Site` being built.
"""

from __future__ import annotations

from benchsite.site.build import BuildOptions, BuildReport, build_site
from benchsite.site.renderer import NavItem, Site

__all__ = ["BuildOptions", "BuildReport", "NavItem", "Site", "build_site"]
