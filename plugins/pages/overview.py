"""The Overview page (``index.html``): the one-screen answer — per workload its default case,
where the GPU starts to win (kernel only and with copies) and the speedup at a realistic size,
each linked to its rows (:attr:`benchsite.tables.Tables.answers`) — then the top findings and
recommendations (those of small or CI hosts only where no other host has any), and when and
where it was all measured."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Page, RenderedPage, hookimpl
from benchsite.units import format_ratio, param_words

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import ChartView, FindingView, Site
    from benchsite.toolkit.pages import (
        Measured,
        WorkloadSummary,
    )
    from benchsite.toolkit.reference import ReferenceBlock

TOP_FINDINGS = 6
# what a visitor asks first, one finding of each; other kinds only fill the remaining places
HEADLINE_KINDS = (
    "speedup",
    "crossover",
    "multi-gpu",
    "memory",
    "batch-scaling",
    "technique",
    "cpu-threads",
    "energy-cost",
)


@dataclass(frozen=True)
class AnswerRow:
    """One workload's answer (a row of :attr:`benchsite.tables.Tables.answers`), in words."""

    workload: str
    href: str
    case: str
    device: str
    kernel: str
    copies: str
    speedup: str
    note: str  # why the interval is wider than measured noise: "widened: flagged unstable"
    at: str
    evidence: str
    throughput: str = ""  # accelerator against CPU there, in the workload's unit: images/s


@dataclass(frozen=True)
class SystemRow:
    """One host's hardware as the first screen shows it: CPU model and cores, RAM, GPU, driver,
    torch."""

    host: str
    cpu: str
    cores: str
    ram: str
    gpu: str
    driver: str
    torch: str


@dataclass(frozen=True)
class OverviewContext:
    """``index.html``: the one-screen answer per workload (table and chart, or what to run to
    get it), the devices compared, the top findings and recommendations, and when and where it
    was measured."""

    measured: Measured
    lead: list[str]
    systems: list[SystemRow]
    answers: list[AnswerRow]
    headline_chart: ChartView | None
    missing_speedup: str | None
    findings: list[FindingView]
    recommendations: list[FindingView]
    missing_findings: str | None
    workloads: list[WorkloadSummary]
    reference: ReferenceBlock | None = None  # _reference_answer.html: references beside these


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="overview", nav="Overview", order=0, path="index.html", render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.site import charts
    from benchsite.toolkit.pages import measured, what_to_run, workload_summaries
    from benchsite.toolkit.reference import reference_block

    table = site.tables.answers
    shown = table[table["speedup"].notna()]
    shown = shown.assign(
        label=[
            f"{r.workload} {case}".strip()
            for r, case in zip(shown.itertuples(), chart_cases(shown), strict=True)
        ]
    )
    findings = off_small_hosts(
        site, [f for f in site.findings if f.kind not in ("recommendation", "faq", "claim")]
    )
    reference = reference_block(site)
    context = OverviewContext(
        measured=measured(site),
        lead=lead_sentences(site, table) or reference_lead(reference),
        systems=system_rows(site, table),
        answers=answer_rows(site, table),
        headline_chart=(
            site.chart(
                charts.headline_chart(shown),
                "Speedup over the CPU per workload",
                chart_text(site, shown),
            )
            if not shown.empty
            else None
        ),
        missing_speedup=None
        if not table.empty
        else (
            "No workload was measured on both a CPU and an accelerator of the same host, so "
            "there is no speedup to show. " + what_to_run(site)
        ),
        findings=site.finding_views(_top_findings(findings)),
        recommendations=site.finding_views(
            _strongest(off_small_hosts(site, site.analysed.of_kind("recommendation")))
        ),
        missing_findings=None
        if site.findings
        else (
            f"The installed analysis plugins produced no findings from these {len(site.results)} "
            f"rows. {what_to_run(site)}"
        ),
        workloads=workload_summaries(site),
        reference=reference,
    )
    return [site.render("overview.html", "index.html", context, "overview")]


def off_small_hosts(site: Site, findings: list) -> list:
    """``findings`` without those only about small or CI hosts
    (:attr:`benchsite.tables.Tables.small_hosts`), unless nothing else is left."""
    small = site.tables.small_hosts
    kept = [
        f
        for f in findings
        if not set(f.scope.get("hosts", [])) or set(f.scope.get("hosts", [])) - small
    ]
    return kept or findings


def _strongest(findings: list) -> list:
    from benchsite.toolkit.pages import by_strength

    return by_strength(findings)[:TOP_FINDINGS]


