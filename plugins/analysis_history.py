"""Did anything change since last time? The newest run of each case against its earlier runs.

Only like is compared with like: the same host, device, case and device fingerprint (same
model, driver, PyTorch build...). The newest run's samples are compared with the pooled samples
of the earlier runs by a Mann-Whitney U test; a change is reported when it is both
statistically clear (p < 0.01) and large enough to matter (the median moved by at least 5%),
so a report run on a schedule lists what really changed, with its history.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from benchsite.plugins._charts import line_chart
from benchsite.plugins._findings import (
    case_text,
    device_label,
    finding,
    ok_rows,
    per_frame,
    percent,
    samples,
)
from benchsite.plugins._mannwhitney import mann_whitney_u

from benchsite import Analysis, Finding, hookimpl

ALPHA = 0.01
MIN_EFFECT = 0.05
KEYS = ["host", "device", "case_key", "fingerprint"]


@dataclass(frozen=True)
class Change:
    """The newest run of one case against the earlier ones: ``change`` is the relative change
    of the median time (+ = slower); ``verdict`` regression, improvement or unchanged."""

    host: str
    device: str
    workload: str
    case: str
    change: float
    p_value: float
    verdict: str
    runs: int
    history: tuple[tuple[str, float], ...]  # (run id, median s), oldest first
    evidence: tuple[str, ...]


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="history",
            description="Newest run vs earlier runs per case: regressions and improvements.",
            analyze=history_findings,
        )
    ]


def changes(results: pd.DataFrame) -> list[Change]:
    return per_frame("history", results, lambda: _changes(results))


def _changes(results: pd.DataFrame) -> list[Change]:
    rows = ok_rows(results)
    out = []
    for _, group in rows.groupby(KEYS, observed=True, sort=True) if not rows.empty else []:
        if group["run_id"].nunique() >= 2:
            out.append(compare_runs(group.sort_values("timestamp", kind="stable")))
    return out


def compare_runs(group: pd.DataFrame) -> Change:
    """Compare the newest run in ``group`` (one case, oldest first) with the earlier ones."""
    newest_run = group["run_id"].iloc[-1]
    new, old = group[group["run_id"] == newest_run], group[group["run_id"] != newest_run]
    new_samples = [s for row in new.itertuples() for s in samples(row)]
    old_samples = [s for row in old.itertuples() for s in samples(row)]
    new_median = float(pd.Series(new_samples).median())
    old_median = float(pd.Series(old_samples).median())
    change = new_median / old_median - 1
    _, p_value = mann_whitney_u(new_samples, old_samples)
    verdict = "unchanged"
    if p_value < ALPHA and abs(change) >= MIN_EFFECT:
        verdict = "regression" if change > 0 else "improvement"
    head = group.iloc[-1]
    return Change(
        host=str(head.host), device=device_label(head), workload=str(head.workload),
        case=case_text(head.p), change=change, p_value=p_value, verdict=verdict,
        runs=group["run_id"].nunique(),
        history=tuple((str(r.run_id), float(r.median_s)) for r in group.itertuples()),
        evidence=tuple(group["row_id"]),
    )  # fmt: skip


def history_findings(results: pd.DataFrame) -> list[Finding]:
    found = changes(results)
    if not found:
        return []
    findings = [_summary(found)]
    findings += [_change_finding(c) for c in found if c.verdict != "unchanged"]
    return findings


def _summary(found: list[Change]) -> Finding:
    worse = [c for c in found if c.verdict == "regression"]
    better = [c for c in found if c.verdict == "improvement"]
    answer = (
        f"Of {len(found)} cases measured in more than one run, the newest run is slower in "
        f"{len(worse)} and faster in {len(better)}; the rest are unchanged within noise."
    )
    return finding(
        "history",
        ["summary"],
        "What changed since the previous runs",
        answer,
        explanation=(
            f"A change counts when a Mann-Whitney U test on the samples gives p < {ALPHA} and "
            f"the median moved by at least {percent(MIN_EFFECT)}. Only runs with the same "
            "device fingerprint (model, driver, PyTorch build) are compared."
        ),
        numbers={"cases": len(found), "regressions": len(worse), "improvements": len(better)},
        evidence=[row for c in found for row in c.evidence[-1:]],
        strength="strong" if len(found) >= 5 else "moderate",
    )


def _change_finding(c: Change) -> Finding:
    slower = c.verdict == "regression"
    word = "slower" if slower else "faster"
    data = pd.DataFrame(
        [(i + 1, median * 1e3) for i, (_, median) in enumerate(c.history)],
        columns=["run", "median_ms"],
    )
    return finding(
        "history",
        [c.verdict, c.host, c.device, c.workload, c.case],
        f"{c.verdict.capitalize()}: {c.workload} ({c.case}) on the {c.device}",
        f"In the newest run on {c.host}, {c.workload} ({c.case}) on the {c.device} is "
        f"{percent(abs(c.change))} {word} than in the {c.runs - 1} earlier run(s) "
        f"(Mann-Whitney p = {c.p_value:.2g}).",
        explanation="Median per run, oldest first: "
        + ", ".join(f"{median * 1e3:.3g} ms" for _, median in c.history) + ".",
        numbers={"change": c.change, "p_value": c.p_value, "runs": c.runs},
        evidence=c.evidence,
        scope={"hosts": [c.host], "devices": [c.device], "workloads": [c.workload]},
        strength="strong" if c.p_value < ALPHA / 10 else "moderate",
        chart=line_chart(data, "run", "median_ms", "Median time per run", log_x=False),
        workload=c.workload,
    )
