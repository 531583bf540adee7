"""Shared helpers of the built-in analyses: reading the results frame, choosing comparable rows,
pairing CPU and GPU rows of the same case, and building :class:`benchsite.Finding` records.

Every analysis gets the whole store as one data frame. The helpers here decode its JSON columns
once per frame (cached while the frame lives; rows with equal text share one decoded dict, so
read it, never change it), keep only rows that can serve as evidence of speed (``status ==
"ok"`` with samples), and pick the newest measurement of each case on each device, so that a
store holding many runs answers with its latest numbers.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import pandas as pd

from benchsite import Finding
from benchsite.units import format_number, format_seconds

T = TypeVar("T")
ACCELERATOR_KINDS = ("cuda", "mps")
# workloads whose time is not comparable across devices (each device runs a different batch)
NOT_COMPARABLE = ("max-batch",)
DEVICE_BOUND_PARAMS = ("include_transfer",)  # parameters that only mean something on a GPU
_CACHE: dict[tuple[int, str], tuple[weakref.ref, Any]] = {}
# the analyses that read the speedup and technique-effect tables (cached per_frame, per process)
# run one after another in one worker (``Analysis.group``), so each table is built once a build
SHARED_TABLES = "speedup-tables"


# -- caching per frame ---------------------------------------------------------------------------


def per_frame(name: str, frame: pd.DataFrame, compute: Callable[[], T]) -> T:
    """``compute()`` once per (frame object, name): analyses that build on each other (the FAQ on
    the speedups) share the work instead of bootstrapping twice."""
    key = (id(frame), name)
    cached = _CACHE.get(key)
    if cached is not None and cached[0]() is frame:
        return cached[1]
    value = compute()
    _CACHE[key] = (weakref.ref(frame, lambda _ref, key=key: _CACHE.pop(key, None)), value)
    return value


# -- reading rows --------------------------------------------------------------------------------


def decoded(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its JSON columns decoded into dict columns ``p`` (params), ``m``
    (metrics) and ``dev`` (device_info); cached per frame."""

    def build() -> pd.DataFrame:
        out = frame.copy(deep=False)  # new columns only: the frame's own data is shared
        for column, target in (("params", "p"), ("metrics", "m"), ("device_info", "dev")):
            values = frame[column] if column in frame else pd.Series([None] * len(frame))
            out[target] = _load_each(values)
        return out

    return per_frame("decoded", frame, build)


def _load_each(texts: Iterable[Any]) -> list[dict[str, Any]]:
    """:func:`_load` of every value; each distinct text is decoded once (a store repeats the
    same parameters and device info across runs), so rows with equal text share one dict."""
    loaded: dict[str, dict[str, Any]] = {}
    out = []
    for text in texts:
        if not isinstance(text, str):
            out.append(_load(text))
        elif text in loaded:
            out.append(loaded[text])
        else:
            out.append(loaded.setdefault(text, _load(text)))
    return out


