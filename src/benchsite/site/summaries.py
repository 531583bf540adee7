"""Summaries several pages share: when and where the store was measured, one line per workload,
and what to run when something the site would show is missing."""

from __future__ import annotations

import shlex

import pandas as pd

from benchsite.site.context import Measured, WorkloadSummary
from benchsite.site.renderer import Site
from benchsite.site.views import FAILED


def measured(site: Site) -> Measured:
    """When and where: every host, and every device (or group of devices) that ran a case —
    one named only by a skipped row (``cuda×4`` on a two-GPU machine) was never measured."""
    results = site.results
    ran = _ran(results)
    return Measured(
        hosts=sorted(map(str, results["host"].unique())),
        devices=sorted({f"{h} · {d}" for h, d in zip(ran["host"], ran["device"], strict=True)}),
        runs=int(results["run_id"].nunique()),
        rows=len(results),
        first=f"{results['timestamp'].min():%Y-%m-%d %H:%M} UTC",
        last=f"{results['timestamp'].max():%Y-%m-%d %H:%M} UTC",
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
    """The commands that re-measure ``workload``'s current rows, one per host's profile."""
    rows = site.current[site.current["workload"] == workload]
    commands = []
    for (host, profile), group in rows.groupby(["host", "profile"], sort=True):
        devices = " ".join(f"-d {shlex.quote(str(d))}" for d in sorted(set(group["device"])))
        commands.append(
            f"benchsite run -w {shlex.quote(workload)} {devices} --{profile} "
            f"--host {shlex.quote(str(host))}"
        )
    return commands
