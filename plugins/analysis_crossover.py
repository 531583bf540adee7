"""From which size on does the GPU pay? The crossover of each size- or batch-swept workload.

For each series of cases that differ only in the swept parameter (``size`` or ``batch``), the
crossover is the smallest value from which the GPU is faster at every larger measured value.
Between the last measured value where the CPU wins and the first where the GPU wins, the
speedup is interpolated linearly on log-log axes (speedups and sizes both grow
multiplicatively) and the answer says so. Series timed with host↔device copies
(``include_transfer``) get their own crossover, shown next to the one without.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pandas as pd
from benchsite.plugins._findings import (
    case_text,
    column_groups,
    finding,
    number_text,
    per_frame,
    ratio,
    with_case,
)
from benchsite.plugins._speedups import speedup_table

from benchsite import Analysis, Finding, hookimpl

SWEPT = ("size", "batch")


@dataclass(frozen=True)
class Crossover:
    """Where one series crosses 1×: ``outcome`` is ``crosses``, ``gpu-always`` or ``cpu-always``.

    ``value`` is the interpolated crossover (``crosses``), ``below``/``above`` the measured
    values around it, and ``first``/``last`` the smallest and largest measured values.
    """

    host: str
    gpu_label: str
    cpu_label: str
    workload: str
    axis: str
    case: str
    include_transfer: bool
    outcome: str
    value: float | None
    below: tuple[float, float] | None  # (axis value, speedup) where the CPU still wins
    above: tuple[float, float] | None  # (axis value, speedup) from where the GPU wins
    first: tuple[float, float] = (math.nan, math.nan)
    last: tuple[float, float] = (math.nan, math.nan)
    evidence: tuple[str, ...] = field(default=())


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="crossover",
            description="The smallest size or batch at which the GPU wins, with and without copies.",
            analyze=crossover_findings,
        )
    ]


def crossover_table(results: pd.DataFrame) -> list[Crossover]:
    """Every series' crossover (cached per results frame)."""
    return per_frame("crossovers", results, lambda: _build(speedup_table(results)))


def _build(table: pd.DataFrame) -> list[Crossover]:
    swept = table[table["axis"].isin(SWEPT) & table["axis_value"].notna()]
    if swept.empty:
        return []
    swept = swept.assign(
        series=[_series_key(p, a) for p, a in zip(swept["params"], swept["axis"], strict=True)]
    )
    keys = ["host", "gpu_device", "workload", "series", "include_transfer"]
    groups = column_groups(swept, keys, SERIES_COLUMNS, order_by="axis_value")
    return [series_crossover(series) for series in groups if len(set(series["axis_value"])) >= 2]


SERIES_COLUMNS = ("axis_value", "speedup", "host", "gpu_label", "cpu_label", "workload", "axis",
                  "series", "include_transfer", "cpu_row", "gpu_row")


def _series_key(params: dict, axis: str) -> str:
    return case_text(params, skip=[axis, "include_transfer"])


def series_crossover(series: Mapping[str, list[Any]]) -> Crossover:
    """The crossover of one series sorted by the swept value (see the module docstring);
    ``series`` holds the :data:`SERIES_COLUMNS` of its rows."""
    xs, ss = [float(x) for x in series["axis_value"]], [float(s) for s in series["speedup"]]
    first = SimpleNamespace(**{name: values[0] for name, values in series.items()})
    start = len(ss)
    while start > 0 and ss[start - 1] >= 1:
        start -= 1
    below = (xs[start - 1], ss[start - 1]) if start > 0 else None
    above = (xs[start], ss[start]) if start < len(ss) else None
    outcome = "gpu-always" if start == 0 else "cpu-always" if above is None else "crosses"
    value = _interpolate(below, above) if outcome == "crosses" else None
    return Crossover(
        host=str(first.host), gpu_label=str(first.gpu_label), cpu_label=str(first.cpu_label),
        workload=str(first.workload), axis=str(first.axis), case=str(first.series),
        include_transfer=bool(first.include_transfer), outcome=outcome, value=value,
        below=below, above=above, first=(xs[0], ss[0]), last=(xs[-1], ss[-1]),
        evidence=tuple(series["cpu_row"]) + tuple(series["gpu_row"]),
    )  # fmt: skip


