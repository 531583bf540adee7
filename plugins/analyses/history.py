"""Did anything change since last time? Each host's newest run against the run before it.

The verdicts are :mod:`benchsite.tables.compare`'s, the one definition of a change between runs
that the Runs pages and ``benchsite compare`` use too: the NEW/BASE median-time ratio with its
95% interval from a moving-block bootstrap of both runs' samples (valid for correlated
samples); a case is a regression when the interval lies above 1 and the median moved by more
than 5%, an improvement when it lies below 1 and the median moved by more than 5% the other
way. A report run on a schedule so lists what really changed, with its history; a change that
comes with a new device fingerprint (another driver, PyTorch build or device) says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.charts import line_chart
from benchsite.toolkit.findings import case_text, device_label, finding, percent

if TYPE_CHECKING:
    from benchsite.tables import Tables

CASE = ["host", "device", "case_key"]


@dataclass(frozen=True)
class Change:
    """One case of a host's newest run that moved against the run before: ``change`` is the
    relative change of the median time (+ = slower) and ``low``–``high`` its 95% interval;
    ``verdict`` is ``regression`` or ``improvement``."""

    host: str
    device: str
    workload: str
    case: str
    change: float
    low: float
    high: float
    verdict: str
    same_hardware: bool
    history: tuple[tuple[str, float], ...]  # (run id, median s) of every run, oldest first
    evidence: tuple[str, ...]


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="history",
            description="Each host's newest run vs the run before: regressions and improvements.",
            analyze=history_findings,
        )
    ]


def history_findings(tables: Tables) -> list[Finding]:
    newest = newest_runs(tables)
    if newest.empty:
        return []
    found = changes(tables, newest)
    return [_summary(newest, found, compared_rows(tables, newest))] + [
        _change_finding(c) for c in found
    ]


def compared_rows(tables: Tables, newest: pd.DataFrame) -> pd.Series:
    """The row ids of the newest runs' cases that the run before measured too: the cases the
    summary counts (:attr:`benchsite.tables.compare.RunComparison.matched`)."""
    matched = tables.run_comparison.matched
    return matched.loc[matched["run_id"].isin(newest["run_id"].astype(str)), "row_id"]


def newest_runs(tables: Tables) -> pd.DataFrame:
    """Each host's newest run that has a run before it (:attr:`Tables.run_changes` rows)."""
    runs = tables.run_changes
    return runs[runs["newest"].to_numpy(bool)]


def changes(tables: Tables, newest: pd.DataFrame | None = None) -> list[Change]:
    """The regressions and improvements of each host's newest run (``newest``: its
    :func:`newest_runs`, worked out here when not given), slowest first."""
    runs = newest_runs(tables) if newest is None else newest
    moved = tables.case_changes
    moved = moved[
        moved["run_new"].isin(set(runs["run_id"].astype(str))) & (moved["verdict"] != "unchanged")
    ]
    if moved.empty:
        return []
    rows = tables.rows.set_index("row_id", drop=False)
    history = _history(tables, rows.loc[moved["row_new"]])
    found = []
    for case in moved.itertuples():
        head = rows.loc[case.row_new]
        runs = history[(head["host"], head["device"], head["case_key"])]
        found.append(
            Change(
                host=str(head["host"]),
                device=device_label(head),
                workload=case.workload,
                case=case_text(head["p"]),
                change=case.ratio - 1,
                low=case.low - 1,
                high=case.high - 1,
                verdict=case.verdict,
                same_hardware=bool(case.same_hardware),
                history=tuple((run, median) for run, median, _ in runs),
                evidence=tuple(row_id for _, _, row_id in runs),
            )
        )
    return found


def _history(tables: Tables, heads: pd.DataFrame) -> dict[tuple, list[tuple[str, float, str]]]:
    """(run id, median s, row id) of every ok run of each case in ``heads``, oldest first."""
    ok = tables.rows[tables.rows["ok"].to_numpy(bool)]
    wanted = pd.MultiIndex.from_frame(heads[CASE].astype(str))
    keys = pd.MultiIndex.from_frame(ok[CASE].astype(str))
    ok = ok[keys.isin(wanted)].sort_values("timestamp", kind="stable")
    found: dict[tuple, list[tuple[str, float, str]]] = {}
    for row in ok.itertuples():
        found.setdefault((str(row.host), str(row.device), str(row.case_key)), []).append(
            (str(row.run_id), float(row.median_s), str(row.row_id))
        )
    return found


def _summary(newest: pd.DataFrame, found: list[Change], evidence: pd.Series) -> Finding:
    """``evidence``: the rows of the hosts' newest runs."""
    from benchsite.tables import (
        REGRESSION,  # the tables load with a build, not with `benchsite run`
    )

    worse = [c for c in found if c.verdict == "regression"]
    better = [c for c in found if c.verdict == "improvement"]
    cases, hosts = int(newest["cases"].sum()), len(newest)
    answer = (
        f"Of {cases} cases measured in both the newest run and the run before it "
        f"({'on ' + str(newest['host'].iloc[0]) if hosts == 1 else f'on {hosts} hosts'}), "
        f"{len(worse)} got slower and {len(better)} faster by more than "
        f"{percent(REGRESSION)}; the rest are unchanged within noise."
    )
    return finding(
        "history",
        ["summary"],
        "What changed since the previous run",
        answer,
        explanation=(
            "A case changed when the 95% interval of its new/previous median-time ratio (a "
            "moving-block bootstrap of both runs' samples, as on the Runs and Compare pages) "
            f"leaves out 1 and the median moved by more than {percent(REGRESSION)}."
        ),
        numbers={"cases": cases, "regressions": len(worse), "improvements": len(better)},
        evidence=evidence,
        strength="strong" if cases >= 5 else "moderate",
    )


def _change_finding(c: Change) -> Finding:
    slower = c.verdict == "regression"
    word = "slower" if slower else "faster"
    data = pd.DataFrame(
        [(i + 1, median * 1e3) for i, (_, median) in enumerate(c.history)],
        columns=["run", "median_ms"],
    )
    low, high = sorted((abs(c.low), abs(c.high)))
    hardware = (
        ""
        if c.same_hardware
        else (
            " The device's fingerprint changed between the two runs (another driver, PyTorch "
            "build or device): the change may come from that."
        )
    )
    return finding(
        "history",
        [c.verdict, c.host, c.device, c.workload, c.case],
        f"{c.verdict.capitalize()}: {c.workload} ({c.case}) on the {c.device}",
        f"In the newest run on {c.host}, {c.workload} ({c.case}) on the {c.device} is "
        f"{percent(abs(c.change))} {word} than in the run before (95% interval "
        f"{percent(low)} to {percent(high)}).{hardware}",
        explanation="Median per run, oldest first: "
        + ", ".join(f"{median * 1e3:.3g} ms" for _, median in c.history)
        + ".",
        numbers={"change": c.change, "low": c.low, "high": c.high, "runs": len(c.history)},
        evidence=c.evidence,
        scope={"hosts": [c.host], "devices": [c.device], "workloads": [c.workload]},
        strength="strong" if c.same_hardware else "moderate",
        chart=line_chart(data, "run", "median_ms", "Median time per run", log_x=False),
        workload=c.workload,
    )
