"""The whole plugin contract of benchsite: the markers and every hook, grouped by pipeline stage.

A plugin is a module (or object) with functions decorated by ``benchsite.hookimpl`` whose names
are hooks below. An implementation may take fewer arguments than the spec names: hooks evolve by
adding arguments only, so old plugins keep working. Built-in plugins (``benchsite.plugins``) use
exactly these hooks; the engine names no workload, device kind, collector, finding or page.

Plugins are found in three places: the built-ins, installed distributions that declare an entry
point in the group ``benchsite``, and modules or folders given with ``-p/--plugin``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import jinja2
    import pandas as pd

    from benchsite.records import Analysis, Collector, Device, Flag, Page, Workload

PROJECT = "benchsite"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# -- stage: discover devices ---------------------------------------------------------------------


@hookspec
def register_devices() -> list[Device]:
    """Return the devices of this machine that this plugin knows how to drive.

    When: once per run, in its process, before planning it; once in each case worker and each
    distributed rank, before its first case; once when listing devices.
    Returns: a list of :class:`benchsite.records.Device` (empty when the hardware is absent).
    Combining: the lists of every plugin are concatenated; two devices with the same ``name``
    are an error naming both plugins.
    Example::

        @hookimpl
        def register_devices():
            return [Device(name="cpu", kind="cpu", info={...}, fingerprint="...", timer=...)]

    Since: 0.1.
    """


# -- stage: plan what to measure -----------------------------------------------------------------


@hookspec
def register_workloads() -> list[Workload]:
    """Return the workloads this plugin provides.

    When: once per run, in its process, before planning it; once in each case worker and each
    distributed rank, before its first case; once per site build; once when listing workloads.
    Returns: a list of :class:`benchsite.records.Workload`.
    Combining: concatenated; two workloads with the same ``name`` are an error naming both
    plugins (workload names are part of the contract: the site and findings refer to them).
    Example::

        @hookimpl
        def register_workloads():
            return [Workload(name="saxpy", description="...", setup=setup_saxpy,
                             params={"size": [2**20, 2**24]}, quick={"size": [2**20]})]

    Since: 0.1.
    """


# -- stage: measure ------------------------------------------------------------------------------


@hookspec
def register_collectors() -> list[Collector]:
    """Return metric collectors to wrap around every measurement.

    When: once per run, in its process, before the first case (so that a problem is reported
    then); once in each case worker and each distributed rank, before its first case.
    Returns: a list of :class:`benchsite.records.Collector`; each one's ``start(device)`` is
    called before the timed samples of every case and the ``stop`` it returns right after.
    Combining: concatenated; duplicate names are an error naming both plugins. A collector that
    raises :class:`benchsite.records.CollectorUnavailable` is reported once and records nothing.
    Example::

        @hookimpl
        def register_collectors():
            return [Collector(name="wall", description="...", start=start_wall_clock)]

    Since: 0.1.
    """


# -- stage: analyse ------------------------------------------------------------------------------


@hookspec
def register_analyses() -> list[Analysis]:
    """Return analyses that turn the results into findings.

    When: once per site build, in the build's process, after the store is read and prepared.
    The analyses then run side by side in processes forked from the build, each ``analyze``
    in one of them (one after another in the build's process where processes cannot be forked
    or the build has one core): an analysis must not rely on another's side effects, and only
    its findings come back. ``analyze`` is called with the arguments it names: ``results`` (the whole
    prepared store as a data frame, :func:`benchsite.store.parts.read_results`), ``tables`` (the
    build's :class:`benchsite.tables.Tables`: current, usable and suspect rows, speedups with
    their intervals, crossovers, scaling curves — computed once, shared by all) and
    ``findings`` (the findings of every analysis that takes no ``findings``; those run first).
    ``analyze(results)`` with one argument of any name keeps working.
    Returns: a list of :class:`benchsite.records.Analysis`; each ``analyze`` returns
    :class:`benchsite.records.Finding` records. ``group`` is deprecated and ignored.
    Combining: concatenated; duplicate names are an error naming both plugins. An analysis that
    raises is reported, and the build publishes nothing (exit 1) unless ``--keep-going``.
    Example::

        @hookimpl
        def register_analyses():
            return [Analysis(name="speedup", description="...", analyze=speedup_findings)]

        def speedup_findings(tables):  # or (results), (tables, findings), ...
            return [...]

    Since: 0.1; ``tables`` and ``findings`` since 0.2.
    """


# -- stage: render the site ----------------------------------------------------------------------


@hookspec
def register_pages() -> list[Page]:
    """Return pages to add to the site.

    When: once per site build, in the build's process, after the analyses ran
    (``site.findings`` holds every finding).
    Pages may render side by side in worker processes forked from the build
    (:mod:`benchsite._infra.pool`): a page must not rely on another page's side effects; its
    files and the charts it embeds come back to the build. A page that raises fails the build
    (nothing is published) unless ``--keep-going``.
    Returns: a list of :class:`benchsite.records.Page`; ``render(site)`` gets the
    :class:`benchsite.site.Site` being built and returns rendered files.
    Combining: concatenated and ordered by ``Page.order``; duplicate names, or two pages with
    one ``path``, are an error naming both plugins. A page that raises is reported and
    ``benchsite build`` exits 1 (0 with ``--keep-going``). Templates in a ``templates/``
    folder next to the plugin's module are found by name (``site.render("mine.html", ...)``).
    Example::

        @hookimpl
        def register_pages():
            return [Page(name="notes", nav="Notes", render=render_notes)]

    Since: 0.1.
    """


@hookspec
def prepare_jinja_env(env: jinja2.Environment) -> None:
    """Change the Jinja environment before any page is rendered (add filters, globals, tests).

    When: once per site build, in the build's process, after the default filters are
    installed (page workers forked from it inherit the environment).
    Parameters: ``env``, the :class:`jinja2.Environment` every page renders with.
    Returns: nothing; change ``env`` in place. Every implementation is called.
    Example::

        @hookimpl
        def prepare_jinja_env(env):
            env.filters["shout"] = str.upper

    Since: 0.1.
    """


@hookspec
def prepare_results(results: pd.DataFrame) -> pd.DataFrame | None:
    """Change or extend the results data frame before analyses and pages see it.

    When: once per site build, in the build's process, right after the store is read.
    Parameters: ``results``, the data frame of every stored row.
    Returns: a new data frame to use instead, or ``None`` to keep it (changes in place count).
    Implementations run one after another, each seeing the previous one's output, in pluggy's
    order: newest registered first — ``-p`` plugins, then entry-point plugins, then the
    built-ins (so the built-in validity flags are not there yet); ``@hookimpl(trylast=True)``
    runs yours after the others, ``tryfirst=True`` before them.
    Example::

        @hookimpl
        def prepare_results(results):
            return results[results["host"] != "scratch"]

    Since: 0.1.
    """


@hookspec
def register_flags() -> list[Flag]:
    """Return what the validity flags this plugin sets mean.

    When: once per site build, with the ``prepare_results`` hooks, before the tables are
    worked out (and when :meth:`benchsite.tables.Tables.of` is given no flags).
    Returns: a list of :class:`benchsite.records.Flag`, one per code the plugin's
    ``prepare_results`` puts in the ``flags`` column: ``suspect`` keeps a number out of every
    headline, ``not_a_peak`` out of a device's peak. A code no plugin registers qualifies a
    number without disqualifying it.
    Combining: concatenated; two flags with the same ``name`` are an error naming both plugins.
    Example::

        @hookimpl
        def register_flags():
            return [Flag(name="noisy", description="samples spread more than 10%",
                         suspect=True)]

    Since: 0.2.
    """


HOOK_NAMES: tuple[str, ...] = tuple(
    name for name, value in dict(globals()).items() if hasattr(value, "benchsite_spec")
)

__all__ = ["HOOK_NAMES", "hookimpl", "hookspec"]
