"""Every device in the store side by side: a store fed by several machines compares them
(this laptop's CPU against a datacenter GPU) on the cases they all ran.

For each workload, the devices (host + device) are compared on the cases every one of them
measured; each device's speed is the geometric mean, over those cases, of the fastest device's
time divided by its own (100% = the fastest in every case).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import case_text, device_labels, finding, percent

if TYPE_CHECKING:
    from benchsite.tables import Tables


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="hosts",
            description="Every device of every host side by side on their common cases.",
            analyze=host_findings,
        )
    ]


def host_findings(tables: Tables) -> list[Finding]:
    rows = tables.ok
    if rows.empty or rows["host"].nunique() < 2:
        return []
    who = zip(device_labels(rows), rows["host"], strict=True)
    rows = rows.assign(who=[f"{label} on {host}" for label, host in who])
    out = []
    for workload, group in rows.groupby("workload", sort=True):
        common = _common_cases(group)
        if common is not None:
            out.append(_finding(str(workload), group, common))
    return out


def _common_cases(group: pd.DataFrame) -> pd.DataFrame | None:
    """Median time per (case, device) over cases that every device measured, or ``None``."""
    table = group.pivot_table(index="case_key", columns="who", values="median_s", aggfunc="min")
    table = table.dropna()
    if table.empty or table.shape[1] < 2:
        return None
    return table


def _finding(workload: str, group: pd.DataFrame, common: pd.DataFrame) -> Finding:
    fastest = common.min(axis=1)
    scores = {
        who: math.exp(
            sum(math.log(f / t) for f, t in zip(fastest, common[who], strict=True)) / len(common)
        )
        for who in common.columns
    }
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    used = group[group["case_key"].isin(common.index) & group["who"].isin(common.columns)]
    cases = sorted({case_text(p) for p in used.drop_duplicates("case_key")["p"]})
    answer = (
        f"On the {workload} cases all {len(ranked)} devices ran ({'; '.join(cases)}), the "
        f"fastest is the {ranked[0][0]}; the slowest, the {ranked[-1][0]}, reaches "
        f"{percent(ranked[-1][1])} of its speed. Other cases can rank them differently."
    )
    return finding(
        "hosts",
        [workload],
        f"{workload}: every device side by side",
        answer,
        explanation="\n".join(f"- {who}: {percent(score)} of the fastest" for who, score in ranked),
        numbers={"relative_speed": dict(ranked), "common_cases": len(common)},
        evidence=used["row_id"],
        scope={
            "hosts": sorted(set(group["host"].astype(str))),
            "devices": list(scores),
            "workloads": [workload],
        },
        strength="moderate",
        workload=workload,
    )
