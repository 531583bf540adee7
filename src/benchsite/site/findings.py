"""Pages made of findings: all findings grouped by kind, or one kind (FAQ, recommendations,
claims). What analysis plugins produced is shown as is; where they produced nothing the page
says plainly what is missing and what to run."""

from __future__ import annotations

from benchsite.records import RenderedPage
from benchsite.site.context import FindingGroup, FindingsContext
from benchsite.site.renderer import Site
from benchsite.site.summaries import what_to_run

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


def grouped(site: Site, kinds: tuple[str, ...] | None = None) -> list[FindingGroup]:
    """Findings grouped by kind, known kinds in their usual order, then any others."""
    chosen = [f for f in site.findings if kinds is None or f.kind in kinds]
    order = [kind for kind in KIND_TITLES if any(f.kind == kind for f in chosen)]
    order += sorted({f.kind for f in chosen} - set(order))
    return [
        FindingGroup(
            kind,
            KIND_TITLES.get(kind, kind.replace("-", " ").capitalize()),
            site.finding_views([f for f in chosen if f.kind == kind]),
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
    site: Site,
    *,
    page: str,
    path: str,
    title: str,
    intro: str,
    kinds: tuple[str, ...] | None,
    template: str,
) -> list[RenderedPage]:
    """One page of findings of ``kinds`` (``None``: every kind)."""
    groups = grouped(site, kinds)
    context = FindingsContext(
        title=title,
        intro=intro,
        groups=groups,
        missing=None if groups else missing_text(site, title.lower(), kinds),
        errors=dict(site.analysed.errors),
    )
    return [site.render(template, path, context, page)]
