"""Turning the store into findings: apply ``prepare_results``, then every analysis plugin.

An analysis that raises is reported by name and skipped; the site still builds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from benchsite import registry
from benchsite.errors import describe_exception
from benchsite.plugin_manager import Plugins
from benchsite.records import Finding


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
    """Prepare the results and run every registered analysis on them."""
    results = prepare_results(plugins, results)  # hook: prepare_results
    analysed = Analysed(results, [])
    for name, registered in registry.analyses(plugins).items():  # hook: register_analyses
        try:
            analysed.findings.extend(registered.item.analyze(results))
        except Exception as exc:  # noqa: BLE001 - one broken analysis must not stop the site
            analysed.errors[name] = describe_exception(exc)
    return analysed
