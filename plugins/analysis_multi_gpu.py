"""What do several GPUs buy? Scaling efficiency of data-parallel training, FSDP's memory, and
all-reduce bandwidth, from the distributed workloads.

Strong scaling (fixed global batch): efficiency = T1 / (N · TN), with T the step time.
Weak scaling (fixed batch per GPU): efficiency = throughput(N) / (N · throughput(1)), which
with a fixed per-GPU batch equals T1 / TN. 100% means N GPUs do N times the work per second.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from benchsite.plugins._findings import (
    bytes_text,
    case_text,
    finding,
    latest_ok,
    metric,
    not_measured,
    percent,
)

from benchsite import Analysis, Finding, hookimpl

DDP, FSDP, ALLREDUCE = "ddp-train", "fsdp-train", "allreduce"


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="multi-gpu",
            description="Data-parallel scaling efficiency, FSDP vs DDP memory, all-reduce bandwidth.",
            analyze=multi_gpu_findings,
        )
    ]


def distributed_rows(results: pd.DataFrame) -> pd.DataFrame:
    rows = latest_ok(results)
    if rows.empty:
        return rows
    rows = rows[rows["workload"].isin([DDP, FSDP, ALLREDUCE])]
    sizes = [int(p.get("world_size", w if w == w else 1)) for p, w in
             zip(rows["p"], rows["world_size"], strict=True)]
    return rows.assign(n=sizes)


def multi_gpu_findings(results: pd.DataFrame) -> list[Finding]:
    rows = distributed_rows(results)
    if rows.empty:
        return [not_measured(
            "multi-gpu", ["not-measured"], "Several GPUs: not measured",
            "This store holds no multi-GPU result, so it cannot say what several GPUs buy.",
            explanation="Run `benchsite run -w ddp-train -w fsdp-train -w allreduce` on a "
            "machine with two or more GPUs, into the same store.",
        )]  # fmt: skip
    return [*scaling_findings(rows), *fsdp_findings(rows), *allreduce_findings(rows)]


def scaling_findings(rows: pd.DataFrame) -> list[Finding]:
    ddp = rows[rows["workload"] == DDP]
    ddp = ddp.assign(series=[case_text(p, skip=["world_size"]) for p in ddp["p"]])
    out = []
    for (host, kind, series), group in ddp.groupby(["host", "device_kind", "series"], sort=True):
        group = group.sort_values("n")
        if group["n"].iloc[0] == 1 and len(group) >= 2:
            out.append(_scaling(str(host), str(kind), str(series), group))
    return out


def efficiency(one: Any, many: Any) -> float:
    """Scaling efficiency of ``many`` (N ranks) against ``one`` (1 rank); see the docstring."""
    n = int(many.n)
    if one.p.get("scaling") == "weak":
        if one.items_per_s == one.items_per_s and many.items_per_s == many.items_per_s:
            return float(many.items_per_s) / (n * float(one.items_per_s))
        return float(one.median_s) / float(many.median_s)
    return float(one.median_s) / (n * float(many.median_s))


def _scaling(host: str, kind: str, series: str, group: pd.DataFrame) -> Finding:
    one, rest = group.iloc[0], list(group.iloc[1:].itertuples())
    effs = {int(r.n): efficiency(one, r) for r in rest}
    top = max(effs)
    mode = one.p.get("scaling", "strong")
    answer = (
        f"On {host}, data-parallel training ({series}) on {top} {kind.upper()} devices runs at "
        f"{percent(effs[top])} scaling efficiency ({mode} scaling): {top} devices do "
        f"{effs[top] * top:.2f}× the work of one per second."
    )
    return finding(
        "multi-gpu",
        [host, kind, series],
        f"Data-parallel scaling: {series}",
        answer,
        explanation="\n".join(f"- {n} devices: {percent(e)}" for n, e in sorted(effs.items())),
        numbers={"efficiency": effs, "scaling": mode},
        evidence=group["row_id"],
        scope={"hosts": [host], "workloads": [DDP]},
        strength="moderate",
        workload=DDP,
    )


def fsdp_findings(rows: pd.DataFrame) -> list[Finding]:
    key = "memory.gpu_peak_allocated_bytes"
    rows = rows.assign(peak=[metric(r, key) for r in rows.itertuples()],
                       series=[case_text(p, skip=["scaling", "batch"]) for p in rows["p"]])
    ddp = {(r.host, r.series, r.n): r for r in rows[rows["workload"] == DDP].itertuples()
           if r.peak}
    out = []
    for row in rows[rows["workload"] == FSDP].itertuples():
        base = ddp.get((row.host, row.series, row.n))
        if base is not None and row.peak:
            out.append(finding(
                "multi-gpu", [row.host, "fsdp", row.series],
                f"FSDP vs DDP memory per GPU ({row.series})",
                f"Sharding the model with FSDP over {row.n} GPUs needs {bytes_text(row.peak)} "
                f"per GPU against {bytes_text(base.peak)} with DDP "
                f"({percent(1 - row.peak / base.peak)} less).",
                numbers={"fsdp_bytes": row.peak, "ddp_bytes": base.peak, "world_size": row.n},
                evidence=[row.row_id, base.row_id], workload=FSDP,
                scope={"hosts": [str(row.host)], "workloads": [FSDP, DDP]},
            ))  # fmt: skip
    return out


def allreduce_findings(rows: pd.DataFrame) -> list[Finding]:
    out = []
    for (host, kind, n), group in rows[rows["workload"] == ALLREDUCE].groupby(
        ["host", "device_kind", "n"], sort=True
    ):
        values = [(metric(r, "busbw_gbps") or metric(r, "allreduce.busbw_gbps")
                   or (r.gbps if r.gbps == r.gbps else None), r) for r in group.itertuples()]
        values = [(v, r) for v, r in values if v]
        if values:
            best, row = max(values, key=lambda item: item[0])
            out.append(finding(
                "multi-gpu", [host, kind, n, "allreduce"], f"All-reduce bandwidth, {n} ranks",
                f"All-reduce between {n} {str(kind).upper()} ranks on {host} reaches {best:.3g} "
                f"GB/s bus bandwidth at best ({case_text(row.p)}).",
                numbers={"busbw_gbps": best, "world_size": int(n)},
                evidence=[r.row_id for _, r in values], workload=ALLREDUCE,
                scope={"hosts": [str(host)], "workloads": [ALLREDUCE]},
            ))  # fmt: skip
    return out
