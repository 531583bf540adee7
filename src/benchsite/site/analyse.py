"""Turning the store into findings: apply ``prepare_results``, compute the tables once, then run
every analysis plugin on them (in forked processes side by side, when the build asks for it).

An analysis' ``analyze`` is called with the arguments it names (as pluggy calls hooks):

- ``results``: the prepared results data frame (every row; the form every release accepts);
- ``tables``: the :class:`benchsite.tables.Tables` of this build — current, usable and suspect
  rows, speedups, crossovers, scaling curves — computed once and shared by every analysis;
- ``findings``: the findings of every analysis that does not take ``findings`` (those run
  first), for answers that build on other analyses (FAQ, claims, recommendations).

An analysis that raises is reported by name and its findings are left out; the build then fails
and publishes nothing, unless ``--keep-going`` (:func:`benchsite.site.build.check_failures`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from benchsite.errors import describe_exception
from benchsite.host import registry, validation
from benchsite.host.manager import Plugins
from benchsite.records import Finding, Flag
from benchsite.site.specs import chart_spec
from benchsite.tables import TABLE_GROUPS, Tables


@dataclass
class Analysed:
    """The prepared results, their tables, every finding, and the analyses that failed
    (name → error)."""

    results: pd.DataFrame
    findings: list[Finding]
    errors: dict[str, str] = field(default_factory=dict)
    tables: Tables | None = None

    def __post_init__(self) -> None:
        if self.tables is None:
            self.tables = Tables.of(self.results)

    def of_kind(self, kind: str) -> list[Finding]:
        return [finding for finding in self.findings if finding.kind == kind]


def prepare_results(plugins: Plugins, results: pd.DataFrame) -> pd.DataFrame:
    """Pass the results through every ``prepare_results`` implementation, in pluggy's call
    order, each getting what the previous one returned; one that raises is reported and
    skipped (:meth:`benchsite.host.manager.Plugins.call_each`)."""
    arguments = {"results": results}
    for _, changed in plugins.call_each("prepare_results", arguments):
        arguments["results"] = changed
    return arguments["results"]


def analyse(plugins: Plugins, results: pd.DataFrame, workers: int = 1) -> Analysed:
    """Prepare the results (hook: prepare_results), compute their tables, and run every
    registered analysis (hook: register_analyses): first those that take no ``findings``, then
    those that do; findings come in the order the analyses are registered.

    The tables learn what each validity flag means from the plugins (hook: register_flags).

    With ``workers`` > 1, the analyses of each of those two waves run side by side in that
    many processes forked from this one (analyses are independent; the tables they read are
    computed here first and inherited, not copied; only findings come back). Where processes
    cannot be forked, they run here."""
    prepared = prepare_results(plugins, results)
    flags = [entry.item for entry in registry.flags(plugins).values()]
    analysed = Analysed(prepared, [], tables=computed_tables(prepared, workers, flags))
    registered = {name: reg.item for name, reg in registry.analyses(plugins).items()}
    outputs: dict[str, tuple[list[Finding], str | None]] = {}
    for later in (False, True):
        earlier = [f for name in registered for f in outputs.get(name, ([], None))[0]]
        wave = {
            name: item
            for name, item in registered.items()
            if _wants(item.analyze, "findings") == later
        }
        outputs.update(
            zip(wave, run_wave(list(wave.values()), analysed, earlier, workers), strict=True)
        )
    for name in registered:
        found, error = outputs[name]
        analysed.findings.extend(found)
        if error is not None:
            analysed.errors[name] = error
    return analysed


_ADOPTED: dict[str, Any] = {}  # in a worker only: the tables it completes, what it analyses


def computed_tables(
    prepared: pd.DataFrame, workers: int = 1, flags: Iterable[Flag] | None = None
) -> Tables:
    """The tables of the prepared results with every table the built-in analyses and pages
    read worked out now (:meth:`Tables.computed`), once, before they fork. With ``workers``
    > 1, the groups of :data:`benchsite.tables.TABLE_GROUPS` after the first (the current
    rows, which all the others read) are worked out side by side in processes forked from this
    one, and only the tables come back. ``flags``: what the validity flags mean (default: the
    installed plugins' flags)."""
    from benchsite._infra.pool import forks, in_processes

    first, *groups = TABLE_GROUPS
    tables = Tables.of(prepared, flags)
    tables.compute(first)
    if workers <= 1 or not forks():
        return tables.computed()
    for made in in_processes(
        _table_group,
        groups,
        workers=min(workers, len(groups)),
        initializer=_adopt_tables,
        initargs=(tables,),
    ):
        tables.adopt(made)
    return tables


def _adopt_tables(tables: Tables) -> None:
    _ADOPTED.update(tables=tables)


def _table_group(names: tuple[str, ...]) -> dict[str, Any]:
    return _ADOPTED["tables"].compute(names)


def run_wave(
    items: list[Any], analysed: Analysed, earlier: list[Finding], workers: int
) -> list[tuple[list[Finding], str | None]]:
    """:func:`run_analysis` of each of ``items``, in forked processes when ``workers`` > 1."""
    from benchsite._infra.pool import forks, in_processes

    workers = min(workers, len(items))
    if workers <= 1 or not forks():
        return [run_analysis(item, analysed, earlier) for item in items]
    return in_processes(
        _run_nth,
        range(len(items)),
        workers=workers,
        initializer=_adopt,
        initargs=(items, analysed, earlier),
    )


def _adopt(items: list[Any], analysed: Analysed, earlier: list[Finding]) -> None:
    _ADOPTED.update(items=items, analysed=analysed, earlier=earlier)


def _run_nth(index: int) -> tuple[list[Finding], str | None]:
    return run_analysis(_ADOPTED["items"][index], _ADOPTED["analysed"], _ADOPTED["earlier"])


def run_analysis(
    item: Any, analysed: Analysed, findings: list[Finding]
) -> tuple[list[Finding], str | None]:
    """One analysis' findings (their charts made into specs), or why it failed."""
    given = {"results": analysed.results, "tables": analysed.tables, "findings": list(findings)}
    try:
        found = item.analyze(**arguments_for(item.analyze, given))
        return [_with_spec(finding) for finding in found], None
    except Exception as exc:  # noqa: BLE001 - one broken analysis must not stop the site
        return [], describe_exception(exc)


def arguments_for(analyze: Callable[..., Any], given: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments ``analyze`` names among
    :data:`benchsite.host.validation.ANALYSIS_ARGUMENTS`; an analysis whose one parameter has another
    name gets the results (the original ``analyze(results)`` form)."""
    names = validation.analysis_parameters(analyze)
    chosen = {name: given[name] for name in names if name in validation.ANALYSIS_ARGUMENTS}
    if not chosen and names:
        return {names[0]: given["results"]}
    return chosen


def _wants(analyze: Callable[..., Any], name: str) -> bool:
    return name in validation.analysis_parameters(analyze)


def _with_spec(finding: Finding) -> Finding:
    if finding.chart is None:
        return finding
    return dataclasses.replace(finding, chart=chart_spec(finding.chart))
