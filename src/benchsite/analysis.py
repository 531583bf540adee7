"""Turning the store into findings: apply ``prepare_results``, then every analysis plugin.

An analysis that raises is reported by name and skipped; the site still builds. Analyses run
side by side on every core (:mod:`benchsite.jobs`), so one must not rely on another's side
effects; an analysis that builds on another calls it (and caches per frame, as the built-in
helpers do).
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
    """Pass the results through every ``prepare_results`` implementation, in order."""
    for impl in plugins.hook.prepare_results.get_hookimpls():
        changed = impl.function(results=results)
        if changed is not None:
            results = changed
    return results


def analyse(plugins: Plugins, results: pd.DataFrame) -> Analysed:
    """Prepare the results and run every registered analysis on them, side by side
    (:func:`benchsite.jobs.run_jobs`); findings come in the order the analyses are registered."""
    analysed = Analysed(prepare_results(plugins, results), [])  # hook: prepare_results
    jobs = analysis_jobs(plugins, analysed.results)
    collect(analysed, list(jobs), run_jobs(list(jobs.values())))
    return analysed


AnalysisOutput = tuple[list[Finding], str | None]  # an analysis' findings, or why it failed


def analysis_jobs(
    plugins: Plugins, results: pd.DataFrame
) -> dict[str, Callable[[], AnalysisOutput]]:
    """One job per registered analysis (hook: register_analyses), by name: each returns its
    findings and, when it failed, why."""
    return {
        name: functools.partial(_run, reg.item.analyze, results)
        for name, reg in registry.analyses(plugins).items()
    }


def collect(analysed: Analysed, names: list[str], outputs: list[AnalysisOutput]) -> None:
    """Add the analyses' outputs (in the order of ``names``) to ``analysed``."""
    for name, (findings, error) in zip(names, outputs, strict=True):
        analysed.findings.extend(findings)
        if error is not None:
            analysed.errors[name] = error


def _run(analyze: Callable[[pd.DataFrame], list[Finding]], results: pd.DataFrame) -> AnalysisOutput:
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
