"""Text descriptions of the charts, for screen readers and for readers without JavaScript.

Each mirrors a function of :mod:`benchsite.site.charts` and says in words what its chart shows:
the numbers at the ends of every line, so that the description alone answers the question.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from benchsite.site import charts
from benchsite.site.charts import is_missing
from benchsite.units import format_bytes, format_number, format_rate_in, format_seconds

XText = Callable[[Any], str]  # an axis value in words: ``1 GiB`` for a copy's size


def _ends(frame: pd.DataFrame, value: str, fmt: object, x_text: XText = format_number) -> str:
    """``cpu (dtype=fp32): 12 µs at 64 → 2.1 s at 8192`` for every series and variant: the
    first and last point along the axis that has each number. In plain Python: a sort and a
    group-by in pandas cost ~6 ms a chart, for a few hundred points."""
    groups: dict[tuple[Any, Any], list[tuple[Any, Any]]] = {}
    columns = (frame[name].tolist() for name in ("series", "variant", "axis_value", value))
    for series, variant, x, y in zip(*columns, strict=True):
        if not (is_missing(series) or is_missing(variant)):  # as a group-by: keyless rows go
            groups.setdefault((series, variant), []).append((x, y))
    parts = []
    for (series, variant), points in sorted(groups.items(), key=lambda item: item[0]):
        points.sort(
            key=lambda point: (is_missing(point[0]), 0 if is_missing(point[0]) else point[0])
        )
        xs = [x for x, _ in points if not is_missing(x)] or [math.nan]
        ys = [y for _, y in points if not is_missing(y)] or [math.nan]
        label = series if variant == "all" else f"{series} ({variant})"
        text = f"{fmt(ys[0])} at {x_text(xs[0])}"  # type: ignore[operator]
        if len(points) > 1:
            text += f" → {fmt(ys[-1])} at {x_text(xs[-1])}"  # type: ignore[operator]
        parts.append(f"{label}: {text}")
    return "; ".join(parts)


def time_text(frame: pd.DataFrame, axis: str, x_text: XText = format_number) -> str:
    return (
        f"Median time per call against {axis}, per device. "
        + _ends(charts.time_data(frame), "median_s", format_seconds, x_text)
        + "."
    )


def speedup_text(
    frame: pd.DataFrame, crossings: pd.DataFrame, axis: str, x_text: XText = format_number
) -> str:
    shown = charts.speedup_data(frame)
    text = f"Speedup over the CPU against {axis}. " + _ends(shown, "speedup", _times, x_text) + "."
    if shown["series"].nunique() < frame["series"].nunique():  # hosts folded: no line per host
        return text + " Where each host's accelerator overtakes its CPU: see the findings."
    for row in crossings.itertuples():
        # a crossing that rests on a flagged pair says so, as the findings and overview do
        flagged = f" (flagged {', '.join(row.reasons)})" if row.reasons else ""
        if row.where == "between":  # the chart's dashed line, and the measured sizes around it
            text += (
                f" {row.series} ({row.variant}) overtakes the CPU from {axis} ≈ "
                f"{x_text(round(row.crossover))} (interpolated between the measured "
                f"{x_text(row.below[0])} and {x_text(row.above[0])}){flagged}."
            )
        elif row.where == "below":
            text += f" {row.series} ({row.variant}) is faster at every measured {axis}{flagged}."
        else:
            text += (
                f" {row.series} ({row.variant}) is not faster at the largest measured "
                f"{axis}{flagged}."
            )
    return text


def rate_text(
    frame: pd.DataFrame, axis: str, column: str, unit: str, x_text: XText = format_number
) -> str:
    return (
        f"Throughput in {unit} against {axis}, per device. "
        + _ends(charts.rate_data(frame, column), "rate", lambda v: format_rate_in(v, unit), x_text)
        + "."
    )


def memory_text(frame: pd.DataFrame, axis: str, x_text: XText = format_number) -> str:
    parts = []
    for metric, group in charts.memory_data(frame).groupby("metric", sort=True):
        parts.append(f"{metric}: " + _ends(group, "value", format_bytes, x_text))
    return f"Peak memory against {axis}. " + " | ".join(parts) + "."


def headline_text(frame: pd.DataFrame) -> str:
    shown = charts.headline_data(frame)
    folded = len(shown) < len(frame)  # the hosts of a model as one: its range is the hosts'
    spread = "hosts from" if folded else "95% interval"
    parts = [
        f"{row.workload} ({row.variant}) on {row.series}: {_times(row.speedup)} "
        f"({spread} {_times(row.low)}–{_times(row.high)})"
        for row in shown.itertuples()
    ]
    return "Speedup over the CPU at the largest size measured on both. " + "; ".join(parts) + "."


def runs_text(frame: pd.DataFrame) -> str:
    parts = []
    for host, group in frame.groupby("host", sort=True):
        first, last = group["started"].min(), group["started"].max()
        when = (
            f"on {first:%Y-%m-%d}"
            if f"{first:%Y-%m-%d}" == f"{last:%Y-%m-%d}"
            else f"from {first:%Y-%m-%d} to {last:%Y-%m-%d}"
        )
        runs = f"{len(group)} run" + ("s" if len(group) != 1 else "")
        parts.append(f"{host}: {runs} {when}, {int((group['failed'] > 0).sum())} with failed cases")
    return "Runs over time per host. " + "; ".join(parts) + "."


def _times(value: float) -> str:
    return f"{value:.3g}×"
