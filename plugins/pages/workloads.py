"""One page per workload (``workloads/<name>.html``) and their index: time against size per
device, speedup over the CPU with the crossover marked, throughput, memory, every current case
with its anchor, the workload's findings, and the commands that reproduce it."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Page, RenderedPage, hookimpl
from benchsite.units import param_words

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import (
        CaseTable,
        ChartView,
        FindingView,
        Site,
    )
    from benchsite.toolkit.pages import (
        WorkloadSummary,
    )

# the memory collector's metrics that the memory chart draws
MEMORY_METRICS = (
    "memory.gpu_peak_allocated_bytes",
    "memory.gpu_peak_reserved_bytes",
    "memory.cpu_peak_rss_bytes",
)


@dataclass(frozen=True)
class WorkloadIndexContext:
    """``workloads/index.html``: every workload in the store."""

    workloads: list[WorkloadSummary]


@dataclass(frozen=True)
class WorkloadContext:
    """``workloads/<name>.html``: the charts (time, speedup with crossover, throughput,
    memory), what could not be charted and why, every current case (or, when there are too many
    for one page, empty: ``runs`` (label, path) then lists the run pages that hold them), the
    workload's findings and the commands that reproduce it."""

    name: str
    description: str
    axis: str
    charts: list[ChartView]
    not_charted: list[str]
    cases: CaseTable
    findings: list[FindingView]
    commands: list[str]
    runs: list[tuple[str, str]] = field(default_factory=list)
    items_unit: str = "items/s"  # what its items per second count: images/s, tokens/s


@hookimpl
def register_pages() -> list[Page]:
    return [
        Page(
            name="workloads", nav="Workloads", order=10, path="workloads/index.html", render=render
        )
    ]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.toolkit.pages import workload_summaries

    index = WorkloadIndexContext(workload_summaries(site))
    pages = [site.render("workloads.html", "workloads/index.html", index, "workloads")]
    speed = site.tables.speedups
    run_hrefs = {str(run): site.run_path(str(run)) for run in site.results["run_id"].unique()}
    for name, rows in site.current.groupby("workload", sort=True):
        context = workload_context(site, str(name), rows, speed, run_hrefs)
        pages.append(
            site.render("workload.html", site.workload_path(str(name)), context, "workloads")
        )
    return pages


def workload_context(
    site: Site, name: str, rows: pd.DataFrame, speed: pd.DataFrame, run_hrefs: dict[str, str]
) -> WorkloadContext:
    from benchsite.site import WORKLOAD_TABLE_ROWS, CaseTable, case_table
    from benchsite.tables import rate_unit
    from benchsite.toolkit.pages import PER_PAGE, by_strength, reproduce_commands

    registered = site.workloads.get(name)
    axis = str(rows["axis"].dropna().iloc[0]) if rows["axis"].notna().any() else ""
    made, missing = workload_charts(site, rows, speed[speed["workload"] == name], axis)
    ordered = rows.sort_values(["host", "device", "variant", "axis_value"], kind="stable")
    return WorkloadContext(
        name=name,
        description=registered.description if registered else "",
        axis=axis,
        charts=made,
        not_charted=missing,
        cases=(
            case_table(ordered, run_hrefs, metrics=True, reruns=site.tables.reruns)
            if len(rows) <= WORKLOAD_TABLE_ROWS
            else CaseTable([])
        ),
        runs=sorted({(str(r), run_hrefs[str(r)]) for r in rows["run_id"].unique()}),
        findings=site.finding_views(
            by_strength([f for f in site.findings if f.workload == name])[:PER_PAGE]
        ),
        commands=reproduce_commands(site, name),
        items_unit=rate_unit(rows, "items_per_s"),
    )


def workload_charts(
    site: Site, rows: pd.DataFrame, speed: pd.DataFrame, axis: str
) -> tuple[list[ChartView], list[str]]:
    """The charts this workload's rows allow, and a sentence for each one they do not."""
    from benchsite.site import charts, describe

    good = rows[rows["ok"].to_numpy(bool)]
    swept = good[good["axis_value"].notna()]
    if not axis or swept.empty:
        return [], ["No chart: these cases sweep no parameter or none succeeded; see the table."]
    words, x_text = axis_words(site, swept, axis)
    made = [
        site.chart(
            charts.time_chart(swept, axis, in_bytes(site, swept, axis)),
            f"Time per call against {words}",
            describe.time_text(swept, words, x_text),
        )
    ]
    missing: list[str] = []
    _speedup(site, speed, axis, made, missing, rows)
    _rate(site, swept, axis, made, missing)
    _memory(site, swept, axis, made, missing)
    return made, missing


