"""Turning the store into findings: apply ``prepare_results``, then every analysis plugin.

An analysis that raises is reported by name and skipped; the site still builds. Analyses run
side by side on every core (:mod:`benchsite.jobs`), so one must not rely on another's side
effects; an analysis that builds on another calls it (and caches per frame, as the built-in
helpers do). Analyses of one ``group`` run one after another in one process, so that what they
cache in common is computed once.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from benchsite import registry
from benchsite.errors import describe_exception
from benchsite.jobs import run_jobs
from benchsite.plugin_manager import Plugins
from benchsite.records import Finding
from benchsite.specs import chart_spec


@dataclass
class Analysed:
    """The prepared results, every finding, and the analyses that failed (name → error)."""

    results: pd.DataFrame
    findings: list[Finding]
    errors: dict[str, str] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[Finding]:
        return [finding for finding in self.findings if finding.kind == kind]


def prepare_results(plugins: Plugins, results: pd.DataFrame) -> pd.DataFrame:
    """Pass the results through every ``prepare_results`` implementation, in pluggy's call
    order, each getting what the previous one returned; one that raises is reported and
    skipped (:meth:`benchsite.plugin_manager.Plugins.call_each`)."""
    arguments = {"results": results}
    for _, changed in plugins.call_each("prepare_results", arguments):
        arguments["results"] = changed
    return arguments["results"]


def analyse(plugins: Plugins, results: pd.DataFrame) -> Analysed:
    """Prepare the results and run every registered analysis on them, side by side
    (:func:`benchsite.jobs.run_jobs`); findings come in the order the analyses are registered."""
    analysed = Analysed(prepare_results(plugins, results), [])  # hook: prepare_results
    analyses = analysis_jobs(plugins, analysed.results)
    analyses.collect(analysed, run_jobs(analyses.jobs))
    return analysed


AnalysisOutput = tuple[list[Finding], str | None]  # an analysis' findings, or why it failed
Analyze = Callable[[pd.DataFrame], list[Finding]]


@dataclass(frozen=True)
class AnalysisJobs:
    """The jobs that run every analysis: job ``i`` runs the analyses ``names[i]``, one after
    another, and returns their outputs in that order. The first ``groups`` jobs run the groups
    (:class:`benchsite.records.Analysis` ``group``): they run several analyses, so they are
    likely the longest jobs, which are best started first. ``order`` is every analysis' name as
    registered."""

    names: list[tuple[str, ...]]
    jobs: list[Callable[[], list[AnalysisOutput]]]
    groups: int
    order: list[str]

    def collect(self, analysed: Analysed, outputs: list[list[AnalysisOutput]]) -> None:
        """Add the jobs' outputs to ``analysed``, in the order the analyses are registered."""
        by_name = {
            name: output
            for names, job_outputs in zip(self.names, outputs, strict=True)
            for name, output in zip(names, job_outputs, strict=True)
        }
        for name in self.order:
            findings, error = by_name[name]
            analysed.findings.extend(findings)
            if error is not None:
                analysed.errors[name] = error


def analysis_jobs(plugins: Plugins, results: pd.DataFrame) -> AnalysisJobs:
    """The jobs that run every registered analysis (hook: register_analyses): one per group,
    then one per analysis without a group."""
    registered = registry.analyses(plugins)
    members: dict[tuple[bool, str], list[tuple[str, Analyze]]] = {}
    for name, reg in registered.items():
        key = (False, reg.item.group) if reg.item.group else (True, name)
        members.setdefault(key, []).append((name, reg.item.analyze))
    ordered = sorted(members.items(), key=lambda item: item[0][0])  # stable: groups first
    return AnalysisJobs(
        names=[tuple(name for name, _ in group) for _, group in ordered],
        jobs=[
            functools.partial(_run_each, [analyze for _, analyze in group], results)
            for _, group in ordered
        ],
        groups=sum(not alone for alone, _ in members),
        order=list(registered),
    )


def _run_each(analyses: list[Analyze], results: pd.DataFrame) -> list[AnalysisOutput]:
    return [_run(analyze, results) for analyze in analyses]


def _run(analyze: Analyze, results: pd.DataFrame) -> AnalysisOutput:
    """One analysis' findings, their charts made into specs here, in the worker (see
    :mod:`benchsite.specs`); or why it failed."""
    try:
        return [_with_spec(finding) for finding in analyze(results)], None
    except Exception as exc:  # noqa: BLE001 - one broken analysis must not stop the site
        return [], describe_exception(exc)


def _with_spec(finding: Finding) -> Finding:
    if finding.chart is None:
        return finding
    return dataclasses.replace(finding, chart=chart_spec(finding.chart))
