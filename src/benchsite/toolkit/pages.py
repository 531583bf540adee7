"""What several built-in pages share: the template contexts they have in common, when and where
the store was measured, one line per workload, what to run when something is missing, and the
pages made of findings (all findings grouped by kind, or one kind: FAQ, recommendations,
claims) with an evidence page per finding.

A template receives its page's context as ``ctx``, plus ``site`` (:class:`~benchsite.site.Site`),
``root`` (the relative path to the site root, e.g. ``"../"``), ``path``, ``active`` and ``nav``.
A user's theme that overrides a template can rely on exactly these fields.
"""

from __future__ import annotations

import shlex
from collections import Counter
from dataclasses import dataclass, field, replace

import pandas as pd

from benchsite.records import Finding, RenderedPage
from benchsite.site import FAILED, EvidenceLink, FindingView, Site, slug
from benchsite.tables import fold
from benchsite.units import natural_key, plural

__all__ = [
    "EVIDENCE_LISTED",
    "KIND_TITLES",
    "PER_PAGE",
    "STRENGTH_ORDER",
    "EvidenceContext",
    "FindingGroup",
    "FindingsContext",
    "Measured",
    "WorkloadSummary",
    "by_strength",
    "group_words",
    "grouped",
    "has_accelerator",
    "main_hosts_first",
    "measured",
    "missing_text",
    "render_evidence_pages",
    "render_findings_page",
    "reproduce_commands",
    "what_to_run",
    "workload_summaries",
]


@dataclass(frozen=True)
class Measured:
    """When and where the store was measured: hosts, devices, runs, rows and the time span.
    In a fleet (:func:`benchsite.tables.fold.is_fleet`) ``hosts`` names each hardware with its
    number of hosts and ``devices`` each device model with its number of devices, rather than
    hundreds of names; ``hosts_total`` counts the hosts either way. ``groups`` says what each
    device group among them is (:func:`group_words`)."""

    hosts: list[str]
    devices: list[str]
    runs: int
    rows: int
    first: str
    last: str
    hosts_total: int
    fleet: bool
    groups: list[str] = field(default_factory=list)


def group_words(device: str, kind: str, world_size: int) -> str | None:
    """What the device of a distributed case's row is, as its name does not say: ``cpu×2: 2
    processes of a distributed case sharing the CPU, each with an equal share of its cores``;
    ``cuda:0-1: 2 cuda devices of a distributed case, a process each``; ``… on 2 machines``.
    ``None`` for a single device (``world_size`` 1)."""
    if world_size <= 1:
        return None
    return _group_text([device], kind, [world_size], device.partition("@")[2])


def _group_text(names: list[str], kind: str, sizes: list[int], spread: str) -> str:
    """:func:`group_words` of groups that differ only in their size: ``cpu×2, cpu×4: 2 or 4
    processes …``."""
    counts = [f"{size:,}" for size in sizes]
    count = counts[0] if len(counts) == 1 else f"{', '.join(counts[:-1])} or {counts[-1]}"
    machines = f" on {spread.removesuffix('-nodes')} machines" if spread else ""
    if kind == "cpu":
        what = f"{count} processes of a distributed case sharing the CPU{machines}, each with "
        return f"{', '.join(names)}: {what}an equal share of its cores"
    return f"{', '.join(names)}: {count} {kind} devices of a distributed case{machines}, a process each"