def _top_findings(findings: list) -> list:
    """The strongest finding of each headline kind (six crossovers in a row would hide the
    rest of the answers), then the strongest of the others."""
    from benchsite.toolkit.pages import by_strength

    ranked = by_strength(findings)
    first_of: dict = {}
    for finding in ranked:
        first_of.setdefault(finding.kind, finding)
    chosen = [first_of[kind] for kind in HEADLINE_KINDS if kind in first_of][:TOP_FINDINGS]
    chosen += [f for f in ranked if all(f is not c for c in chosen)]
    return chosen[:TOP_FINDINGS]


JOBS = (("training", "Training", "a step"), ("inference", "Inference", "a batch"))


def lead_sentences(site: Site, table: pd.DataFrame) -> list[str]:
    """One sentence per question the first screen answers: for a training job and an
    inference job (the one of each whose CPU time at its realistic size is longest: the
    heaviest measured), the speedup with its interval, both times and from which size the GPU
    wins, all read from :attr:`benchsite.tables.Tables.answers`."""
    from benchsite.toolkit.findings import kind_of_workload

    shown = table[table["speedup"].notna()]
    out = []
    for kind, name, call in JOBS:
        mine = shown[shown["workload"].map(kind_of_workload) == kind]
        if not mine.empty:
            out.append(job_sentence(site, name, call, mine.loc[mine["cpu_median_s"].idxmax()]))
    return out


def reference_lead(block: ReferenceBlock | None) -> list[str]:
    """The first screen's answer where the store holds no CPU/accelerator pair of its own but a
    reference does: for a training and an inference job (the shared case of each whose CPU
    time is longest; the heaviest case of any workload where neither was shared), your CPU's
    time, the reference GPU's and the ratio, from the reference table below it."""
    from benchsite.toolkit.findings import kind_of_workload

    lines = [one for one in block.lines if one.speedup != "–"] if block else []
    out = []
    for kind, name, _ in JOBS:
        mine = [one for one in lines if kind_of_workload(one.workload) == kind]
        if mine:
            out.append(reference_sentence(name, max(mine, key=lambda one: one.cpu_median_s)))
    if not out and lines:
        heaviest = max(lines, key=lambda one: one.cpu_median_s)
        out.append(reference_sentence(heaviest.workload, heaviest))
    return out


def reference_sentence(name: str, line: Any) -> str:
    """``Training (cnn-train, batch 16): your AMD EPYC, 2 cores: 1.2 s; NVIDIA H200 (reference
    h200, 2026-12): 3.1 ms; 390× (95% interval …), the two in different machines.``"""
    case = ", ".join(part for part in (line.workload, line.case, line.at) if part)
    label = case if name == line.workload else f"{name} ({case})"
    return f"{label}: {line.text} ({line.interval}), the two in different machines."


def job_sentence(site: Site, name: str, call: str, row: Any) -> str:
    """``Training (cnn-train, batch 128, …): the NVIDIA H200 (cuda:0) is 57× faster …``."""
    from benchsite.toolkit.findings import case_text, rates_against, seconds_text

    size = functools.partial(site.tables.value_text, row.workload, str(row.axis))
    rates = f", {rates}" if (rates := rates_against(row)) else ""
    case = case_text(row.params, in_bytes=str(row.workload) in site.tables.byte_sized)
    wins = where_text(row, "kernel", size)
    flagged = f", widened: flagged {', '.join(row.uncertain)}" if row.uncertain else ""
    return (
        f"{name} ({row.workload}, {case}): the {row.gpu_label} is "
        f"{format_ratio(row.speedup)} faster than the {row.cpu_label} (95% interval "
        f"{format_ratio(row.low)}–{format_ratio(row.high)}{flagged}): "
        f"{seconds_text(row.gpu_median_s)} against {seconds_text(row.cpu_median_s)} {call}{rates}. "
        f"The GPU is faster from: {wins}.{cost_words(site, row)}"
    )


def cost_words(site: Site, row: Any) -> str:
    """`` At the listed prices it costs 8.3× less per item.``: the energy-cost finding of the
    same host and workload, where it compares a price on both devices (empty where none)."""
    for found in site.analysed.of_kind("energy-cost"):
        ratio = found.numbers.get("cost_ratio")
        if found.workload == row.workload and row.host in found.scope.get("hosts", []) and ratio:
            less = (
                f"{format_ratio(ratio)} less" if ratio >= 1 else f"{format_ratio(1 / ratio)} more"
            )
            return f" At the list prices this site was built with it costs {less} per item."
    return ""


