"""Reference results in words: the one wording of a number drawn from another store.

Every number from a reference (:mod:`benchsite.tables.reference`) is said with where it came
from — the reference, its host, the day it was measured and the benchsite version that
measured it — and a comparison of the user's CPU with a reference's accelerator says that the
two sat in different machines. The overview and the FAQ both word them here, so a reader sees
the same sentence on both.

This module may change between minor versions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from benchsite.units import format_ratio, format_seconds, param_words, plural

__all__ = [
    "ADD_REFERENCE",
    "DIFFERENT_MACHINES",
    "ReferenceBlock",
    "ReferenceLine",
    "Standing",
    "StandingLine",
    "at_text",
    "cpu_text",
    "gpu_text",
    "has_accelerator",
    "labels",
    "lacking_texts",
    "line",
    "lines_of",
    "reference_block",
    "source_text",
    "standing_views",
]

ADD_REFERENCE = "benchsite build --reference h200"
MAX_STANDING = 12  # device models the hardware page ranks (a fleet's Compare page has them all)
DIFFERENT_MACHINES = (
    "The two devices sat in different machines (and were measured on different days), so "
    "the ratio compares machines as much as devices: a reference answers what a GPU would buy, "
    "not what this machine measured."
)


@dataclass(frozen=True)
class ReferenceLine:
    """One workload's comparison of the user's CPU with a reference accelerator, in words."""

    workload: str
    case: str
    at: str
    cpu: str
    cpu_time: str
    gpu: str
    gpu_time: str
    speedup: str
    interval: str
    source: str
    cases: int
    text: str
    cpu_row: str
    evidence: str = ""  # the page of the CPU row, where the site links it
    cpu_median_s: float = math.nan  # the CPU's time, to pick the heaviest case by


def cpu_text(row: Any) -> str:
    """``your AMD EPYC, 2 cores`` (host ``cpu-2core``)."""
    cores = row.cpu_cores
    many = f", {int(cores)} cores" if isinstance(cores, int | float) and cores == cores else ""
    return f"your {row.cpu_label}{many}"


def source_text(row: Any) -> str:
    """``reference NAME: host HOST, measured YYYY-MM-DD, benchsite VERSION`` of the row."""
    day = pd.Timestamp(row.ref_date).strftime("%Y-%m-%d")
    return (
        f"reference {row.reference}: host {row.ref_host}, measured {day}, "
        f"benchsite {row.ref_version}"
    )


def gpu_text(row: Any) -> str:
    """``NVIDIA H200 (reference h200, 2026-12)``: the model, the reference and its month."""
    model = str(row.gpu_label).rsplit(" (", 1)[0]
    return f"{model} (reference {row.reference}, {pd.Timestamp(row.ref_date):%Y-%m})"


def line(row: Any, case: str, at: str) -> ReferenceLine:
    """One row of :attr:`benchsite.tables.Tables.cross_answers` in words; ``case`` and ``at``
    name its parameters and size (the page words them with the store's units)."""
    speedup = format_ratio(row.speedup) if row.speedup == row.speedup else "–"
    interval = (
        f"95% interval {format_ratio(row.low)} – {format_ratio(row.high)}"
        if row.speedup == row.speedup
        else "flagged: no trustworthy size"
    )
    cpu, gpu = cpu_text(row), gpu_text(row)
    cpu_time, gpu_time = format_seconds(row.cpu_median_s), format_seconds(row.gpu_median_s)
    return ReferenceLine(
        workload=str(row.workload),
        case=case,
        at=at,
        cpu=cpu,
        cpu_time=cpu_time,
        gpu=gpu,
        gpu_time=gpu_time,
        speedup=speedup,
        interval=interval,
        source=source_text(row),
        cases=int(row.cases),
        text=f"{cpu}: {cpu_time}; {gpu}: {gpu_time}; {speedup}",
        cpu_row=str(row.cpu_row),
        cpu_median_s=float(row.cpu_median_s),
    )


def at_text(row: Any, value_text: Any) -> str:
    """``at size 1,024``: the size of the answer, worded by ``value_text(workload, axis, v)``."""
    if row.axis is None or row.at_size != row.at_size:
        return ""
    return f"{param_words(row.axis)} {value_text(row.workload, str(row.axis), row.at_size)}"


def lacking_texts(lacks: pd.DataFrame) -> list[str]:
    """Per workload, the CPU cases no reference measured: ``cnn-infer: 3 of 3 cases (batch=1,
    …)``; a workload the references lack whole says so."""
    texts = []
    for row in lacks.itertuples():
        cases = plural(row.cases, "case")
        count = f"all {cases}" if row.lacking == row.cases else f"{row.lacking} of {cases}"
        count = "its one case" if row.cases == 1 else count
        more = ", …" if row.lacking > len(row.examples) else ""
        texts.append(f"{row.workload}: {count} ({'; '.join(row.examples)}{more})")
    return texts


@dataclass(frozen=True)
class ReferenceBlock:
    """The overview's reference answer: a line per workload, what the references lack, and
    (with no reference and no accelerator in the store) the one command that adds one."""

    lines: list[ReferenceLine]
    lacking: list[str]
    references: list[str]
    add_command: str | None
    note: str = DIFFERENT_MACHINES


def reference_block(site: Any) -> ReferenceBlock | None:
    """The block for ``site`` (a :class:`benchsite.site.Site`), or ``None`` when it has
    nothing to say: no reference, and the store measured an accelerator itself."""
    tables = site.tables
    if tables.references.empty:
        return None if has_accelerator(tables) else ReferenceBlock([], [], [], ADD_REFERENCE)
    lines = [replace(one, evidence=site.row_links[one.cpu_row].href) for one in lines_of(tables)]
    return ReferenceBlock(lines, lacking_texts(tables.reference_lacks), labels(tables), None)


def has_accelerator(tables: Any) -> bool:
    """Whether the store itself (not a reference) holds a row of an accelerator."""
    return bool((tables.rows["device_kind"].astype(str) != "cpu").any())


def labels(tables: Any) -> list[str]:
    """The labels of the references beside the store."""
    if tables.references.empty:
        return []
    return sorted(map(str, tables.references["reference"].unique()))


def lines_of(tables: Any) -> list[ReferenceLine]:
    """:attr:`benchsite.tables.Tables.cross_answers` in words, a line per CPU host and
    workload."""
    from benchsite.toolkit.findings import case_text

    return [
        line(row, case_text(row.params, skip=[str(row.axis)]), at_text(row, tables.value_text))
        for row in tables.cross_answers.itertuples()
    ]


@dataclass(frozen=True)
class StandingLine:
    """One workload's board, seen from one of the store's own device models."""

    workload: str
    kind: str
    case: str
    rank: int
    models: int
    percentile: str
    median: str
    tied: list[str]
    leader: str
    href: str


@dataclass(frozen=True)
class Standing:
    """Where one of the store's device models stands, workload by workload."""

    model: str
    kind: str
    lines: list[StandingLine]


def standing_views(site: Any) -> list[Standing]:
    """:attr:`benchsite.tables.Tables.standing` for each of the store's own device models: its
    rank among every model of its kind in the store and the references, per workload."""
    board = site.tables.standing
    if board.empty:
        return []
    found = []
    own = board[board["own"].astype(bool)]
    for (model, kind), rows in own.groupby(["model", "device_kind"], sort=True):
        lines = [_standing_line(site, board, row) for row in rows.itertuples()]
        found.append(Standing(str(model), str(kind), lines))
    found.sort(key=lambda standing: -len(standing.lines))  # a fleet's most measured first
    return found[:MAX_STANDING]


def _standing_line(site: Any, board: pd.DataFrame, row: Any) -> StandingLine:
    peers = board[(board["workload"] == row.workload) & (board["device_kind"] == row.device_kind)]
    others = peers[peers["model"] != row.model]
    tied = [
        str(m) for m, rank in zip(others["model"], others["rank"], strict=True) if rank == row.rank
    ]
    leader = peers.sort_values("median_s", kind="stable").iloc[0]
    interval = f"{format_seconds(row.ci_low_s)} – {format_seconds(row.ci_high_s)}"
    return StandingLine(
        workload=str(row.workload),
        kind=str(row.device_kind),
        case=str(row.case),
        rank=int(row.rank),
        models=int(row.models),
        percentile=f"{row.percentile:.0f}",
        median=f"{format_seconds(row.median_s)} ({interval})",
        tied=tied,
        leader=f"{leader['model']}: {format_seconds(leader['median_s'])}",
        href=site.row_links[str(row.row_id)].href,
    )