def _groups(ran: pd.DataFrame) -> list[str]:
    """:func:`group_words` of every device group that ran a case, those of one kind spread alike
    in one line (``cpu×2, cpu×4, cpu×8: 2, 4 or 8 processes …``), in name order."""
    grouped = ran[ran["world_size"].fillna(1) > 1]
    found = {
        (str(d), str(k), int(w))
        for d, k, w in zip(
            grouped["device"], grouped["device_kind"], grouped["world_size"], strict=True
        )
    }
    alike: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for device, kind, size in sorted(found, key=lambda one: (one[2], natural_key(one[0]))):
        alike.setdefault((kind, device.partition("@")[2]), []).append((device, size))
    lines = [
        _group_text([d for d, _ in groups], kind, [w for _, w in groups], spread)
        for (kind, spread), groups in alike.items()
    ]
    return sorted(lines, key=natural_key)


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
    :data:`EVIDENCE_LISTED`), and every run they come from with its row
    count; ``unknown`` counts the row ids it names that the store lacks."""

    finding: FindingView
    links: list[EvidenceLink]
    total: int
    runs: list[tuple[str, str, int]]
    unknown: int


# -- when, where and what to run -----------------------------------------------------------------


def measured(site: Site) -> Measured:
    """When and where: every host, and every device (or group of devices) that ran a case —
    one named only by a skipped row (``cuda×4`` on a two-GPU machine) was never measured; in a
    fleet, its hardware and device models, counted."""
    results = site.results
    ran = _ran(results)
    fleet = fold.is_fleet(results)
    if fleet:
        hosts = sorted(set(fold.hardware_names(ran).values()))
        models = fold.device_models(ran.drop_duplicates(["host", "device"])).astype(str)
        devices = [
            f"{model} ({plural(count, 'device')})"
            for model, count in models.value_counts().sort_index().items()
        ]
    else:
        hosts = sorted(map(str, results["host"].unique()), key=natural_key)
        pairs = {(str(h), str(d)) for h, d in zip(ran["host"], ran["device"], strict=True)}
        ordered = sorted(pairs, key=lambda pair: (natural_key(pair[0]), natural_key(pair[1])))
        devices = [f"{host} · {device}" for host, device in ordered]
    return Measured(
        hosts=hosts,
        devices=devices,
        runs=int(results["run_id"].nunique()),
        rows=len(results),
        first=f"{results['timestamp'].min():%Y-%m-%d %H:%M} UTC",
        last=f"{results['timestamp'].max():%Y-%m-%d %H:%M} UTC",
        hosts_total=int(results["host"].nunique()),
        fleet=fleet,
        groups=[] if fleet else _groups(ran),
    )


def workload_summaries(site: Site) -> list[WorkloadSummary]:
    """One line per workload in the store, from its current rows."""
    summaries = []
    for name, group in site.current.groupby("workload", sort=True):
        registered = site.workloads.get(str(name))
        summaries.append(
            WorkloadSummary(
                name=str(name),
                href=site.workload_path(str(name)),
                description=registered.description if registered else "",
                axis=str(group["axis"].dropna().iloc[0]) if group["axis"].notna().any() else "",
                cases=len(group),
                devices=", ".join(sorted(set(map(str, _ran(group)["series"])))),
                failed=int(group["status"].isin(FAILED).sum()),
            )
        )
    return summaries


def _ran(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of cases that ran (whatever their outcome), not the skipped ones."""
    return rows[rows["status"] != "skipped"]


def has_accelerator(site: Site) -> bool:
    """Whether the store holds a row measured on any device but the CPU."""
    return bool((site.results["device_kind"] != "cpu").any())


def what_to_run(site: Site) -> str:
    """The command that would add what a comparison lacks, in one sentence."""
    if not has_accelerator(site):
        return (
            "This store holds CPU results only: run `benchsite run --results <this store>` on a "
            "machine with a CUDA or MPS GPU, then `benchsite build` again."
        )
    if not (site.results["device_kind"] == "cpu").any():
        return "This store holds no CPU results: run `benchsite run -d cpu` into it."
    return "Run `benchsite run --full` for the full grids, then `benchsite build` again."


def reproduce_commands(site: Site, workload: str) -> list[str]:
    """The commands that re-measure ``workload``'s current rows, one per host's profile (in a
    fleet, per hardware: on the host of its median row, :mod:`benchsite.tables.fold`)."""
    rows = site.current[site.current["workload"] == workload]
    host_column = "median_host" if "median_host" in rows else "host"
    commands = []
    for (host, profile), group in rows.groupby([host_column, "profile"], sort=True):
        devices = " ".join(f"-d {shlex.quote(str(d))}" for d in sorted(set(group["device"])))
        commands.append(
            f"benchsite run -w {shlex.quote(workload)} {devices} --{profile} "
            f"--host {shlex.quote(str(host))}"
        )
    return commands


# -- pages made of findings ----------------------------------------------------------------------

PER_PAGE = 6
EVIDENCE_LISTED = 500
KIND_TITLES = {
    "speedup": "Speedups",
    "crossover": "Where the GPU starts to win",
    "batch-scaling": "Batch size",
    "cpu-threads": "CPU threads",
    "memory": "Memory",
    "technique": "Techniques",
    "efficiency": "Efficiency",
    "energy-cost": "Energy and cost",
    "multi-gpu": "Several GPUs",
    "history": "History",
    "hosts": "Hosts compared",
    "validity": "Validity",
    "recommendation": "Recommendations",
    "faq": "Questions",
    "claim": "Claims checked",
}


STRENGTH_ORDER = {"strong": 0, "moderate": 1, "weak": 2, "none": 3}


