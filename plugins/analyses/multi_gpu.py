"""What do several GPUs buy? Scaling of data-parallel (DDP, FSDP) and pipeline training over
devices, per-GPU memory of each, and all-reduce bandwidth, from the distributed workloads.

Strong scaling (a fixed global batch; the pipeline too): efficiency = T1 / (N · TN), with T the
step time. Weak scaling (a fixed batch per GPU): efficiency = throughput(N) / (N ·
throughput(1)). 100% means N devices do N times the work of one per second. Every comparison
stays within one host and one device kind: world sizes of different machines never mix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.charts import bar_chart, line_chart, stacked
from benchsite.toolkit.findings import (
    bytes_text,
    case_text,
    finding,
    is_accelerator,
    metric,
    not_measured,
    percent,
    reasons_text,
)
from benchsite.units import plural

if TYPE_CHECKING:
    from benchsite.tables import Tables

DDP, FSDP, PIPELINE, ALLREDUCE = "ddp-train", "fsdp-train", "pipeline-train", "allreduce"
TRAINING = (DDP, FSDP, PIPELINE)
METHOD = {DDP: "DDP", FSDP: "FSDP", PIPELINE: "pipeline"}
PEAK = "memory.gpu_peak_allocated_bytes"


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="multi-gpu",
            description="Scaling of DDP, FSDP and pipeline training over devices, their "
            "per-GPU memory, and all-reduce bandwidth.",
            analyze=multi_gpu_findings,
        )
    ]


def multi_gpu_findings(tables: Tables) -> list[Finding]:
    """Per host and device kind (accelerators first, then CPU process groups): what several
    devices buy, then each training case's scaling."""
    return [finding for host in _compute(tables) for part in host for finding in part]


def _compute(tables: Tables) -> list[tuple[list[Finding], list[Finding]]]:
    """(summary findings, per-case findings) of every host and device kind."""
    rows = distributed_rows(tables)
    if rows.empty:
        return [
            (
                [
                    not_measured(
                        "multi-gpu",
                        ["not-measured"],
                        "Several GPUs: not measured",
                        "This store holds no multi-GPU result, so it cannot say what several GPUs buy.",
                        explanation="Run `benchsite run -w ddp-train -w fsdp-train -w pipeline-train "
                        "-w allreduce` on a machine with two or more GPUs, into the same store.",
                    )
                ],
                [],
            )
        ]
    out = []
    groups = rows.groupby(["host", "device_kind"], sort=True, observed=True)
    for (host, kind), group in sorted(groups, key=lambda item: not is_accelerator(item[0][1])):
        curves = scaling_curves(tables, str(host), str(kind))
        summary = [*overview(str(host), str(kind), curves)]
        summary += [*memory_findings(str(host), str(kind), group), *allreduce_findings(group)]
        out.append((summary, scaling_findings(curves)))
    return out


def distributed_rows(tables: Tables) -> pd.DataFrame:
    """The newest ok row of every distributed case, with ``n`` (its world size) and ``series``
    (its parameters but the world size)."""
    rows = tables.ok
    if rows.empty:
        return rows
    rows = rows[rows["workload"].isin([*TRAINING, ALLREDUCE])]
    sizes = [
        int(p.get("world_size", w if w == w else 1))
        for p, w in zip(rows["p"], rows["world_size"], strict=True)
    ]
    series = [case_text(p, skip=["world_size"]) for p in rows["p"]]
    return rows.assign(n=sizes, series=series)


def scaling_curves(tables: Tables, host: str, kind: str) -> pd.DataFrame:
    """One row per training case of ``host`` and device ``kind`` measured at world size 1 and
    N > 1: ``gain`` (work per second at N over at 1) and ``efficiency`` as the world-size
    scaling curve of :meth:`benchsite.tables.Tables.scaling` defines them (with ``suspect`` and
    ``reasons``: an efficiency far above 1 is no measurement of scaling); the 1-device points are
    included (gain 1, efficiency 1) so the curves start where they should."""
    curve = tables.scaling("world_size")
    curve = curve[
        (curve["host"] == host) & (curve["device_kind"] == kind) & curve["workload"].isin(TRAINING)
    ]
    params = dict(zip(tables.ok["row_id"], tables.ok["p"], strict=True))
    points = []
    for (workload, _), runs in curve.groupby(["workload", "variant"], sort=True):
        one = runs.iloc[0]  # the curve is sorted by world size
        if one.x != 1 or len(runs) < 2:
            continue
        p = params[one.row_id]
        series = case_text(p, skip=["world_size"])
        points += [
            {
                "host": host,
                "kind": kind,
                "workload": workload,
                "series": series,
                "label": f"{METHOD[workload]}, {series}",
                "short": f"{METHOD[workload]} {p.get('model', '')}".strip(),
                "mode": p.get("scaling", "strong"),
                "devices": int(row.x),
                "efficiency": row.efficiency,
                "gain": row.gain,
                "row_id": row.row_id,
                "base_id": one.row_id,
                "suspect": row.suspect,
                "reasons": row.reasons,
                "uncertain": row.uncertain,
            }
            for row in runs.itertuples()
        ]
    return (
        pd.DataFrame(points).sort_values(["workload", "series", "devices"], kind="stable")
        if points
        else pd.DataFrame(points)
    )


