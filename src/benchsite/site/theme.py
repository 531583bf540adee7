"""The Jinja environment every page renders with: the default theme, a user's overrides, and the
site's filters.

Templates are looked up first in the user's ``--templates`` folder, then in the ``templates/``
folder of each plugin that has one next to its module (:meth:`Plugins.template_folders`), then
in the default theme (the ``benchsite.templates`` package). The default theme is also reachable under the prefix
``default:``, so a user's ``base.html`` can say ``{% extends "default:base.html" %}`` and change
one block. Autoescaping is on for every template: text from plugins and results is always
escaped; Markdown goes through :func:`benchsite.site.sanitize.markdown_html`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import jinja2

from benchsite.errors import BenchsiteError
from benchsite.site.sanitize import markdown_html
from benchsite.site.views import link_items
from benchsite.units import (
    format_bytes,
    format_count,
    format_number,
    format_percent,
    format_ratio,
    format_seconds,
    plural,
)

DEFAULT_THEME = "benchsite.templates"


def template_loader(
    templates: Path | None, plugin_folders: Sequence[Path] = ()
) -> jinja2.BaseLoader:
    """User folder, plugins' folders, then the default theme; ``default:<name>`` always means
    the default theme."""
    default = jinja2.PackageLoader(DEFAULT_THEME, "")
    prefixed = jinja2.PrefixLoader({"default": default}, delimiter=":")
    folders = [str(folder) for folder in plugin_folders]
    if templates is not None:
        if not Path(templates).is_dir():
            raise BenchsiteError(
                f"--templates {templates} is not a folder: pass a folder of templates"
            )
        folders.insert(0, str(templates))
    return jinja2.ChoiceLoader([jinja2.FileSystemLoader(folders), default, prefixed])


def get_template(env: jinja2.Environment, name: str) -> jinja2.Template:
    """``env.get_template(name)``; a template not found says where it was looked for."""
    try:
        return env.get_template(name)
    except jinja2.TemplateNotFound:
        loaders = getattr(env.loader, "loaders", [])
        folders = [path for loader in loaders for path in getattr(loader, "searchpath", [])]
        where = f"neither in {', '.join(folders)} nor" if folders else "not"
        raise jinja2.TemplateNotFound(
            name,
            f"template {name} is {where} in the default theme: a plugin's own templates go "
            "in a templates/ folder beside its module, shipped as package data when installed "
            "(docs/plugins.md)",
        ) from None


def make_environment(
    templates: Path | None = None, plugin_folders: Sequence[Path] = ()
) -> jinja2.Environment:
    """The environment with the site's filters; plugins change it in ``prepare_jinja_env``."""
    env = jinja2.Environment(
        loader=template_loader(templates, plugin_folders),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # a build's templates do not change: no stat per render (~12,000)
    )
    env.filters.update(
        seconds=format_seconds,
        number=format_number,
        count=format_count,
        bytes=format_bytes,
        percent=format_percent,
        plural=plural,
        times=format_times,
        markdown=markdown_html,
        date=format_date,
        link_items=link_items,
    )
    return env


def format_times(value: float | None) -> str:
    """A speedup factor: ``12.3×``."""
    return format_ratio(value)


def format_date(value: datetime | None, with_time: bool = True) -> str:
    if value is None:
        return "–"
    return f"{value:%Y-%m-%d %H:%M} UTC" if with_time else f"{value:%Y-%m-%d}"


def read_static(env: jinja2.Environment, name: str) -> str:
    """A theme file (CSS, JS) as text, from the user's folder if it overrides it."""
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, name)
    return source
