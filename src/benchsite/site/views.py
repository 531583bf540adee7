"""What templates show for one thing: a chart, a case row, a finding, an evidence link.

Templates receive these small records (already formatted numbers, already resolved relative
links), so that a template never computes and a user's theme can rely on plain fields.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from html import escape
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from benchsite.records import Finding
from benchsite.site.sanitize import markdown_html
from benchsite.units import format_number, format_rate_of, format_seconds

FAILED = ("error", "crash", "timeout", "oom")
CASE_COLUMNS = (
    "row_id",
    "host",
    "device",
    "workload",
    "params_text",
    "status",
    "error",
    "median_s",
    "ci_low_s",
    "ci_high_s",
    "iqr_s",
    "n_samples",
    "calls_per_sample",
    "tflops",
    "gbps",
    "items_per_s",
    "flags",
    "run_id",
)


@dataclass(frozen=True)
class ChartView:
    """One embedded chart: ``spec_json`` (HTML-safe JSON of the Vega-Lite spec), the static SVG
    for ``<noscript>`` (site-relative path) and the text description for screen readers."""

    id: str
    title: str
    spec_json: Markup
    svg: str
    text: str


@dataclass(frozen=True)
class CaseTable:
    """Result rows as the lines of a case table (``_macros.html``, ``case_table``), escaped and
    formatted once: ``html(show_workload, show_run, root)`` gives the ``<tr>`` lines.

    Each line has the anchor ``row-<row_id>``, the class ``failed`` for a failed row, host ·
    device, the parameters, the status, then the error text across the number columns or the
    median (with its validity flags), 95% CI, IQR, samples × calls and throughput; optionally
    the workload first and the run (a link) last. Written here, not in a template loop: a big
    store's run pages hold 100,000 rows, and a Jinja loop escaping ~16 fields a row took ~50 µs
    a row where this takes ~20.
    """

    lines: list[tuple[str, str, str, str, str]]  # <tr ...>, workload cell, cells, run href, time

    def __len__(self) -> int:
        return len(self.lines)

    def html(self, show_workload: bool = False, show_run: bool = True, root: str = "") -> Markup:
        parts = []
        for opening, workload, cells, run_href, stamp in self.lines:
            run = f'<td><a href="{root}{run_href}">{stamp}</a></td>' if show_run else ""
            parts.append(f"{opening}{workload if show_workload else ''}{cells}{run}</tr>\n")
        return Markup("".join(parts))


@dataclass(frozen=True)
class EvidenceLink:
    """A link to one result row a finding rests on."""

    href: str
    label: str


@dataclass(frozen=True)
class FindingView:
    """A finding ready to show: Markdown already sanitized, numbers formatted, evidence linked."""

    id: str
    kind: str
    title: str
    answer: Markup
    explanation: Markup
    strength: str
    numbers: list[tuple[str, str]]
    evidence: list[EvidenceLink]
    evidence_missing: int
    evidence_href: str
    question: str | None = None
    verdict: str | None = None
    workload: str | None = None
    workload_href: str | None = None
    scope: list[tuple[str, str]] = field(default_factory=list)
    chart: ChartView | None = None


def case_table(frame: pd.DataFrame, run_href: dict[str, str]) -> CaseTable:
    """The case table of every row of ``frame`` (prepared results), in frame order."""
    columns = {name: frame[name].tolist() for name in CASE_COLUMNS}
    stamps = minute_texts(frame["timestamp"])
    lines = [
        _case_line(dict(zip(columns, values, strict=True)), run_href, stamp)
        for values, stamp in zip(zip(*columns.values(), strict=True), stamps, strict=True)
    ]
    return CaseTable(lines)


def minute_texts(stamps: pd.Series) -> list[str]:
    """``2026-01-01 12:34`` for every (UTC) timestamp, formatted in one pass: one at a time
    they cost ~10 µs each, a second per run of a big store."""
    if stamps.dt.tz is not None:
        stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
    minutes = stamps.to_numpy().astype("datetime64[m]")
    return [text.replace("T", " ") for text in np.datetime_as_string(minutes, unit="m")]


def _case_line(row: dict[str, Any], run_href: dict[str, str], stamp: str) -> tuple[str, ...]:
    status, error = str(row["status"]), "" if _missing(row["error"]) else str(row["error"])
    failed = ' class="failed"' if status in FAILED else ""
    cells = (
        f"<td>{_escaped(row['host'])} · {_escaped(row['device'])}</td>"
        f"<td><code>{_escaped(row['params_text'])}</code></td>"
        f'<td><span class="status status-{_escaped(status)}">{_escaped(status)}</span></td>'
    )
    if error:
        cells += f'<td colspan="5" class="error">{escape(error)}</td>'
    else:
        cells += _number_cells(row)
    return (
        f'<tr id="row-{escape(str(row["row_id"]))}"{failed}>',
        f"<td>{_escaped(row['workload'])}</td>",
        cells,
        _escaped(run_href.get(str(row["run_id"]), "")),
        stamp,
    )


@functools.lru_cache(maxsize=1 << 14)
def _escaped(value: Any) -> str:
    """A value that repeats from row to row (host, device, workload, status...) as escaped text."""
    return escape(str(value))


def _number_cells(row: dict[str, Any]) -> str:
    """Median (with validity flags), 95% CI, IQR, samples × calls and throughput of a row."""
    flags = "".join(
        f' <span class="badge warn" title="validity flag">{_escaped(code)}</span>'
        for code in row["flags"]
    )
    if row["status"] != "ok" or not _finite(row["median_s"]):
        return (
            f'<td class="num">–{flags}</td><td class="num">–</td><td class="num">–</td>'
            '<td class="num">–</td><td class="num"></td>'
        )
    ci = f"{format_seconds(row['ci_low_s'])} – {format_seconds(row['ci_high_s'])}"
    samples = f"{int(row['n_samples'])} × {int(row['calls_per_sample'])}"
    rate = format_rate_of(row["tflops"], row["gbps"], row["items_per_s"])
    return (
        f'<td class="num">{format_seconds(row["median_s"])}{flags}</td><td class="num">{ci}</td>'
        f'<td class="num">{format_seconds(row["iqr_s"])}</td><td class="num">{samples}</td>'
        f'<td class="num">{rate}</td>'
    )


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def finding_view(
    finding: Finding,
    row_labels: dict[str, EvidenceLink],
    workload_href: dict[str, str],
    chart: ChartView | None = None,
    limit: int = 5,
) -> FindingView:
    """A finding with its first ``limit`` evidence rows as links; ``evidence_href`` is the page
    that lists every one (see :func:`evidence_path`)."""
    known = [row_labels[row_id] for row_id in finding.evidence if row_id in row_labels]
    return FindingView(
        id=_anchor(finding.id),
        kind=finding.kind,
        title=finding.title,
        answer=markdown_html(finding.answer),
        explanation=markdown_html(finding.explanation),
        strength=finding.strength,
        numbers=[
            (_key_text(key), _value_text(value, str(key))) for key, value in finding.numbers.items()
        ],
        evidence=known[:limit],
        evidence_missing=len(finding.evidence) - len(known[:limit]),
        evidence_href=evidence_path(finding.id),
        question=finding.question,
        verdict=finding.verdict,
        workload=finding.workload,
        workload_href=workload_href.get(finding.workload or ""),
        scope=[(str(key), _value_text(value)) for key, value in finding.scope.items()],
        chart=chart,
    )


def link_items(links: list[EvidenceLink], root: str = "") -> Markup:
    """``<li><a href="{root}{href}">{label}</a></li>`` for every link (a Jinja filter): an
    evidence page lists up to 500 rows, a big store's 1,500 evidence pages ~60,000 of them,
    seconds through a template loop."""
    return Markup(
        "".join(
            f'<li><a href="{escape(root)}{escape(link.href)}">{escape(link.label)}</a></li>'
            for link in links
        )
    )


def evidence_path(finding_id: str) -> str:
    """The page listing every evidence row of a finding."""
    from benchsite.site.renderer import slug

    return f"evidence/{slug(finding_id)}.html"


def _anchor(text: str) -> str:
    return "finding-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text)


UNIT_KEYS = ("bytes", "share", "efficiency")  # how a number's key names its unit


def _key_text(key: Any) -> str:
    """``best_share`` → ``best share``: the name of a finding's number, as words."""
    return str(key).replace("_", " ")


def _value_text(value: Any, key: str = "") -> str:
    """A finding's number, readable: bytes with SI prefixes, shares as percentages, a missing
    value as a dash; the key says which (``…_bytes``, ``…_share``, ``efficiency``)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, list | tuple):
        return ", ".join(_value_text(item, key) for item in value)
    if isinstance(value, dict):  # {"cuda:0": 1e9} under "peak_bytes": the outer key's unit
        unit_of = (lambda inner: key) if key.endswith(UNIT_KEYS) else str
        return ", ".join(
            f"{_key_text(k)}: {_value_text(item, unit_of(k))}" for k, item in value.items()
        )
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if key.endswith("bytes"):
        return format_number(float(value), "B")
    if key.endswith(UNIT_KEYS[1:]):
        return f"{value:.0%}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
