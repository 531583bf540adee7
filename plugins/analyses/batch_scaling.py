"""Which batch size pays? Throughput (items/s, in the workload's item: images/s, tokens/s)
against batch size on each device.

A bigger batch keeps a GPU's thousands of lanes busy, until it does not. For each series of
cases that differ only in ``batch``, the saturation point is the smallest measured batch whose
throughput is within 10% of the best measured at any batch: no larger batch buys more than 10%,
only latency and memory. (A dip between two batches does not end the curve: mlp-infer on a
2-core CPU dips at batch 4 and is 2.8× faster at batch 512 than at batch 1.) The finding gives the items/s there on each device, and a
recommendation names that batch. The curves are :meth:`benchsite.tables.Tables.scaling`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.charts import line_chart
from benchsite.toolkit.findings import (
    answered,
    case_text,
    device_labels,
    finding,
    percent,
    with_case,
)
from benchsite.units import format_rate_in

if TYPE_CHECKING:
    from benchsite.tables import Tables

GROWTH = 0.10


@dataclass(frozen=True)
class Saturation:
    """Where throughput of one series stops growing: ``batch`` (``None`` if it never does)."""

    host: str
    device: str
    workload: str
    case: str
    batch: float | None
    items_per_s: float
    largest: float
    largest_items_per_s: float
    points: tuple[tuple[float, float], ...]
    evidence: tuple[str, ...]
    unit: str = "items/s"  # what items_per_s counts: images/s, tokens/s

    def rate(self, value: float) -> str:
        return format_rate_in(value, self.unit)


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="batch-scaling",
            description="Throughput vs batch per device; the smallest batch within 10% of the best.",
            analyze=batch_scaling_findings,
        )
    ]


def saturation_table(tables: Tables) -> list[Saturation]:
    from benchsite.tables import CALLS

    curve = tables.scaling("batch")
    curve = curve[curve["rate_unit"] != CALLS]
    if curve.empty:
        return []
    extra = tables.ok.set_index("row_id")[["p", "device_model"]]
    rows = curve.join(extra, on="row_id").rename(columns={"x": "axis_value", "rate": "items_per_s"})
    rows = rows.assign(
        series=[case_text(p, skip=["batch"]) for p in rows["p"]],
        label=device_labels(rows),
    )
    out = []
    for _, series in rows.groupby(["host", "label", "workload", "series"], sort=True):
        if series["axis_value"].nunique() >= 2:
            out.append(saturation(series.sort_values("axis_value")))
    return out


def saturation(series: pd.DataFrame) -> Saturation:
    """The saturation point of one series sorted by batch (see the module docstring)."""
    xs, ys = list(series["axis_value"].astype(float)), list(series["items_per_s"].astype(float))
    best = max(ys)
    index = next(i for i, y in enumerate(ys) if y * (1 + GROWTH) >= best)
    index = index if index < len(ys) - 1 else None  # the largest batch: it still grows
    first = series.iloc[0]
    return Saturation(
        host=str(first.host),
        device=str(first.label),
        workload=str(first.workload),
        case=str(first.series),
        batch=xs[index] if index is not None else None,
        items_per_s=ys[index] if index is not None else ys[-1],
        largest=xs[-1],
        largest_items_per_s=ys[-1],
        points=tuple(zip(xs, ys, strict=True)),
        evidence=tuple(series["row_id"]),
        unit=str(first.rate_unit),
    )


def batch_scaling_findings(tables: Tables) -> list[Finding]:
    saturations = saturation_table(tables)
    grouped: dict[tuple[str, str, str], list[Saturation]] = {}
    for item in saturations:
        grouped.setdefault((item.host, item.workload, item.case), []).append(item)
    advice = [batch_advice(s) for s in saturations if s.batch is not None]
    return [_finding(items) for items in grouped.values()] + advice


def batch_advice(s: Saturation) -> Finding:
    """A recommendation: the batch beyond which throughput stops growing on one device."""
    return answered(
        "recommendation",
        f"batch-{s.host}-{s.device}-{s.workload}-{s.case}",
        f"{s.workload}: batch size on the {s.device}",
        f"On the {s.device}, use batch {s.batch:,.0f} for {with_case(s.workload, s.case)}: "
        f"no larger measured batch adds more than {percent(GROWTH)} throughput; they only cost "
        "memory and latency.",
        s.evidence,
        workload=s.workload,
        explanation="Limit: only the measured batch sizes were tried; a batch between two "
        "measured ones may do as well.",
    )


def describe(s: Saturation) -> str:
    """One sentence for one device."""
    if s.batch is None:
        return (
            f"on the {s.device}, throughput still grows at the largest measured batch "
            f"({s.largest:,.0f}: {s.rate(s.largest_items_per_s)})"
        )
    x_best, _ = max(s.points, key=lambda point: point[1])
    if x_best == s.batch:
        return (
            f"on the {s.device}, throughput is highest at batch {s.batch:,.0f} of those "
            f"measured ({s.rate(s.items_per_s)})"
        )
    return (
        f"on the {s.device}, throughput comes within {percent(GROWTH)} of its best at batch "
        f"{s.batch:,.0f} ({s.rate(s.items_per_s)}; {_best(s)})"
    )


def _best(s: Saturation) -> str:
    x_best, y_best = max(s.points, key=lambda point: point[1])
    return f"best {s.rate(y_best)} at batch {x_best:,.0f}"


def _finding(items: list[Saturation]) -> Finding:
    head = items[0]
    answer = (
        f"{with_case(head.workload, head.case)}: " + "; ".join(describe(s) for s in items) + "."
    )
    axis = f"throughput ({head.unit})"  # the chart's axis title
    data = pd.DataFrame(
        [(s.device, x, y) for s in items for x, y in s.points],
        columns=["device", "batch", axis],
    )
    return finding(
        "batch-scaling",
        [head.host, head.workload, head.case],
        f"{head.workload}: which batch size saturates each device",
        answer,
        explanation=(
            f"Throughput is {head.unit} of the median call. Batch sizes are the "
            "measured ones; the batch named is the smallest whose throughput is within "
            f"{percent(GROWTH)} of the best measured at any batch."
        ),
        numbers={
            s.device: {"saturation_batch": s.batch, "items_per_s": s.items_per_s} for s in items
        },
        evidence=[row for s in items for row in s.evidence],
        scope={
            "hosts": [head.host],
            "devices": [s.device for s in items],
            "workloads": [head.workload],
        },
        strength="moderate",
        chart=line_chart(data, "batch", axis, "Throughput vs batch", "device"),
        workload=head.workload,
    )