def _load(text: Any) -> dict[str, Any]:
    if isinstance(text, Mapping):
        return dict(text)
    if isinstance(text, str) and text:
        try:
            loaded = json.loads(text)
        except ValueError:
            return {}
        return loaded if isinstance(loaded, dict) else {}
    return {}


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows that may serve as evidence of speed: status ok, a positive median and samples."""
    rows = decoded(frame)
    if rows.empty:
        return rows
    good = (rows["status"] == "ok") & (rows["median_s"].fillna(0) > 0)
    good &= rows["samples_s"].map(lambda s: s is not None and len(s) > 0)
    return rows[good.astype(bool)]


def keep(rows: pd.DataFrame, column: str, predicate: Callable[[Any], bool]) -> pd.DataFrame:
    """The rows whose ``column`` value satisfies ``predicate`` (safe on an empty frame)."""
    chosen = [bool(predicate(value)) for value in rows[column]] if column in rows else []
    return rows.loc[pd.Series(chosen, index=rows.index[: len(chosen)], dtype=bool)]


def newest(
    rows: pd.DataFrame, keys: Iterable[str] = ("host", "device", "case_key")
) -> pd.DataFrame:
    """The newest row of each group of ``keys`` (the store is sorted oldest first)."""
    if rows.empty:
        return rows
    return rows.sort_values("timestamp", kind="stable").groupby(list(keys), observed=True).tail(1)


def latest_ok(frame: pd.DataFrame) -> pd.DataFrame:
    """The newest ok row of every case on every device of every host; cached per frame."""
    return per_frame("latest_ok", frame, lambda: newest(ok_rows(frame)))


def column_groups(
    rows: pd.DataFrame, keys: list[str], columns: Iterable[str], order_by: str | None = None
) -> Iterator[dict[str, list[Any]]]:
    """The rows of each group of ``keys`` (in key order) as lists, one per column; sorted by
    ``order_by`` within the group (as ``sort_values`` sorts) or else in frame order. Slicing a
    frame per group costs about a millisecond: thousands of series or cases, seconds."""
    values = {name: rows[name].tolist() for name in columns}
    order = rows[order_by].to_numpy() if order_by else None
    for index in rows.groupby(keys, observed=True, sort=True).indices.values():
        if order is not None:
            index = index[order[index].argsort(kind="quicksort")]
        # itemgetter picks a group's values in C: a comprehension per column and group was
        # half a second over the 10,000 cases × 9 columns of the history analysis
        pick = operator.itemgetter(*index.tolist())
        if len(index) == 1:
            yield {name: [pick(column)] for name, column in values.items()}
        else:
            yield {name: list(pick(column)) for name, column in values.items()}


def precision_of(params: Mapping[str, Any]) -> str:
    """The precision a case ran at (``precision``, or an older ``dtype`` parameter; else fp32)."""
    return str(params.get("precision") or params.get("dtype") or "fp32")


def is_accelerator(kind: Any) -> bool:
    return str(kind) in ACCELERATOR_KINDS


def samples(row: Any) -> list[float]:
    return [float(value) for value in row.samples_s]


def info_value(row: Any, key: str) -> Any:
    """A value from the row's device_info (``None`` when absent)."""
    return (row.dev or {}).get(key)


def metric(row: Any, key: str) -> float | None:
    """A numeric metric of the row, or ``None`` when missing or not a finite number."""
    return metric_value(row.m, key)


def metric_value(metrics: Mapping[str, Any] | None, key: str) -> float | None:
    """:func:`metric` of a row's decoded metrics dict."""
    value = (metrics or {}).get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def without(params: Mapping[str, Any], *names: str) -> str:
    """A stable key of ``params`` without ``names``: rows equal on it differ only in those.
    Cached by value: pairing rows asks it for every row, ~15 µs a time through JSON."""
    try:
        return _without(tuple((k, type(v), v) for k, v in params.items()), names)
    except TypeError:  # a value that cannot be hashed (a list): not cached
        return json.dumps({k: v for k, v in params.items() if k not in names}, sort_keys=True)


@functools.lru_cache(maxsize=1 << 14)
def _without(items: tuple[tuple[str, type, Any], ...], names: tuple[str, ...]) -> str:
    # the value's type is part of the key: 1, 1.0 and True are equal, their JSON is not
    return json.dumps({k: v for k, _, v in items if k not in names}, sort_keys=True)


def device_label(row: Any) -> str:
    """``NVIDIA H200 (cuda:0)``: the model when known, and the device name."""
    model = str(getattr(row, "device_model", "") or "")
    name = str(row.device)
    return f"{model} ({name})" if model and model != name else name


# -- pairing CPU and GPU rows --------------------------------------------------------------------


def cpu_gpu_pairs(frame: pd.DataFrame) -> list[tuple[Any, Any]]:
    """(cpu row, accelerator row) for every case measured on both on the same host: same
    workload and parameters, except that a GPU case timed with host↔device copies
    (``include_transfer``) pairs with the CPU case without them (the CPU has nothing to copy).
    """
    rows = latest_ok(frame)
    if rows.empty:
        return []
    rows = rows[~rows["workload"].isin(NOT_COMPARABLE)]
    cpu = {}
    for row in rows[rows["device_kind"] == "cpu"].itertuples():
        key = (row.host, row.workload, row.world_size, without(row.p, *DEVICE_BOUND_PARAMS))
        if key not in cpu or not row.p.get("include_transfer"):
            cpu[key] = row
    pairs = []
    for row in rows[rows["device_kind"].map(is_accelerator)].itertuples():
        key = (row.host, row.workload, row.world_size, without(row.p, *DEVICE_BOUND_PARAMS))
        if key in cpu:
            pairs.append((cpu[key], row))
    return pairs


# -- building findings ---------------------------------------------------------------------------