MODES = {
    "strong": "with the same global batch (strong scaling)",
    "weak": "with the same batch per device (weak scaling)",
}


def members(kind: str, n: int) -> str:
    """``2 CUDA devices``; ``2 CPU processes`` (gloo ranks share one CPU)."""
    unit = "devices" if is_accelerator(kind) else "processes"
    return f"{n} {kind.upper()} {unit}"


def overview(host: str, kind: str, curves: pd.DataFrame) -> list[Finding]:
    """The host's scaling at its largest world size in one answer (strong and weak scaling said
    apart: they measure different things), with the curves as charts."""
    if curves.empty:
        return []
    top = int(curves["devices"].max())
    at_top = curves[(curves["devices"] == top) & ~curves["suspect"].astype(bool)]
    at_top = at_top.sort_values("gain", ascending=False)
    if at_top.empty:
        return []
    chart = stacked(
        line_chart(
            curves,
            "devices",
            "gain",
            "Work per second vs 1 device",
            "label",
            y_title="× one device's",
        ),
        line_chart(
            curves,
            "devices",
            "efficiency",
            "Scaling efficiency",
            "label",
            y_title="efficiency (1 = linear)",
        ),
    )
    spans = [(_span(same), MODES[mode]) for mode, same in at_top.groupby("mode", sort=True)]
    said = [f"{span} the work per second of one {mode}" for span, mode in spans[:1]]
    said += [f"{span} {mode}" for span, mode in spans[1:]]
    lines = [
        f"- {r.label}: {r.gain:.2f}× ({percent(r.efficiency)} efficiency, {r.mode} scaling)"
        for r in at_top.itertuples()
    ]
    return [
        finding(
            "multi-gpu",
            [host, kind, "scaling"],
            f"Scaling over {kind.upper()} devices on {host}",
            f"On {host}, {members(kind, top)} do {', and '.join(said)}.",
            explanation="\n".join(lines),
            chart=chart,
            numbers={"devices": top, "device_kind": kind},
            evidence=[*curves["row_id"], *curves["base_id"]],
            workload=DDP,
            scope={"hosts": [host], "workloads": sorted(set(curves["workload"]))},
            strength="strong" if is_accelerator(kind) else "moderate",
        )
    ]


def _span(points: pd.DataFrame) -> str:
    """``1.05× (FSDP transformer) to 1.52× (pipeline transformer)``, or one figure."""
    best, worst = points.iloc[0], points.iloc[-1]
    if len(points) == 1:
        return f"{best.gain:.2f}× ({best.short})"
    return f"{worst.gain:.2f}× ({worst.short}) to {best.gain:.2f}× ({best.short})"


def scaling_findings(curves: pd.DataFrame) -> list[Finding]:
    """One finding per training case: its efficiency at every measured world size."""
    out = []
    if curves.empty:
        return out
    for (workload, series), points in curves.groupby(["workload", "series"], sort=True):
        many = points[points["devices"] > 1]
        effs = {int(r.devices): float(r.efficiency) for r in many.itertuples()}
        top = max(effs)
        mode = points["mode"].iloc[0]
        first = points.iloc[0]
        suspect = points["suspect"].astype(bool)
        flagged = (
            "Suspect: flagged at the largest world size (see More). "
            if suspect[points["devices"] == top].any()
            else ""
        )
        out.append(
            finding(
                "multi-gpu",
                [first.host, first.kind, workload, series],
                f"{METHOD[workload]} scaling: {series}",
                f"{flagged}On {first.host}, {METHOD[workload]} training ({series}) on "
                f"{members(str(first.kind), top)} runs at "
                f"{percent(effs[top])} scaling efficiency ({mode} scaling): they do "
                f"{effs[top] * top:.2f}× the work of one per second.",
                explanation="\n".join(
                    f"- {plural(n, 'device')}: {percent(e)}" for n, e in sorted(effs.items())
                )
                + "".join(
                    f"\n- Suspect at {plural(int(r.devices), 'device')} "
                    f"({reasons_text(r.reasons)})."
                    for r in points[suspect].itertuples()
                )
                + "".join(
                    f"\n- Flagged at {plural(int(r.devices), 'device')} "
                    f"({reasons_text(r.uncertain)}): kept, with its wider uncertainty."
                    for r in points[~suspect].itertuples()
                    if r.uncertain
                ),
                numbers={"efficiency": effs, "scaling": mode, "device_kind": first.kind},
                evidence=[*points["row_id"], first.base_id],
                workload=workload,
                scope={"hosts": [first.host], "workloads": [workload]},
                strength="moderate",
            )
        )
    return out