def _interpolate(below: tuple[float, float] | None, above: tuple[float, float] | None) -> float:
    """The value where speedup = 1 on the log-log line through ``below`` and ``above``."""
    assert below is not None and above is not None
    (x0, s0), (x1, s1) = below, above
    if s1 == s0 or s0 <= 0 or s1 <= 0:
        return x1
    t = -math.log(s0) / (math.log(s1) - math.log(s0))
    return math.exp(math.log(x0) + t * (math.log(x1) - math.log(x0)))


# -- findings ------------------------------------------------------------------------------------


def crossover_findings(results: pd.DataFrame) -> list[Finding]:
    crossings = crossover_table(results)
    grouped: dict[tuple[str, str, str, str], list[Crossover]] = {}
    for item in crossings:
        grouped.setdefault((item.host, item.gpu_label, item.workload, item.case), []).append(item)
    return [_finding(items) for items in grouped.values()]


def _finding(items: list[Crossover]) -> Finding:
    items = sorted(items, key=lambda c: c.include_transfer)
    head = items[0]
    sentences = [describe(c) for c in items]
    answer = " ".join(sentences)
    explanation = "\n".join(f"- {_detail(c)}" for c in items) + (
        "\n- Speedups between measured values are interpolated on log-log axes; the "
        "crossover is an estimate between the two measured values named, not a measurement."
    )
    return finding(
        "crossover",
        [head.host, head.gpu_label, head.workload, head.case],
        f"{with_case(head.workload, head.case)}: where the GPU starts to win",
        answer,
        explanation=explanation,
        numbers={_key(c): c.value if c.value is not None else c.outcome for c in items},
        evidence=[row for c in items for row in c.evidence],
        scope={
            "hosts": [head.host],
            "devices": [head.gpu_label, head.cpu_label],
            "workloads": [head.workload],
        },
        strength="moderate" if any(c.outcome == "crosses" for c in items) else "strong",
        workload=head.workload,
    )


def _key(c: Crossover) -> str:
    return "with_transfer" if c.include_transfer else "without_transfer"


def describe(c: Crossover) -> str:
    """One sentence: where the GPU wins in one series."""
    copies = " including host↔device copies" if c.include_transfer else ""
    where = f"{with_case(c.workload, c.case)} on the {c.gpu_label}{copies}"
    if c.outcome == "gpu-always":
        return (
            f"{where}: the GPU wins at every measured {c.axis}, from the smallest "
            f"({number_text(c.first[0])}: {ratio(c.first[1])}); smaller ones were not measured."
        )
    if c.outcome == "cpu-always":
        return (
            f"{where}: the CPU wins at every measured {c.axis}, up to the largest "
            f"({number_text(c.last[0])}: GPU {ratio(c.last[1])})."
        )
    assert c.below is not None and c.above is not None
    return (
        f"{where}: the GPU is faster from {c.axis} ≈ {number_text(c.value)} on (interpolated between "
        f"the measured {number_text(c.below[0])} and {number_text(c.above[0])})."
    )


def _detail(c: Crossover) -> str:
    copies = "with copies" if c.include_transfer else "without copies"
    if c.outcome != "crosses" or c.below is None or c.above is None:
        return (
            f"{copies}: measured from {c.axis} {number_text(c.first[0])} ({ratio(c.first[1])}) to "
            f"{number_text(c.last[0])} ({ratio(c.last[1])})."
        )
    return (
        f"{copies}: at {c.axis} {number_text(c.below[0])} the GPU is at {ratio(c.below[1])} (the CPU "
        f"wins), at {number_text(c.above[0])} at {ratio(c.above[1])}; the crossover ≈ {number_text(c.value)} "
        "lies between them."
    )
