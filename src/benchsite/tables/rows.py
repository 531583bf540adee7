"""Which rows count: every row prepared once, the current row of each case, whether an ok row
is usable or suspect (with the reasons), and how uncertain its time is.

A row is **ok** when its status is ``ok`` and it has a positive median. An ok row is **suspect**
when a validity flag (added by a ``prepare_results`` plugin, read from the ``flags`` column)
says its number cannot be right (a :class:`benchsite.records.Flag` registered with
``suspect=True``, :mod:`benchsite.tables.flags`); otherwise it is **usable**. Suspect rows are
shown, marked, with their reasons, and leave every verdict.

A row flagged **uncertain** (a flag registered with ``uncertain=True``: noisy, drifting,
measured on a busy machine) is not dropped: it stays in every verdict with a wider interval.
Its **verdict range** (``time_low_s``–``time_high_s``, :func:`verdict_range`) spans its stored
interval and the 10th to 90th percentile of its samples (what its samples actually spread
over); an unflagged row's is its stored interval. Every ratio of two rows, one of them
uncertain, widens its interval to what the two verdict ranges allow
(:func:`benchsite.tables.speedups.widened`), so that a verdict its interval no longer supports
(faster *or* slower) leaves that pair out and says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from benchsite.store import parts as store
from benchsite.tables import flags as flag_meanings
from benchsite.units import items_unit

T = TypeVar("T")

CASE_KEYS = ["host", "device", "workload", "case_key"]
RATES = (("tflops", "TFLOP/s"), ("gbps", "GB/s"), ("items_per_s", "items/s"))
SPREAD_PERCENTILES = (10, 90)  # the samples' spread an uncertain row's verdict range covers
# the columns :func:`prepare` adds (a download of the store leaves them out)
DERIVED_COLUMNS = (
    "p",
    "m",
    "dev",
    "params_obj",
    "params_text",
    "variant",
    "series",
    "ok",
    "reasons",
    "suspect",
    "uncertain",
    "time_low_s",
    "time_high_s",
)


def prepare(
    results: pd.DataFrame,
    suspect: Collection[str] | None = None,
    uncertain: Collection[str] | None = None,
) -> pd.DataFrame:
    """Every row with the columns derived numbers need: decoded ``p`` (params), ``m`` (metrics)
    and ``dev`` (device_info) dicts (shared between rows of equal text: read them, never change
    them), ``params_obj`` (= ``p``), ``params_text``, ``variant`` (every parameter but the axis),
    ``series`` (host and device), ``flags`` (tuples of codes), ``ok``, ``reasons`` (why an ok
    row is suspect, as a tuple of codes), ``suspect``, ``uncertain`` (its uncertain codes) and
    its verdict range ``time_low_s``–``time_high_s``. ``suspect`` and ``uncertain``: the flag
    codes that make a row suspect or uncertain (default: those of the installed plugins'
    flags)."""
    if suspect is None:
        suspect = flag_meanings.suspect_codes(flag_meanings.installed())
    if uncertain is None:
        uncertain = flag_meanings.uncertain_codes(flag_meanings.installed())
    frame = results.reset_index(drop=True).copy(deep=False)
    for column, target in (("params", "p"), ("metrics", "m"), ("device_info", "dev")):
        if target not in frame:  # a prepare_results plugin may have decoded it already
            frame[target] = _decoded(frame, column)
    frame["params_obj"] = frame["p"]
    axes = frame["axis"].astype(object).where(frame["axis"].notna(), None).tolist()
    texts = frame["params"].tolist()
    frame["params_text"] = _per_distinct(texts, ((p,) for p in frame["p"]), params_text)
    frame["variant"] = _per_distinct(
        list(zip(texts, axes, strict=True)), zip(frame["p"], axes, strict=True), variant_label
    )
    frame["series"] = series(frame)
    frame["flags"] = _flags(frame)
    frame["ok"] = (frame["status"] == "ok") & (frame["median_s"].fillna(0) > 0)
    codes = frozenset(suspect)
    reasons = each_once(frame["flags"], lambda flags: tuple(c for c in flags if c in codes), tuple)
    frame["reasons"] = [why if ok else () for why, ok in zip(reasons, frame["ok"], strict=True)]
    frame["suspect"] = frame["reasons"].map(bool) & frame["ok"]
    doubt = frozenset(uncertain)
    frame["uncertain"] = each_once(
        frame["flags"], lambda flags: tuple(c for c in flags if c in doubt), tuple
    )
    frame["time_low_s"], frame["time_high_s"] = _verdict_ranges(frame)
    return frame


def _verdict_ranges(frame: pd.DataFrame) -> tuple[list[float], list[float]]:
    """``time_low_s`` and ``time_high_s`` of every row (:func:`verdict_range`)."""
    nan = pd.Series(math.nan, index=frame.index)
    columns = [
        frame["median_s"],
        frame.get("ci_low_s", nan),
        frame.get("ci_high_s", nan),
        frame.get("samples_s", pd.Series([None] * len(frame), index=frame.index)),
        frame["uncertain"],
    ]
    ranges = [verdict_range(*values) for values in zip(*columns, strict=True)]
    return [low for low, _ in ranges], [high for _, high in ranges]


def verdict_range(
    median: float, low: float, high: float, samples: Any, uncertain: tuple[str, ...]
) -> tuple[float, float]:
    """The times a row's number may stand for in a verdict: its stored interval (``low`` to
    ``high``, the median where none), and where the row is ``uncertain`` also the
    :data:`SPREAD_PERCENTILES` of its samples."""
    if not (median == median and median > 0):
        return math.nan, math.nan
    ends = [median, _finite(low, median), _finite(high, median)]
    if uncertain and samples is not None and len(samples):
        ends.extend(np.percentile(np.asarray(samples, dtype=float), SPREAD_PERCENTILES).tolist())
    return min(ends), max(ends)


def _finite(value: Any, fallback: float) -> float:
    return float(value) if value is not None and value == value and value > 0 else fallback


def _decoded(frame: pd.DataFrame, column: str) -> pd.Series:
    if column not in frame:
        return pd.Series([{}] * len(frame), index=frame.index, dtype=object)
    return store.decode_json(frame, column).map(
        lambda value: value if isinstance(value, dict) else {}
    )


def series(frame: pd.DataFrame) -> pd.Series:
    """Which host and device a row belongs to; along a world-size axis each point is another
    group of devices (cuda:0, cuda:0-1, …): one line per device kind, so a curve joins up."""
    several_hosts = frame["host"].nunique() > 1
    host_prefix = frame["host"].astype(str) + " · " if several_hosts else ""
    grouped = frame["axis"] == "world_size"
    devices = frame["device"].astype(str).where(~grouped, frame["device_kind"].astype(str))
    return host_prefix + devices


def _per_distinct(
    keys: list[Any], arguments: Iterable[tuple[Any, ...]], label: Callable[..., str]
) -> pd.Series:
    """``label(*arguments)`` of every row, worked out once per distinct key."""
    labels: dict[Any, str] = {}
    out = []
    for key, args in zip(keys, arguments, strict=True):
        if key not in labels:
            labels[key] = label(*args)
        out.append(labels[key])
    return pd.Series(out, dtype=object)


def variant_label(params: dict[str, Any], axis: str | None) -> str:
    """``{"size": 64, "dtype": "fp32"}`` with axis ``size`` → ``dtype=fp32``; ``all`` if none."""
    parts = [f"{key}={_param_text(value)}" for key, value in sorted(params.items()) if key != axis]
    return ", ".join(parts) or "all"


def params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{key}={_param_text(value)}" for key, value in sorted(params.items()))


def _param_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _flags(frame: pd.DataFrame) -> list[tuple[str, ...]]:
    """Validity flags per row (added by a ``prepare_results`` plugin), as tuples of codes."""
    if "flags" not in frame.columns:
        return [()] * len(frame)
    return each_once(frame["flags"], flag_tuple, tuple | str)


def each_once(values: Iterable[Any], read: Callable[[Any], T], kinds: Any = str) -> list[T]:
    """``read(value)`` of every value; a value of ``kinds`` (hashable) that repeats is read
    once, and every row that has it shares the result: a store repeats the same texts (and a
    plugin the same tuples) across runs and hosts, and a fleet has a million rows."""
    done: dict[Any, T] = {}
    out = []
    for value in values:
        if not isinstance(value, kinds):
            out.append(read(value))
        elif value in done:
            out.append(done[value])
        else:
            out.append(done.setdefault(value, read(value)))
    return out


def flag_tuple(value: Any) -> tuple[str, ...]:
    """A ``flags`` cell (a list, an array, a ``"a,b"`` text or null) as a tuple of codes."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ()
    if isinstance(value, str):
        return tuple(p.strip() for p in value.replace(";", ",").split(",") if p.strip())
    return tuple(str(item) for item in value)


