"""Does my CPU use all its cores? Speedup and parallel efficiency against thread count.

From the ``cpu-threads`` workload (each op at 1, 2, 4, … threads): speedup(t) = T(1) / T(t)
and parallel efficiency = speedup / t. When the speedup at the most threads stays below half
the thread count, the CPU does not scale and the finding says the likely reason: the process
may use fewer cores than the machine has (CPU affinity or a container's cgroup quota), the
op is memory-bound (few FLOPs per byte), or the work per thread is too small.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from benchsite.plugins._charts import line_chart
from benchsite.plugins._findings import (
    case_text,
    finding,
    info_value,
    keep,
    latest_ok,
    percent,
    ratio,
)

from benchsite import Analysis, Finding, hookimpl

WORKLOAD = "cpu-threads"
SCALING_EFFICIENCY = 0.5
MEMORY_BOUND_FLOP_PER_BYTE = 4.0


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="cpu-threads",
            description="CPU thread scaling: speedup and efficiency vs threads, and why not.",
            analyze=cpu_thread_findings,
        )
    ]


def thread_curves(results: pd.DataFrame) -> list[pd.DataFrame]:
    """One frame per (host, op, other params): threads, median, speedup, efficiency, rows."""
    rows = latest_ok(results)
    if rows.empty:
        return []
    rows = rows[(rows["workload"] == WORKLOAD) & (rows["device_kind"] == "cpu")]
    rows = keep(rows, "p", lambda p: "threads" in p)
    if rows.empty:
        return []
    rows = rows.assign(
        threads_param=rows["p"].map(lambda p: int(p["threads"])),
        series=rows["p"].map(lambda p: case_text(p, skip=["threads"])),
    )
    curves = []
    for _, curve in rows.groupby(["host", "series"], sort=True):
        curve = curve.sort_values("threads_param")
        if curve["threads_param"].iloc[0] == 1 and len(curve) >= 2:
            base = float(curve["median_s"].iloc[0])
            speedup = base / curve["median_s"].astype(float)
            curves.append(
                curve.assign(speedup=speedup, efficiency=speedup / curve["threads_param"])
            )
    return curves


def cpu_thread_findings(results: pd.DataFrame) -> list[Finding]:
    return [curve_finding(curve) for curve in thread_curves(results)]


def scales(curve: pd.DataFrame) -> bool:
    return float(curve["efficiency"].iloc[-1]) >= SCALING_EFFICIENCY


def curve_finding(curve: pd.DataFrame) -> Finding:
    top = curve.iloc[-1]
    best = curve.loc[curve["speedup"].idxmax()]
    threads = int(top.threads_param)
    answer = (
        f"On {top.host}, {top.series} runs {ratio(top.speedup)} faster on {threads} threads "
        f"than on 1 (parallel efficiency {percent(top.efficiency)})"
    )
    if scales(curve):
        answer += ": it scales with the cores."
        reason = ""
    else:
        reason = why_not_scaling(top, best)
        answer += f": it does not scale. Likely reason: {reason}"
    data = curve[["threads_param", "speedup"]].rename(columns={"threads_param": "threads"})
    return finding(
        "cpu-threads",
        [top.host, top.series],
        f"CPU thread scaling: {top.series}",
        answer,
        explanation=_table(curve),
        numbers={
            "threads": threads,
            "speedup": float(top.speedup),
            "efficiency": float(top.efficiency),
            "best_threads": int(best.threads_param),
            "best_speedup": float(best.speedup),
            "scales": scales(curve),
            "reason": reason or None,
            **_cores(top),
        },
        evidence=curve["row_id"],
        scope={
            "hosts": [str(top.host)],
            "devices": [str(top.device_model)],
            "workloads": [WORKLOAD],
        },
        strength="moderate" if len(curve) >= 3 else "weak",
        chart=line_chart(data, "threads", "speedup", "Speedup vs threads", log_x=False),
        workload=WORKLOAD,
    )


def _cores(row: Any) -> dict[str, Any]:
    keys = ("logical_cpus", "affinity_cpus", "cgroup_cpu_quota", "usable_cpus")
    return {key: info_value(row, key) for key in keys}


def why_not_scaling(top: Any, best: Any) -> str:
    """The most likely reason a thread curve is flat, from what the device info says."""
    cores = _cores(top)
    logical, affinity, quota = (
        cores["logical_cpus"],
        cores["affinity_cpus"],
        cores["cgroup_cpu_quota"],
    )
    if quota and logical and quota < logical:
        return (
            f"the container's cgroup CPU quota allows {quota:g} CPUs of the {logical} the "
            f"machine has; threads beyond {quota:g} only wait their turn."
        )
    if affinity and logical and affinity < logical:
        return f"CPU affinity lets this process run on {affinity} of the {logical} CPUs."
    flops, size = top.flops, top.bytes
    if flops and size and flops / size < MEMORY_BOUND_FLOP_PER_BYTE:
        return (
            f"the op is memory-bound ({flops / size:.1f} FLOPs per byte moved): memory "
            "bandwidth, shared by all cores, is the limit, not arithmetic."
        )
    return (
        f"the best speedup ({ratio(best.speedup)}) comes at {int(best.threads_param)} threads; "
        "beyond that the work per thread is too small to pay for synchronizing them, or the "
        "cores share one memory bus (hyper-threads count as cores here)."
    )


def _table(curve: pd.DataFrame) -> str:
    lines = ["| threads | median time | speedup | efficiency |", "|---|---|---|---|"]
    for row in curve.itertuples():
        lines.append(
            f"| {row.threads_param} | {row.median_s * 1e3:.3g} ms | {ratio(row.speedup)} | "
            f"{percent(row.efficiency)} |"
        )
    return "\n".join(lines)