def by_strength(findings: list[Finding]) -> list[Finding]:
    """Strongest evidence first (stable within a strength)."""
    return sorted(findings, key=lambda finding: STRENGTH_ORDER.get(finding.strength, 4))


def grouped(site: Site, kinds: tuple[str, ...] | None = None) -> list[FindingGroup]:
    """Findings grouped by kind, known kinds in their usual order, then any others; within a
    kind the main hosts' first, those only about small or CI hosts
    (:attr:`benchsite.tables.Tables.small_hosts`) last, each strongest evidence first."""
    chosen = [f for f in site.findings if kinds is None or f.kind in kinds]
    order = [kind for kind in KIND_TITLES if any(f.kind == kind for f in chosen)]
    order += sorted({f.kind for f in chosen} - set(order))
    small = site.tables.small_hosts
    return [
        FindingGroup(
            kind,
            KIND_TITLES.get(kind, kind.replace("-", " ").capitalize()),
            site.finding_views(main_hosts_first([f for f in chosen if f.kind == kind], small)),
        )
        for kind in order
    ]


def main_hosts_first(findings: list[Finding], small: frozenset[str]) -> list[Finding]:
    """``findings`` strongest first, those whose hosts are all ``small`` after the others."""
    ranked = by_strength(findings)
    return sorted(
        ranked, key=lambda f: bool(f.scope.get("hosts")) and set(f.scope["hosts"]) <= small
    )


def missing_text(site: Site, what: str, kinds: tuple[str, ...] | None) -> str:
    """Why a findings page is empty, and what to run."""
    label = (
        "findings"
        if kinds is None
        else "findings of kind " + " or ".join(f'"{kind}"' for kind in kinds)
    )
    failed = (
        f" {len(site.analysed.errors)} analyses failed (listed below)."
        if (site.analysed.errors)
        else ""
    )
    return (
        f"No {what} yet: the installed analysis plugins produced no {label} from the "
        f"{len(site.results)} rows of this store.{failed} {what_to_run(site)}"
    )


def render_findings_page(
    site: Site,
    *,
    page: str,
    path: str,
    title: str,
    intro: str,
    kinds: tuple[str, ...] | None,
    template: str,
) -> list[RenderedPage]:
    """One page of findings of ``kinds`` (``None``: every kind); a kind with more findings than
    :data:`PER_PAGE` shows the strongest and continues on numbered pages of its own."""
    groups = grouped(site, kinds)
    files, shown = [], []
    for group in groups:
        chunks = [group.findings[i : i + PER_PAGE] for i in range(0, len(group.findings), PER_PAGE)]
        if len(chunks) <= 1:
            shown.append(group)
            continue
        paths = [f"{page}/{slug(group.kind)}-{n + 1}.html" for n in range(len(chunks))]
        pages = [(str(n + 1), p) for n, p in enumerate(paths)]
        shown.append(replace(group, findings=chunks[0], total=len(group.findings), pages=pages))
        for n, chunk in enumerate(chunks):
            part = replace(group, findings=chunk, total=len(group.findings), pages=pages)
            context = FindingsContext(
                f"{group.title} ({n + 1} of {len(chunks)})", intro, [part], None
            )
            files.append(site.render(template, paths[n], context, page))
    context = FindingsContext(
        title=title,
        intro=intro,
        groups=shown,
        missing=None if groups else missing_text(site, title.lower(), kinds),
        errors=dict(site.analysed.errors),
    )
    return [site.render(template, path, context, page), *files]


def render_evidence_pages(site: Site) -> list[RenderedPage]:
    """One page per finding listing its evidence rows, each linked to its anchor."""
    # every row's run, by row id: also what tells a row of this store (a finding may name rows
    # that are not), a dict lookup in C for the ~330,000 evidence rows of a big store's site
    run_of = dict(
        zip(*(site.results[name].to_numpy(object) for name in ("row_id", "run_id")), strict=True)
    )
    pages = []
    for finding, view in zip(site.findings, site.finding_views(site.findings), strict=True):
        known = [row for row in finding.evidence if row in run_of]
        runs = Counter(map(run_of.__getitem__, known))
        context = EvidenceContext(
            finding=view,
            links=[site.row_links[row] for row in known[:EVIDENCE_LISTED]],
            total=len(known),
            runs=[(str(run), site.run_path(str(run)), count) for run, count in runs.items()],
            unknown=len(finding.evidence) - len(known),
        )
        pages.append(site.render("evidence.html", view.evidence_href, context, "findings"))
    return pages