def current(rows: pd.DataFrame, per: Sequence[str] = ()) -> pd.DataFrame:
    """The newest row of every (host, device, workload, case): what the site calls current;
    with ``per`` (e.g. ``["run_id"]``), of every run apart, all at once."""
    ordered = rows.sort_values("timestamp", kind="stable")
    return ordered.drop_duplicates([*CASE_KEYS, *per], keep="last").sort_values(
        CURRENT_ORDER, kind="stable"
    )


CURRENT_ORDER = ["workload", "host", "device", "variant", "axis_value"]  # of current rows


def best_rate(frame: pd.DataFrame) -> tuple[str, str] | None:
    """The most telling throughput column present in ``frame`` and its unit: TFLOP/s, GB/s,
    then items/s (in the rows' item: ``images/s``, :func:`rate_unit`)."""
    for column, _ in RATES:
        if column in frame and frame[column].notna().any():
            return column, rate_unit(frame, column)
    return None


def rate_unit(frame: pd.DataFrame, column: str) -> str:
    """The unit of the throughput ``column`` of ``frame``: ``TFLOP/s``, ``GB/s``, or for
    ``items_per_s`` the item its rows declared (``images/s``; :func:`benchsite.units.items_unit`
    of the first row that counts items, ``items/s`` where none declared one)."""
    if column != "items_per_s":
        return dict(RATES)[column]
    declared = (
        frame.loc[frame[column].notna(), "item_unit"].dropna() if "item_unit" in frame else ()
    )
    return items_unit(declared.iloc[0] if len(declared) else None)


def metric_frame(frame: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    """Long frame (row index, metric, value) of the collector metrics in ``names`` that exist
    (``frame``: prepared rows, with their decoded ``m``)."""
    decoded = frame["m"]
    rows = [
        {"index": index, "metric": name, "value": float(values[name])}
        for index, values in decoded.items()
        for name in names
        if isinstance(values.get(name), int | float) and values.get(name) is not None
    ]
    return pd.DataFrame(rows, columns=["index", "metric", "value"])


RUN_ORDER = ("run_id", "workload", "device", "variant", "axis_value")


def run_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in the order run pages list them: by run, workload, device, variant, axis value
    (:data:`RUN_ORDER`)."""
    return frame.sort_values(list(RUN_ORDER), kind="stable")


def __getattr__(name: str) -> object:  # PEP 562: the deprecated SUSPECT_FLAGS
    if name == "SUSPECT_FLAGS":
        return flag_meanings.deprecated_suspect_flags()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
