"""What templates show for one thing: a chart, a case row, a finding, an evidence link.

Templates receive these small records (already formatted numbers, already resolved relative
links), so that a template never computes and a user's theme can rely on plain fields.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from html import escape
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from markupsafe import Markup

from benchsite._infra.status import FAILED
from benchsite.records import Finding
from benchsite.site.sanitize import markdown_html
from benchsite.store import parts as store
from benchsite.tables.rows import each_once
from benchsite.units import (
    RATE_COLUMNS,
    RATE_TEXTS,
    SECONDS_SUFFIX,
    format_bytes,
    format_count,
    format_percent,
    format_seconds,
    metric_words,
    seconds_texts,
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


class CaseRow(NamedTuple):
    """One result row as a case table shows it (``templates/_case_table.html``, which a theme
    can override): every value already formatted and HTML-escaped text, for the template to
    write as it is (see :func:`case_table`).

    ``rates`` holds every throughput the case declared (TFLOP/s, GB/s, items/s), ``metrics``
    its collectors' metrics as (name, value) pairs when the table shows them, ``error`` the
    error text of a failed row (which then has no numbers), ``notes`` what qualifies the
    median in words (:func:`case_notes`: too few samples, host-bound, reruns' spread)."""

    row_id: str
    failed: bool
    workload: str
    host: str
    device: str
    params: str
    status: str
    median: str
    flags: tuple[str, ...]
    ci: str
    iqr: str
    samples: str
    rates: tuple[str, ...]
    metrics: tuple[tuple[str, str], ...]
    error: str
    run_href: str
    time: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseTable:
    """The rows of a case table, in order, and whether it shows collector metrics."""

    rows: list[CaseRow]
    metrics: bool = False

    def __len__(self) -> int:
        return len(self.rows)

    @functools.cached_property
    def measured(self) -> list[CaseRow]:
        """The rows that ran (ok or failed), in order: the table."""
        return [row for row in self.rows if row.status != "skipped"]

    @functools.cached_property
    def skipped(self) -> list[CaseRow]:
        """The skipped rows, in order (shown apart, with the reason): selected here, once,
        not by a template filter walking a big store's 100,000 rows."""
        return [row for row in self.rows if row.status == "skipped"]


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


def case_table(
    frame: pd.DataFrame,
    run_href: dict[str, str],
    metrics: bool = False,
    reruns: pd.DataFrame | None = None,
) -> CaseTable:
    """The case table of every row of ``frame`` (prepared results), in frame order, its values
    formatted and HTML-escaped a column at a time; with ``metrics``, each row's collector
    metrics too. Escaped here, each distinct value once (hosts, devices, parameters repeat from
    row to row), and written by the template as they are: a big store's run pages hold 100,000
    rows, and Jinja escaping ~14 values a row took ~1.5 CPU-s more. With ``reruns``
    (:func:`benchsite.tables.reruns.rerun_spread`), each case's spread over runs is noted."""
    if frame.empty:
        return CaseTable([], metrics)
    status = _objects(frame["status"]).astype(str)
    shown = (status == "ok") & np.isfinite(_floats(frame["median_s"]))
    columns = zip(
        _html(frame["row_id"]),
        [value in FAILED for value in status],
        *(_html(frame[name]) for name in ("workload", "host", "device", "params_text")),
        _html(status),
        *_timing_texts(frame, shown),
        _rates(frame, shown),
        _metrics(frame) if metrics else itertools.repeat(()),
        _html(_errors(frame)),
        _html(run_href.get(str(run), "") for run in _objects(frame["run_id"])),
        minute_texts(frame["timestamp"]),
        case_notes(frame, shown, reruns),
        strict=False,  # the metrics column repeats when not shown
    )
    return CaseTable([CaseRow(*values) for values in columns], metrics)


def _html(values: Iterable[Any]) -> list[str]:
    """Every value as escaped HTML text, each distinct value escaped once; texts none of which
    holds a character to escape (row ids, run links) as they are, found in one pass over them
    all: escaping a million distinct row ids one by one took ~1 s."""
    values = list(values)
    distinct = set(values)
    if all(type(value) is str for value in distinct) and not _SPECIAL.search("".join(distinct)):
        return values
    escaped = {value: escape(str(value)) for value in distinct}
    return [escaped[value] for value in values]


_SPECIAL = re.compile("[&<>\"']")  # what html.escape replaces


@functools.lru_cache(maxsize=1 << 16)
def _escaped(value: Any) -> str:
    return escape(str(value))


def _timing_texts(frame: pd.DataFrame, shown: np.ndarray) -> list[list[Any]]:
    """Median, validity flags, 95% CI, IQR and samples × calls of each row; dashes where the
    row has no median."""
    median, dash = _floats(frame["median_s"]), np.full(len(frame), "–", dtype=object)
    ci = _concat(
        seconds_texts(_floats(frame["ci_low_s"])), " – ", seconds_texts(_floats(frame["ci_high_s"]))
    )
    counts = zip(*(frame[name].to_numpy(object) for name in SAMPLE_COLUMNS), strict=True)
    samples = each_once(counts, lambda pair: f"{_int(pair[0])} × {_int(pair[1])}", tuple)
    return [
        np.where(shown, seconds_texts(median), dash).tolist(),
        each_once(frame["flags"], lambda codes: tuple(map(_escaped, codes)), tuple),
        np.where(shown, ci, dash).tolist(),
        np.where(shown, seconds_texts(_floats(frame["iqr_s"])), dash).tolist(),
        np.where(shown, np.array(samples, dtype=object), dash).tolist(),
    ]


FEW_SAMPLES = 6  # fewer: no order-statistic pair brackets the median with 95% confidence


def case_notes(
    frame: pd.DataFrame, shown: np.ndarray, reruns: pd.DataFrame | None = None
) -> list[tuple[str, ...]]:
    """What qualifies each shown median, in words (escaped): ``n = 3`` where the samples are
    too few for a 95% interval (the interval is then their range, with the coverage said);
    the GPU's own time where the host's launch rate sets the time (the ``host-bound`` flag);
    the case's spread over reruns on the same hardware model."""
    from benchsite.stats import interval_coverage

    counts = _floats(frame["n_samples"]) if "n_samples" in frame else np.full(len(frame), np.nan)
    device = _floats(frame["device_median_s"]) if "device_median_s" in frame else counts * np.nan
    spread = _spread_texts(frame, reruns)
    notes = []
    for at, flags in enumerate(frame["flags"]):
        found = []
        n = counts[at]
        if shown[at] and n == n and n < FEW_SAMPLES:
            found.append(
                f"n = {int(n)}: the interval is the range of the samples, which holds "
                f"the median {interval_coverage(int(n)):.0%} of the time"
            )
        if shown[at] and "host-bound" in flags and device[at] == device[at]:
            found.append(
                f"host-bound: the GPU's own time is {seconds_texts(device[at : at + 1])[0]}"
                "; the host's launch rate sets this time, and speedups use it"
            )
        if shown[at] and spread[at]:
            found.append(spread[at])
        notes.append(tuple(escape(text) for text in found))
    return notes


def _spread_texts(frame: pd.DataFrame, reruns: pd.DataFrame | None) -> list[str]:
    """``9.1 µs – 24 µs over 3 runs`` for each row whose case has a rerun spread."""
    if reruns is None or reruns.empty or frame.empty:
        return [""] * len(frame)
    from benchsite.tables.reruns import CASE

    keys = frame[CASE].assign(device_model=frame["device_model"].fillna("").astype(str))
    found = keys.merge(reruns, on=CASE, how="left")
    low, high = _floats(found["low_s"]), _floats(found["high_s"])
    lows, highs = seconds_texts(low), seconds_texts(high)
    return [
        f"{lows[at]} – {highs[at]} over {int(runs)} runs" if low[at] == low[at] else ""
        for at, runs in enumerate(found["runs"].to_numpy(object))
    ]


def _int(value: Any) -> str:
    return "–" if value is None or value != value else str(int(value))


def _rates(frame: pd.DataFrame, shown: np.ndarray) -> list[tuple[str, ...]]:
    """Every throughput a row's case declared: TFLOP/s, GB/s, items/s (in its item: images/s),
    in that order."""
    columns = [_floats(frame[name]) for name in RATE_COLUMNS]
    items = (
        frame["item_unit"].to_numpy(object) if "item_unit" in frame else np.full(len(frame), None)
    )
    texts = [np.where(np.isfinite(values) & shown, "", None) for values in columns]
    for values, out, column_texts in zip(columns, texts, RATE_TEXTS, strict=True):
        at = np.flatnonzero(out == "")
        out[at] = column_texts(values[at], items[at])
    return [tuple(text for text in row if text) for row in zip(*texts, strict=True)]


def _metrics(frame: pd.DataFrame) -> list[tuple[tuple[str, str], ...]]:
    """Each row's collector metrics (stored as JSON), as (name in words, formatted value), by
    stored name (:func:`benchsite.units.metric_words`)."""
    texts: dict[int, tuple[tuple[str, str], ...]] = {}
    out = []
    for metrics in store.decode_json(frame, "metrics"):
        if id(metrics) not in texts:  # rows with the same text share one dict
            texts[id(metrics)] = tuple(
                (_escaped(metric_words(str(name))), _escaped(_value_text(value, str(name))))
                for name, value in sorted(metrics.items())
            )
        out.append(texts[id(metrics)])
    return out


def _errors(frame: pd.DataFrame) -> list[str]:
    return [
        "" if error is None or error != error else str(error)
        for error in frame["error"].to_numpy(object)
    ]


def minute_texts(stamps: pd.Series) -> list[str]:
    """``2026-01-01 12:34`` for every (UTC) timestamp, formatted in one pass: one at a time
    they cost ~10 µs each, a second per run of a big store."""
    if stamps.dt.tz is not None:
        stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
    minutes = stamps.to_numpy().astype("datetime64[m]")
    return [text.replace("T", " ") for text in np.datetime_as_string(minutes, unit="m")]


SAMPLE_COLUMNS = ("n_samples", "calls_per_sample")


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
    root = escape(root)  # each row's href and label escaped once: rows recur across pages
    return Markup(
        "".join(
            f'<li><a href="{root}{_escaped(link.href)}">{_escaped(link.label)}</a></li>'
            for link in links
        )
    )


@functools.lru_cache(maxsize=1 << 16)
def slug(text: str) -> str:
    """A file-name-safe, readable and collision-free name: ``<script>`` → ``script-1a2b3c``.
    Cached: every row link slugs its workload's or run's name again."""
    readable = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in str(text)).strip("-.")
    readable = "-".join(part for part in readable.split("-") if part)[:60]
    if readable == text:
        return readable
    digest = hashlib.sha256(str(text).encode()).hexdigest()[:6]
    return f"{readable}-{digest}" if readable else digest


def evidence_path(finding_id: str) -> str:
    """The page listing every evidence row of a finding."""
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
        return format_bytes(float(value))
    if key.endswith(SECONDS_SUFFIX):  # a time to first token, a per-token latency: 124 ms
        return format_seconds(float(value))
    if key.endswith(UNIT_KEYS[1:]):
        return format_percent(float(value))
    return format_count(value)