def slug(*parts: Any) -> str:
    """A readable, stable id from parts: ``speedup-host-a-cuda-0-matmul``."""
    text = "-".join(str(part) for part in parts if part not in (None, ""))
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def finding(kind: str, key: Iterable[Any], title: str, answer: str, **fields: Any) -> Finding:
    """A :class:`Finding` of ``kind`` with an id built from ``kind`` and ``key``; evidence is
    turned into a sorted, de-duplicated tuple of row ids."""
    evidence = fields.pop("evidence", ())
    fields["evidence"] = tuple(sorted({str(row_id) for row_id in evidence}))
    fields["numbers"] = plain(fields.get("numbers", {}))
    return Finding(id=slug(kind, *key), kind=kind, title=title, answer=answer, **fields)


def plain(value: Any) -> Any:
    """``value`` with numpy scalars turned into Python numbers (findings are JSON-friendly)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def not_measured(kind: str, key: Iterable[Any], title: str, answer: str, **fields: Any) -> Finding:
    """A finding that cannot be backed by data: strength ``none``, no evidence, no numbers."""
    return finding(kind, key, title, answer, strength="none", **fields)


def strength_of_ratio(low: float, high: float, n_cases: int = 1) -> str:
    """How strong a ratio's evidence is: its CI clear of 1 (no difference) and several cases."""
    clear = low > 1.05 or high < 0.95
    if clear and n_cases >= 3:
        return "strong"
    return "moderate" if clear else "weak"


def scope(rows: Iterable[Any]) -> dict[str, list[str]]:
    """Which hosts, devices and workloads a set of rows covers."""
    rows = list(rows)
    return {
        "hosts": sorted({str(row.host) for row in rows}),
        "devices": sorted({device_label(row) for row in rows}),
        "workloads": sorted({str(row.workload) for row in rows}),
    }


# -- formatting ----------------------------------------------------------------------------------


def ratio(value: float) -> str:
    """``12.3×``; two significant digits below 10, whole numbers above."""
    if not math.isfinite(value):
        return "–"
    return f"{value:.2g}×" if value < 10 else f"{value:.0f}×"


def ratio_ci(value: float, low: float, high: float) -> str:
    """``80× (95% CI 75–85×)``."""
    return f"{ratio(value)} (95% CI {ratio(low).rstrip('×')}–{ratio(high)})"


def faster(value: float) -> str:
    """A speedup in words: ``64× faster`` or, below 1, ``2× slower``."""
    return f"{ratio(value)} faster" if value >= 1 else f"{ratio(1 / value)} slower"


def percent(value: float) -> str:
    return f"{value * 100:.0f}%" if abs(value) >= 0.01 else f"{value * 100:.1g}%"


BOOLEAN_WORDS = {
    "include_transfer": ("with copies", "without copies"),
    "pinned": ("pinned", "pageable"),
    "channels_last": ("channels_last", "contiguous"),
    "checkpointing": ("checkpointing", "no checkpointing"),
    "compile": ("compiled", "eager"),
}


def case_text(params: Mapping[str, Any], skip: Iterable[str] = ()) -> str:
    """``batch 64, fp32`` — a case's parameters in words, for titles and answers."""
    parts = []
    skip = set(skip)
    for name, value in sorted(params.items()):
        if name in skip:
            continue
        if isinstance(value, bool):
            yes, no = BOOLEAN_WORDS.get(name, (name.replace("_", " "), f"no {name}"))
            parts.append(yes if value else no)
        elif name in ("precision", "dtype", "op", "direction", "model", "scaling"):
            parts.append(str(value))
        else:
            parts.append(f"{name} {number_text(value)}")
    return ", ".join(parts)


def number_text(value: Any) -> str:
    """A parameter value for prose: ``27``, ``0.5``; from 10,000 on with an SI prefix (``49.4 k``,
    ``1.07 G``) — a copy's size in bytes reads badly as ``1073741824``."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if abs(value) >= 10_000:
        return format_number(value)
    return f"{value:.0f}" if abs(value) >= 10 else f"{value:.2g}"


def with_case(workload: str, case: str) -> str:
    """``mlp-train (fp32)``, or just ``mlp-train`` when the case has nothing else to say."""
    return f"{workload} ({case})" if case else workload


def transfer_text(params: Mapping[str, Any]) -> str:
    """Whether a GPU time includes host↔device copies, in words."""
    if params.get("include_transfer"):
        return "GPU time includes copying inputs to the GPU and the result back"
    return "host↔device transfers not included (data already on the device)"


def bytes_text(value: float | None) -> str:
    return format_number(value, "B") if value is not None else "–"


def seconds_text(value: float | None) -> str:
    return format_seconds(value)