def by_design(rows: pd.DataFrame) -> str | None:
    """Why a workload has no speedup when that is its nature, not a missing run: it ran on an
    accelerator and the workload itself skipped every one of its CPU cases (a host↔GPU
    transfer has no CPU side), in the skip's own words."""
    cpu = rows[rows["device_kind"].astype(str) == "cpu"]
    ran = (rows["device_kind"].astype(str) != "cpu") & (rows["status"] == "ok")
    if cpu.empty or not ran.any() or (cpu["status"] != "skipped").any():
        return None
    reason = str(cpu["error"].dropna().iloc[0]) if cpu["error"].notna().any() else ""
    why = f" ({reason})" if reason else ""
    return (
        f"No counterpart by design{why}: there is no CPU time to compare with. The "
        "findings below compare its own variants."
    )


def _speedup(
    site: Site, speed: pd.DataFrame, axis: str, made: list, missing: list, rows: pd.DataFrame
) -> None:
    from benchsite.site import charts, describe
    from benchsite.toolkit.pages import what_to_run

    swept = speed[speed["axis_value"].notna()]
    workload = set(swept["workload"])
    if swept.empty:
        missing.append(
            by_design(rows)
            or (
                "Speedup over the CPU: needs the same cases measured on a CPU and an "
                "accelerator of one host. " + what_to_run(site)
            )
        )
        return
    crossings = site.tables.crossovers
    crossings = crossings[crossings["workload"].isin(workload)]
    words, x_text = axis_words(site, swept, axis)
    made.append(
        site.chart(
            charts.speedup_chart(swept, crossings, axis, in_bytes(site, swept, axis)),
            f"Speedup over the CPU against {words}",
            describe.speedup_text(swept, crossings, words, x_text),
        )
    )


def axis_words(site: Site, frame: pd.DataFrame, axis: str) -> tuple[str, Any]:
    """The axis in words (``world size``) and its values' text (``1 GiB`` for a copy's size)."""
    workload = str(frame["workload"].iloc[0]) if len(frame) else ""
    return param_words(axis), functools.partial(site.tables.value_text, workload, axis)


# the memory collector's metrics as a reader names them
MEMORY_LABELS = {
    "memory.gpu_peak_allocated_bytes": "GPU peak allocated",
    "memory.gpu_peak_reserved_bytes": "GPU peak reserved (PyTorch's cache, the case's own)",
    "memory.cpu_peak_rss_bytes": "CPU peak resident (above the worker's before the case)",
}


def _rate(site: Site, swept: pd.DataFrame, axis: str, made: list, missing: list) -> None:
    from benchsite.site import charts, describe
    from benchsite.tables import best_rate, rate_unit

    preferred = ("items_per_s",) if axis == "batch" else ()  # per batch: images/s, tokens/s
    found = [(c, rate_unit(swept, c)) for c in preferred if swept[c].notna().any()]
    found = found or [best_rate(swept)]
    if found[0] is None:
        missing.append("Throughput: the workload declares no FLOPs, bytes or items per call.")
        return
    column, unit = found[0]
    data = swept[swept[column].notna()]
    words, x_text = axis_words(site, data, axis)
    made.append(
        site.chart(
            charts.rate_chart(data, axis, column, unit, in_bytes(site, data, axis)),
            f"Throughput ({unit}) against {words}",
            describe.rate_text(data, words, column, unit, x_text),
        )
    )


def in_bytes(site: Site, rows: pd.DataFrame, axis: str) -> bool:
    """The swept ``axis`` of ``rows`` counts bytes (a ``size`` of a byte-sized workload)."""
    workloads = set(rows["workload"].astype(str)) if "workload" in rows else set()
    return axis == "size" and bool(workloads) and workloads <= site.tables.byte_sized


def _memory(site: Site, swept: pd.DataFrame, axis: str, made: list, missing: list) -> None:
    from benchsite.site import charts, describe
    from benchsite.tables import metric_frame

    long = metric_frame(swept, MEMORY_METRICS)
    if long.empty:
        missing.append(
            "Memory: these rows hold no memory metrics (the memory collector "
            "records peak GPU allocation and CPU RSS when it is installed)."
        )
        return
    data = long.join(swept[["axis_value", "series", "variant"]], on="index")
    data["metric"] = data["metric"].map(lambda name: MEMORY_LABELS.get(name, name))
    words, x_text = axis_words(site, swept, axis)
    made.append(
        site.chart(
            charts.memory_chart(data, axis, in_bytes(site, swept, axis)),
            f"Peak memory against {words}",
            describe.memory_text(data, words, x_text),
        )
    )