def system_rows(site: Site, table: pd.DataFrame) -> list[SystemRow]:
    """The hardware of each host the answers come from (of every host where none does)."""
    from benchsite.units import format_bytes

    devices = site.tables.devices
    hosts = list(dict.fromkeys(table["host"])) or list(dict.fromkeys(devices["host"]))
    rows = []
    for host in hosts:
        mine = devices[devices["host"] == host]
        cpu = mine[mine["device"] == "cpu"]
        single = ~mine["device"].str.contains("-|×")  # not a group of devices (cuda:0-1, cuda×2)
        gpu = mine[mine["device_kind"].isin(("cuda", "mps")) & single].drop_duplicates("device")
        cpu_info = cpu.iloc[0]["info"] if len(cpu) else {}
        gpu_info = gpu.iloc[0]["info"] if len(gpu) else {}
        memory = cpu_info.get("memory_bytes")
        gpu_memory = gpu_info.get("memory_bytes")
        rows.append(
            SystemRow(
                host=str(host),
                cpu=str(cpu.iloc[0].device_model) if len(cpu) else "–",
                cores=f"{cpu_info.get('usable_cpus') or cpu_info.get('logical_cpus') or '–'}",
                ram=format_bytes(memory) if memory else "–",
                gpu=(
                    f"{len(gpu)} × {gpu.iloc[0].device_model}"
                    + (f" ({format_bytes(gpu_memory)})" if gpu_memory else "")
                    if len(gpu)
                    else "none"
                ),
                driver=str(gpu_info.get("driver_version") or "–"),
                torch=str(cpu_info.get("torch_version") or gpu_info.get("torch_version") or "–"),
            )
        )
    return rows


def chart_cases(table: pd.DataFrame) -> list[str]:
    """Each answer's case in words for the chart's labels (``(fp32, seq len 128)``)."""
    return [f"({case})" if (case := answer_case(row)) else "" for row in table.itertuples()]


def answer_case(row: Any) -> str:
    """An answer's case in words, without the swept parameter and the baselines (a baseline is
    said once, in the text above the table: "sparsity 0" names nothing)."""
    from benchsite.tables import PLAIN
    from benchsite.toolkit.findings import case_text

    plain = [k for k, v in PLAIN.items() if k != "precision" and row.params.get(k) == v]
    return case_text(row.params, skip=[str(row.axis), *plain])


def answer_rows(site: Site, table: pd.DataFrame) -> list[AnswerRow]:
    """The one-screen answer, a row per workload and accelerator, in words."""
    from benchsite.toolkit.findings import rates_against

    rows = []
    for row in table.itertuples():
        size = functools.partial(site.tables.value_text, row.workload, str(row.axis))
        rows.append(
            AnswerRow(
                workload=str(row.workload),
                href=site.workload_path(str(row.workload)),
                case=answer_case(row),
                device=str(row.series),
                kernel=where_text(row, "kernel", size),
                copies=where_text(row, "copies", size),
                speedup=_speedup_text(row),
                note=f"widened: flagged {', '.join(row.uncertain)}" if row.uncertain else "",
                at=_at_text(row, size),
                evidence=site.row_links[str(row.gpu_row)].href,
                throughput=rates_against(row),
            )
        )
    return rows


def where_text(row: Any, prefix: str, size: Callable[[Any], str]) -> str:
    """Where the GPU starts to win, in words: ``batch 16 (CPU faster at 4)``."""
    outcome = getattr(row, f"{prefix}_outcome")
    start, below = getattr(row, f"{prefix}_from"), getattr(row, f"{prefix}_below")
    reasons = getattr(row, f"{prefix}_reasons")
    flagged = f"; flagged {', '.join(reasons)}" if reasons else ""
    axis = param_words(row.axis)
    if outcome == "crosses":
        return f"{axis} {size(start)} (CPU as fast at {size(below)}{flagged})"
    if outcome == "gpu-always":
        return f"every measured {axis}, from {size(start)}{flagged}"
    if outcome == "cpu-always":
        return f"never: the CPU wins at every measured {axis}{flagged}"
    return "not measured"


def _speedup_text(row: Any) -> str:
    if row.speedup != row.speedup:
        return "–"
    return f"{format_ratio(row.speedup)} ({format_ratio(row.low)} – {format_ratio(row.high)})"


def _at_text(row: Any, size: Callable[[Any], str]) -> str:
    if row.axis is None or row.at_size != row.at_size:
        return ""
    axis = param_words(row.axis)
    at = f"{axis} {size(row.at_size)}"
    if row.speedup != row.speedup:
        return f"every {axis} measured flagged {', '.join(row.largest_reasons)} (up to {at})"
    if row.largest == row.largest:
        return f"{at} ({size(row.largest)} flagged {', '.join(row.largest_reasons)})"
    return at


def chart_text(site: Site, table: pd.DataFrame) -> str:
    parts = [
        f"{row.workload} on {row.series}: {format_ratio(row.speedup)} (95% interval "
        f"{format_ratio(row.low)}–{format_ratio(row.high)}) at {param_words(row.axis)} "
        f"{site.tables.value_text(row.workload, str(row.axis), row.at_size)}"
        for row in table.itertuples()
    ]
    return (
        "Speedup over the CPU of each workload's default case at its largest measured size. "
        + "; ".join(parts)
        + "."
    )
