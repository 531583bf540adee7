"""Does my CPU use all its cores? Speedup and parallel efficiency against thread count.

From the ``cpu-threads`` workload (each op at 1, 2, 4, … threads), along the thread scaling
curve of :meth:`benchsite.tables.Tables.scaling`: speedup(t) = T(1) / T(t) and parallel
efficiency = speedup / t (a point above it by far is suspect there, and said so here). When the speedup at the most threads stays below half
the thread count, the CPU does not scale and the finding says the likely reason: the process
may use fewer cores than the machine has (CPU affinity or a container's cgroup quota), the
op is memory-bound (few FLOPs per byte), or the work per thread is too small. Where the CPU
does not scale, a recommendation says how many threads to use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.charts import line_chart
from benchsite.toolkit.findings import (
    answered,
    case_text,
    finding,
    info_value,
    percent,
    ratio,
    reasons_text,
    seconds_text,
)
from benchsite.units import plural

if TYPE_CHECKING:
    from benchsite.tables import Tables

WORKLOAD = "cpu-threads"
SCALING_EFFICIENCY = 0.5
PLATEAU = 0.05  # threads within this share of the fastest point add nothing worth advising
SPEEDS_UP = 1.5  # a gain on all threads from which an op is said to speed up
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


def thread_curves(tables: Tables) -> list[pd.DataFrame]:
    """One frame per (host, op, other params) of the thread scaling curve, starting at one
    thread: threads_param, median_s, speedup, efficiency, suspect, reasons and the row's
    columns (device info, FLOPs, bytes)."""
    curve = tables.scaling("threads")
    curve = curve[(curve["workload"] == WORKLOAD) & (curve["device_kind"] == "cpu")]
    if curve.empty:
        return []
    extra = tables.ok.set_index("row_id")[["p", "dev", "device_model", "flops", "bytes"]]
    rows = curve.join(extra, on="row_id").assign(
        threads_param=lambda f: f["x"].astype(int), speedup=lambda f: f["gain"]
    )
    rows["series"] = rows["p"].map(lambda p: case_text(p, skip=["threads"]))
    curves = []
    for _, one in rows.groupby(["host", "variant"], sort=True):
        if one["threads_param"].iloc[0] == 1 and len(one) >= 2:
            curves.append(one.reset_index(drop=True))
    return sorted(curves, key=lambda c: (c["host"].iloc[0], c["series"].iloc[0]))


def cpu_thread_findings(tables: Tables) -> list[Finding]:
    curves = thread_curves(tables)
    advice = [thread_advice(curve) for curve in curves if not scales(curve)]
    twins = [found for curve in curves if (found := same_op_elsewhere(tables, curve))]
    return [curve_finding(curve) for curve in curves] + advice + twins


# each op of cpu-threads is the case of another workload at one thread count: the two must agree
SAME_CASE = {
    "matmul": ("matmul", {"size": 1024, "precision": "fp32"}),
    "mlp-step": ("mlp-train", {"batch": 256, "precision": "fp32"}),
}
AGREE = 0.05  # medians further apart than this get a finding that shows why


def same_op_elsewhere(tables: Tables, curve: pd.DataFrame) -> Finding | None:
    """Where an op at the most threads was also measured by its own workload on the same CPU
    with as many threads, and the two medians differ by more than :data:`AGREE`: both rows,
    and how differently they were timed (samples, calls per sample, warm-up), so that a
    reader sees why one site shows two times for one computation."""
    top = curve.iloc[-1]
    workload, params = SAME_CASE.get(str(top.p.get("op")), (None, None))
    rows = tables.ok.set_index("row_id", drop=False)
    here = rows.loc[str(top.row_id)]
    twin = rows[
        (rows["host"] == top.host)
        & (rows["device"] == here.device)
        & (rows["workload"] == workload)
        & (rows["threads"] == here.threads)
        & rows["p"].map(lambda p: p == params).to_numpy(bool)
    ]
    if twin.empty:
        return None
    there = twin.iloc[0]
    apart = float(here.median_s) / float(there.median_s) - 1
    if abs(apart) <= AGREE:
        return None
    return _twin_finding(here, there, apart)


def _twin_finding(here: Any, there: Any, apart: float) -> Finding:
    threads = plural(int(here.threads), "thread")
    overlap = here.ci_low_s <= there.ci_high_s and there.ci_low_s <= here.ci_high_s
    answer = (
        f"The same {here.p.get('op')} on {threads} of {here.host}'s CPU took "
        f"{seconds_text(there.median_s)} in the {there.workload} workload and "
        f"{seconds_text(here.median_s)} in {WORKLOAD} ({percent(abs(apart))} "
        f"{'slower' if apart > 0 else 'faster'} here; the 95% intervals "
        f"{'overlap' if overlap else 'do not overlap'}). The two were timed differently: "
        f"{_timing(there)} there, {_timing(here)} here; their fastest samples are "
        f"{seconds_text(there.min_s)} and {seconds_text(here.min_s)}."
    )
    return finding(
        "cpu-threads",
        [here.host, here.p.get("op"), "twin"],
        f"{here.p.get('op')}: {WORKLOAD} and {there.workload} disagree by {percent(abs(apart))}",
        answer,
        explanation=(
            "A multi-threaded CPU op is sensitive to how it is sampled: with one call per "
            "sample the thread pool may go idle between samples and wake for each call. "
            "Compare cases within one workload; across workloads, allow for a difference "
            "of this size."
        ),
        numbers={"apart": apart, "median_s": [float(there.median_s), float(here.median_s)]},
        evidence=[str(there.row_id), str(here.row_id)],
        scope={
            "hosts": [str(here.host)],
            "devices": [str(here.device_model)],
            "workloads": [WORKLOAD, str(there.workload)],
        },
        strength="moderate",
        workload=WORKLOAD,
    )


def _timing(row: Any) -> str:
    """``44 samples of 2 calls after 114 warm-up calls``."""

    def count(value: Any, noun: str) -> str:
        return plural(int(value), noun) if value == value and value is not None else f"? {noun}s"

    return (
        f"{count(row.n_samples, 'sample')} of {count(row.calls_per_sample, 'call')} after "
        f"{count(row.warmup_calls, 'warm-up call')}"
    )


def scales(curve: pd.DataFrame) -> bool:
    return float(curve["efficiency"].iloc[-1]) >= SCALING_EFFICIENCY


def speeds_up(curve: pd.DataFrame) -> bool:
    """More threads make the op clearly faster (by :data:`SPEEDS_UP` or more at the most)."""
    return float(curve["speedup"].iloc[-1]) >= SPEEDS_UP


def scaling_words(curve: pd.DataFrame) -> str:
    """How an op that stays below :data:`SCALING_EFFICIENCY` behaves, in words that hold for its
    numbers: it speeds up below half of linear, or it does not speed up."""
    if speeds_up(curve):
        return "it speeds up, but by less than half of linear scaling"
    return "it does not speed up with more threads"


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
        answer += f": {scaling_words(curve)}. Likely reason: {reason}"
    flagged = curve[curve["suspect"]]
    if len(flagged):
        answer += (
            f" Suspect points: {', '.join(str(t) for t in flagged['threads_param'])} "
            f"threads ({reasons_text(_reasons(flagged))})."
        )
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


def _reasons(rows: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(r for reasons in rows["reasons"] for r in reasons))


def _threads(count: int) -> str:
    return plural(count, "thread")


def thread_advice(curve: pd.DataFrame) -> Finding:
    """A recommendation where the CPU scales below half of linear: the fewest threads within
    :data:`PLATEAU` of the fastest point, or all of them where only the most measured get there
    (then more threads were not measured, and the advice says so)."""
    top, best = curve.iloc[-1], curve.loc[curve["speedup"].idxmax()]
    count = int(top.threads_param)
    near = curve[curve["speedup"] >= float(best.speedup) * (1 - PLATEAU)].iloc[0]
    if int(near.threads_param) == count:
        advice = (
            f"Use all {_threads(count)} for {top.series} on {top.host}: it is fastest there "
            f"({ratio(top.speedup)} the speed of 1 thread, {percent(top.efficiency)} "
            "efficiency); more threads were not measured."
        )
    else:
        advice = (
            f"Use about {_threads(int(near.threads_param))} for {top.series} on {top.host}: "
            f"{ratio(near.speedup)} the speed of 1 thread, within {percent(PLATEAU)} of the "
            f"fastest ({ratio(best.speedup)} on {int(best.threads_param)}); {count} threads "
            f"reach {ratio(top.speedup)}."
        )
    return answered(
        "recommendation",
        f"threads-{top.host}-{top.series}",
        f"CPU threads for {top.series}",
        f"{advice} Why not linear: {why_not_scaling(top, best)}",
        curve["row_id"],
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
    most, at = int(top.threads_param), int(best.threads_param)
    if at == most:  # still growing at the most threads measured: say only that
        return (
            f"the speedup still grows up to the most threads measured ({most}), but each "
            f"thread adds less than half its share ({percent(top.efficiency)} efficiency): "
            "the work per thread is small, or the cores share memory bandwidth and caches."
        )
    return (
        f"the best speedup ({ratio(best.speedup)}) comes at {at} threads and the measured "
        f"counts above it, up to {most}, add nothing: the work per thread is too small to pay "
        "for synchronizing them, or the cores share memory bandwidth and caches." + _smt(top)
    )


def _smt(row: Any) -> str:
    """A note on hyper-threads only where the device info says logical CPUs outnumber cores."""
    logical, physical = info_value(row, "logical_cpus"), info_value(row, "physical_cores")
    if logical and physical and logical > physical:
        return (
            f" This CPU has {physical} cores for {logical} logical CPUs: threads beyond "
            f"{physical} share cores."
        )
    return ""


def _table(curve: pd.DataFrame) -> str:
    lines = ["| threads | median time | speedup | efficiency |", "|---|---|---|---|"]
    for row in curve.itertuples():
        lines.append(
            f"| {row.threads_param} | {seconds_text(row.median_s)} | {ratio(row.speedup)} | "
            f"{percent(row.efficiency)} |"
        )
    return "\n".join(lines)
