"""What templates show for one thing: a chart, a case row, a finding, an evidence link.

Templates receive these small records (already formatted numbers, already resolved relative
links), so that a template never computes and a user's theme can rely on plain fields.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from benchsite.records import Finding
from benchsite.site.sanitize import markdown_html
from benchsite.units import RATE_COLUMNS, format_number, rate_texts, seconds_texts

FAILED = ("error", "crash", "timeout", "oom")


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
    a row; :func:`case_table` makes them a column at a time, ~10 µs a row.
    """

    # <tr ...>, workload cell, host · device, parameters and status cells, number cells (or the
    # error), run href, time
    lines: list[tuple[str, str, str, str, str, str]]

    def __len__(self) -> int:
        return len(self.lines)

    def html(self, show_workload: bool = False, show_run: bool = True, root: str = "") -> Markup:
        parts = []
        for opening, workload, cells, numbers, run_href, stamp in self.lines:
            run = f'<td><a href="{root}{run_href}">{stamp}</a></td>' if show_run else ""
            shown = workload if show_workload else ""
            parts.append(f"{opening}{shown}{cells}{numbers}{run}</tr>\n")
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
    """The case table of every row of ``frame`` (prepared results), in frame order, made a
    column at a time (see :class:`CaseTable`)."""
    if frame.empty:
        return CaseTable([])
    status = _objects(frame["status"])
    failed = np.array([value in FAILED for value in status], dtype=bool)
    opening = _concat(
        '<tr id="row-', _escape_each(frame["row_id"]), np.where(failed, '" class="failed">', '">')
    )
    cells = [
        _first_cells(host, device, params, state)
        for host, device, params, state in zip(
            *(_objects(frame[name]) for name in ("host", "device", "params_text")), status,
            strict=True,
        )
    ]  # fmt: skip
    lines = zip(
        opening.tolist(),
        [_cell(workload) for workload in _objects(frame["workload"])],
        cells,
        _last_cells(frame, status).tolist(),
        [_escaped(run_href.get(str(run), "")) for run in _objects(frame["run_id"])],
        minute_texts(frame["timestamp"]),
        strict=True,
    )
    return CaseTable(list(lines))


def minute_texts(stamps: pd.Series) -> list[str]:
    """``2026-01-01 12:34`` for every (UTC) timestamp, formatted in one pass: one at a time
    they cost ~10 µs each, a second per run of a big store."""
    if stamps.dt.tz is not None:
        stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
    minutes = stamps.to_numpy().astype("datetime64[m]")
    return [text.replace("T", " ") for text in np.datetime_as_string(minutes, unit="m")]


@functools.lru_cache(maxsize=1 << 14)
def _first_cells(host: Any, device: Any, params: Any, status: Any) -> str:
    """Host · device, parameters and status: the same for a case across runs and hosts."""
    state = _escaped(status)
    return (
        f"<td>{_escaped(host)} · {_escaped(device)}</td>"
        f"<td><code>{_escaped(params)}</code></td>"
        f'<td><span class="status status-{state}">{state}</span></td>'
    )


@functools.lru_cache(maxsize=1 << 10)
def _cell(value: Any) -> str:
    return f"<td>{_escaped(value)}</td>"


def _last_cells(frame: pd.DataFrame, status: np.ndarray) -> np.ndarray:
    """Median (with validity flags), 95% CI, IQR, samples × calls and throughput of each row;
    dashes where the row has no median; the error across them where it has one."""
    median = _floats(frame["median_s"])
    shown = (status == "ok") & np.isfinite(median)
    flags = np.array([_badges(tuple(codes)) for codes in frame["flags"]], dtype=object)
    out = np.empty(len(frame), dtype=object)
    for row in np.flatnonzero(~shown):
        out[row] = (
            f'<td class="num">–{flags[row]}</td><td class="num">–</td><td class="num">–</td>'
            '<td class="num">–</td><td class="num"></td>'
        )
    at = np.flatnonzero(shown)
    if len(at):
        counts = zip(*(frame[name].to_numpy(object)[at] for name in SAMPLE_COLUMNS), strict=True)
        out[at] = _concat(
            '<td class="num">', seconds_texts(median[at]), flags[at],
            '</td><td class="num">', seconds_texts(_floats(frame["ci_low_s"])[at]), " – ",
            seconds_texts(_floats(frame["ci_high_s"])[at]), '</td><td class="num">',
            seconds_texts(_floats(frame["iqr_s"])[at]), '</td><td class="num">',
            [f"{int(samples)} × {int(calls)}" for samples, calls in counts],
            '</td><td class="num">',
            rate_texts(*(_floats(frame[name])[at] for name in RATE_COLUMNS)), "</td>",
        )  # fmt: skip
    errors = frame["error"]
    for row in np.flatnonzero(errors.notna().to_numpy(bool)):
        if error := str(errors.iloc[row]):
            out[row] = f'<td colspan="5" class="error">{escape(error)}</td>'
    return out


SAMPLE_COLUMNS = ("n_samples", "calls_per_sample")


@functools.lru_cache(maxsize=1 << 10)
def _badges(codes: tuple[str, ...]) -> str:
    """The validity flags of a row as badges (most rows have none)."""
    return "".join(
        f' <span class="badge warn" title="validity flag">{_escaped(code)}</span>' for code in codes
    )


@functools.lru_cache(maxsize=1 << 14)
def _escaped(value: Any) -> str:
    """A value that repeats from row to row (host, device, workload, status...) as escaped text."""
    return escape(str(value))


def _escape_each(values: pd.Series) -> np.ndarray:
    """Every value as escaped text, for values that do not repeat (row ids): only those with a
    character to escape go through :func:`html.escape`."""
    texts = values.astype(str)
    special = texts.str.contains(r"[&<>\"']", regex=True).to_numpy(bool)
    out = texts.to_numpy(object)
    out[special] = [escape(text) for text in out[special]]
    return out


def _objects(values: pd.Series | np.ndarray) -> np.ndarray:
    return values.to_numpy(object) if isinstance(values, pd.Series) else values


def _floats(column: pd.Series) -> np.ndarray:
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _concat(*parts: Any) -> np.ndarray:
    """Text pieces joined row by row: each part is a column (array) or one text for all rows."""
    rows = next(len(part) for part in parts if not isinstance(part, str))
    columns = [itertools.repeat(part, rows) if isinstance(part, str) else part for part in parts]
    return np.array(["".join(pieces) for pieces in zip(*columns, strict=True)], dtype=object)


def finding_view(
    finding: Finding,
    row_labels: Mapping[str, EvidenceLink],
    workload_href: dict[str, str],
    chart: ChartView | None = None,
    limit: int = 5,
) -> FindingView:
    """A finding with its first ``limit`` evidence rows as links; ``evidence_href`` is the page
    that lists every one (see :func:`evidence_path`)."""
    # the first ``limit`` rows there are links for (a finding may cite every row of the store)
    known = list(itertools.islice((row for row in finding.evidence if row in row_labels), limit))
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
        evidence=[row_labels[row_id] for row_id in known],
        evidence_missing=len(finding.evidence) - len(known),
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