def memory_findings(host: str, kind: str, group: pd.DataFrame) -> list[Finding]:
    """Per-GPU peak memory of DDP, FSDP and the pipeline at each world size above one, for the
    same model and global batch (strong scaling), against DDP on one device."""
    train = group[group["workload"].isin(TRAINING)]
    train = train.assign(peak=[metric(r, PEAK) for r in train.itertuples()])
    strong = [p.get("scaling", "strong") == "strong" for p in train["p"]]
    train = train[train["peak"].notna().to_numpy() & strong]
    model = [case_text(p, skip=["world_size", "scaling"]) for p in train["p"]]
    out = []
    for name, same in train.assign(model=model).groupby("model", sort=True):
        base = same[(same["workload"] == DDP) & (same["n"] == 1)]
        if base.empty or same["n"].max() < 2:
            continue
        out.append(_memory(host, kind, str(name), same, base.iloc[0]))
    return out


def _memory(host: str, kind: str, model: str, same: pd.DataFrame, base: Any) -> Finding:
    top = int(same["n"].max())
    at_top = same[same["n"] == top].sort_values("peak")
    parts = [
        f"{METHOD[r.workload]} {bytes_text(r.peak)} ({percent(1 - r.peak / base.peak)} less)"
        for r in at_top.itertuples()
    ]
    data = same.assign(method=same["workload"].map(METHOD), devices=same["n"].astype(str))
    return finding(
        "multi-gpu",
        [host, kind, model, "memory"],
        f"Memory per device over {top} devices ({model})",
        f"On {host}, training ({model}) on {members(kind, top)} needs at peak per device: "
        f"{'; '.join(parts)}, against {bytes_text(base.peak)} with DDP on one device.",
        explanation="Peak memory allocated by PyTorch on the busiest device (the slowest rank's "
        "row holds every rank's figure). The global batch is the same at every world size "
        "(strong scaling), so the per-device batch shrinks too; FSDP also shards the weights, "
        "gradients and optimizer state, the pipeline splits the layers.",
        chart=bar_chart(data, "method", "peak", "devices", "Peak memory per device (bytes)"),
        numbers={
            "devices": top,
            "ddp_one_device_bytes": base.peak,
            "peak_bytes": {METHOD[r.workload]: r.peak for r in at_top.itertuples()},
        },
        evidence=[base.row_id, *same["row_id"]],
        workload=FSDP,
        scope={"hosts": [host], "workloads": sorted(set(same["workload"]))},
    )


def allreduce_findings(group: pd.DataFrame) -> list[Finding]:
    """Bus bandwidth (nccl-tests' definition) at the largest message, per world size above one,
    with the whole curve over message sizes as a chart."""
    rows = group[(group["workload"] == ALLREDUCE) & (group["n"] > 1)]
    rows = rows.assign(
        busbw=[metric(r, "busbw_gbps") for r in rows.itertuples()],
        message=[float(p.get("size", 0)) for p in rows["p"]],
    )
    rows = rows[rows["busbw"].notna()]
    if rows.empty:
        return []
    host, kind = str(rows["host"].iloc[0]), str(rows["device_kind"].iloc[0])
    chart = line_chart(
        rows.assign(ranks=rows["n"].astype(str) + " ranks"),
        "message",
        "busbw",
        "All-reduce bus bandwidth vs message size",
        "ranks",
        x_title="message (bytes)",
        y_title="bus bandwidth (GB/s)",
    )
    out = []
    widest = rows["n"].max()  # the chart holds every rank count: draw it once
    for n, same in rows.groupby("n", sort=True):
        largest = same.sort_values("message").iloc[-1]
        best = same.sort_values("busbw").iloc[-1]
        out.append(
            finding(
                "multi-gpu",
                [host, kind, n, "allreduce"],
                f"All-reduce bandwidth, {n} ranks",
                f"All-reduce between {n} {kind.upper()} ranks on {host} moves "
                f"{largest.busbw:.3g} GB/s of bus bandwidth at {bytes_text(largest.message)} messages "
                f"(best {best.busbw:.3g} GB/s, at {bytes_text(best.message)}).",
                explanation="Bus bandwidth = message bytes / time × 2(n−1)/n, as nccl-tests defines "
                "it: comparable across rank counts, and against the link's own bandwidth.",
                chart=chart if n == widest else None,
                numbers={
                    "busbw_gbps": largest.busbw,
                    "best_busbw_gbps": best.busbw,
                    "world_size": int(n),
                },
                evidence=same["row_id"],
                workload=ALLREDUCE,
                scope={"hosts": [host], "workloads": [ALLREDUCE]},
            )
        )
    return out
