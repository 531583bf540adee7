"""The template context of every built-in page: one documented dataclass per page.

A template receives its page's context as ``ctx``, plus ``site`` (:class:`~benchsite.site.Site`),
``root`` (the relative path to the site root, e.g. ``"../"``), ``path``, ``active`` and ``nav``.
A user's theme that overrides a template can rely on exactly these fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from benchsite.site.views import CaseTable, ChartView, EvidenceLink, FindingView


@dataclass(frozen=True)
class Measured:
    """When and where the store was measured: hosts, devices, runs, rows and the time span."""

    hosts: list[str]
    devices: list[str]
    runs: int
    rows: int
    first: str
    last: str


@dataclass(frozen=True)
class HeadlineRow:
    """One workload's accelerator speedup at the largest size measured on both devices."""

    workload: str
    href: str
    variant: str
    series: str
    at: str
    speedup: str
    interval: str
    evidence: str


@dataclass(frozen=True)
class OverviewContext:
    """``index.html``: the headline speedups (table and chart, or what to run to get them), the
    devices compared, the top findings and recommendations, and when and where it was measured."""

    measured: Measured
    headline: list[HeadlineRow]
    headline_chart: ChartView | None
    missing_speedup: str | None
    findings: list[FindingView]
    recommendations: list[FindingView]
    missing_findings: str | None
    workloads: list[WorkloadSummary]


@dataclass(frozen=True)
class WorkloadSummary:
    """A workload in lists: its page, description, cases, devices and failures."""

    name: str
    href: str
    description: str
    axis: str
    cases: int
    devices: str
    failed: int


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


@dataclass(frozen=True)
class PeakView:
    """A device's best measured throughput on one workload."""

    workload: str
    rate: str
    params: str
    href: str


@dataclass(frozen=True)
class DeviceView:
    """One device of one host: what was captured about it and its measured peaks."""

    name: str
    kind: str
    model: str
    fingerprint: str
    last_seen: str
    info: list[tuple[str, str]]
    peaks: list[PeakView]


@dataclass(frozen=True)
class HostView:
    name: str
    devices: list[DeviceView]


@dataclass(frozen=True)
class HardwareContext:
    """``hardware.html``: every device of every host in the store."""

    hosts: list[HostView]


@dataclass(frozen=True)
class FindingGroup:
    """Findings of one kind; ``pages`` (label, path) list the pages holding all of them when
    there are more than one page shows."""

    kind: str
    title: str
    findings: list[FindingView]
    total: int = 0
    pages: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class FindingsContext:
    """A page of findings (all of them grouped by kind, or one kind: FAQ, recommendations,
    claims). ``missing`` says plainly what is absent and what to run; ``errors`` lists analyses
    that failed (name → error)."""

    title: str
    intro: str
    groups: list[FindingGroup]
    missing: str | None
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EvidenceContext:
    """``evidence/<finding>.html``: the result rows one finding rests on, each linked (the first
    :data:`~benchsite.site.findings.EVIDENCE_LISTED`), and every run they come from with its row
    count; ``unknown`` counts the row ids it names that the store lacks."""

    finding: FindingView
    links: list[EvidenceLink]
    total: int
    runs: list[tuple[str, str, int]]
    unknown: int


@dataclass(frozen=True)
class RunRow:
    """One run in the runs table."""

    host: str
    run_id: str
    href: str
    started: str
    duration: str
    profile: str
    devices: str
    workloads: int
    cases: int
    ok: int
    skipped: int
    failed: int
    version: str


@dataclass(frozen=True)
class RunsContext:
    """``runs.html``: every run in the store, per host, over time."""

    runs: list[RunRow]
    chart: ChartView | None


@dataclass(frozen=True)
class RunContext:
    """``runs/<run>.html``: every row of one run, each with its anchor; a long run continues on
    numbered pages listed in ``parts`` (label, path)."""

    run: RunRow
    cases: CaseTable
    parts: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class MethodologyContext:
    """``methodology.html``: the methodology text (sanitized Markdown)."""

    html: Markup


@dataclass(frozen=True)
class DataFile:
    name: str
    href: str
    size: str
    description: str


@dataclass(frozen=True)
class DataContext:
    """``data.html``: the downloadable files and the columns they hold."""

    files: list[DataFile]
    rows: int
    columns: list[str]
