"""Pages made of findings: all findings grouped by kind, or one kind (FAQ, recommendations,
claims). What analysis plugins produced is shown as is; where they produced nothing the page
says plainly what is missing and what to run."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from benchsite.records import Finding, RenderedPage
from benchsite.site.context import EvidenceContext, FindingGroup, FindingsContext
from benchsite.site.renderer import Site, slug
from benchsite.site.summaries import what_to_run

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
    """Findings grouped by kind, known kinds in their usual order, then any others."""
    chosen = [f for f in site.findings if kinds is None or f.kind in kinds]
    order = [kind for kind in KIND_TITLES if any(f.kind == kind for f in chosen)]
    order += sorted({f.kind for f in chosen} - set(order))
    return [
        FindingGroup(
            kind,
            KIND_TITLES.get(kind, kind.replace("-", " ").capitalize()),
            site.finding_views(by_strength([f for f in chosen if f.kind == kind])),
        )
        for kind in order
    ]


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
    site: Site, *, page: str, path: str, title: str, intro: str,
    kinds: tuple[str, ...] | None, template: str,
) -> list[RenderedPage]:
    """One page of findings of ``kinds`` (``None``: every kind); a kind with more findings than
    :data:`PER_PAGE` shows the strongest and continues on numbered pages of its own."""
    groups = grouped(site, kinds)
    files, shown = [], []
    for group in groups:
        chunks = [group.findings[i:i + PER_PAGE] for i in range(0, len(group.findings), PER_PAGE)]
        if len(chunks) <= 1:
            shown.append(group)
            continue
        paths = [f"{page}/{slug(group.kind)}-{n + 1}.html" for n in range(len(chunks))]
        pages = [(str(n + 1), p) for n, p in enumerate(paths)]
        shown.append(replace(group, findings=chunks[0], total=len(group.findings), pages=pages))
        for n, chunk in enumerate(chunks):
            part = replace(group, findings=chunk, total=len(group.findings), pages=pages)
            context = FindingsContext(f"{group.title} ({n + 1} of {len(chunks)})", intro,
                                      [part], None)
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
    run_of = dict(zip(site.results["row_id"], site.results["run_id"], strict=True))
    pages = []
    for finding, view in zip(site.findings, site.finding_views(site.findings), strict=True):
        known = [row for row in finding.evidence if row in site.row_links]
        runs = Counter(run_of[row] for row in known)
        context = EvidenceContext(
            finding=view,
            links=[site.row_links[row] for row in known[:EVIDENCE_LISTED]],
            total=len(known),
            runs=[(str(run), site.run_path(str(run)), count) for run, count in runs.items()],
            unknown=len(finding.evidence) - len(known),
        )
        pages.append(site.render("evidence.html", view.evidence_href, context, "findings"))
    return pages
