"""Accelerator-over-CPU speedups: the one definition of a speedup and its interval.

A **pair** is the current ok row of a case on an accelerator and the current ok row of the
same case (same host, workload, world size and parameters) on that host's CPU; a GPU case timed
with host↔device copies (``include_transfer``) pairs with the CPU case without them (the CPU
has nothing to copy), so speedups with and without copies sit side by side. Two rows are the
same case only where they also declare the same work per call (:func:`work_keys`): a workload
may size its model by device kind (the distributed ones train a ~0.9 B-parameter transformer on
a GPU and a small one on the CPU), and a max-batch search ends at a different batch on each
device; the time of different work is no speedup.

``speedup`` = CPU median time / accelerator median time. ``cpu_items_per_s`` and
``gpu_items_per_s`` are the two rows' stored throughputs in what ``item_unit`` says one item is. ``low``–``high`` is its 95% interval
from a **moving-block bootstrap** of the stored per-call samples (each side resampled in
blocks of consecutive samples, so that samples that drift together — a clock that ramps, a
neighbour that steals the CPU for a while — are not treated as independent and do not narrow
the interval; deterministic: every build draws the same resamples). Where a row stored no
samples (written by hand or by an older tool) the speedup is the ratio of the stored medians and
its interval the widest the two stored intervals allow. Where either row is uncertain (a flag
registered as uncertain, :mod:`benchsite.tables.flags`; listed in ``uncertain``) the interval
widens to what the two rows' verdict ranges allow (:func:`widened`): a flagged pair stays in
every verdict with that interval. A pair is **suspect** when either of its rows is (a flag
registered as suspect: a number that cannot be right); ``reasons`` says why, and a suspect
pair leaves every verdict.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from benchsite.records import precision_of, without
from benchsite.stats import resampled_medians

RESAMPLES = 1000
CONFIDENCE = 0.95
SEED = 0
CHUNK = 4096
DEVICE_BOUND_PARAMS = ("include_transfer",)  # parameters that only mean something on a GPU
WORK = ("flops", "bytes", "items")  # the work a case declares per call
COLUMNS = [
    "host",
    "workload",
    "device",
    "device_kind",
    "gpu_label",
    "cpu_label",
    "series",
    "variant",
    "params",
    "precision",
    "include_transfer",
    "axis",
    "axis_value",
    "speedup",
    "low",
    "high",
    "cpu_row",
    "gpu_row",
    "row_id",
    "cpu_median_s",
    "gpu_median_s",
    "suspect",
    "reasons",
    "uncertain",
    "item_unit",
    "cpu_items_per_s",
    "gpu_items_per_s",
]


def speedups(current_ok: pd.DataFrame, accelerators: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per pair (see the module docstring), sorted by host, workload, device and axis
    value; ``current_ok`` is the current ok rows (:attr:`benchsite.tables.Tables.ok`).

    With ``accelerators`` (the current ok rows of another store: a reference), the CPU rows of
    ``current_ok`` pair with the accelerator rows of ``accelerators`` instead, on the same case
    on any host: the two devices then sat in different machines (``host`` is the
    accelerator's)."""
    keyed = current_ok.assign(pair_key=_pair_keys(current_ok))
    cpu = keyed[keyed["device_kind"].astype(str) == "cpu"]
    cpu = cpu.assign(_copies=[bool(p.get("include_transfer")) for p in cpu["p"]])
    cpu = cpu.sort_values("_copies", kind="stable").drop_duplicates("pair_key", keep="first")
    if accelerators is not None:  # one CPU row per host and case, matched on the case alone
        cpu = cpu.assign(pair_key=_pair_keys(cpu, by_host=False))
        keyed = accelerators.assign(pair_key=_pair_keys(accelerators, by_host=False))
    fast = keyed[keyed["device_kind"].astype(str) != "cpu"]
    merged = fast.merge(cpu, on="pair_key", suffixes=("", "_cpu"))
    if merged.empty:
        return pd.DataFrame(columns=COLUMNS)
    intervals = ratio_intervals(
        list(zip(merged["samples_s_cpu"], merged["samples_s"], strict=True))
    )
    table = _table(merged, widened(merged, from_medians_where_no_samples(merged, intervals)))
    return table.sort_values(
        ["host", "workload", "device", "variant", "axis_value"], kind="stable"
    ).reset_index(drop=True)


def from_medians_where_no_samples(
    merged: pd.DataFrame,
    intervals: list[tuple[float, float, float]],
    num: str = "_cpu",
    den: str = "",
) -> list[tuple[float, float, float]]:
    """The intervals, where a side stored no samples (rows written by hand or by an old tool)
    the ratio of the stored medians instead, bounded by the ends of the two stored intervals
    (the widest ratio they allow; equal to the ratio where none was stored). The numerator's
    columns end in ``num`` (``median_s_cpu``), the denominator's in ``den``."""
    out = list(intervals)
    for index, interval in enumerate(intervals):
        if math.isfinite(interval[0]):
            continue
        row = merged.iloc[index]
        top, bottom = row[f"median_s{num}"], row[f"median_s{den}"]
        low = _or(row[f"ci_low_s{num}"], top) / _or(row[f"ci_high_s{den}"], bottom)
        high = _or(row[f"ci_high_s{num}"], top) / _or(row[f"ci_low_s{den}"], bottom)
        out[index] = (top / bottom, min(low, top / bottom), max(high, top / bottom))
    return out


def widened(
    merged: pd.DataFrame,
    intervals: list[tuple[float, float, float]],
    num: str = "_cpu",
    den: str = "",
) -> list[tuple[float, float, float]]:
    """The intervals, each of a pair with an uncertain row (``uncertain``) widened to the ratios
    its rows' verdict ranges (``time_low_s``–``time_high_s``, see
    :mod:`benchsite.tables.rows`) allow: the one rule by which a flagged number carries its
    uncertainty into every verdict. The numerator's columns end in ``num``, the
    denominator's in ``den``."""
    if "uncertain" not in merged:
        return intervals
    flagged = [
        bool(a) or bool(b)
        for a, b in zip(merged[f"uncertain{num}"], merged[f"uncertain{den}"], strict=True)
    ]
    ends = [
        merged[f"time_{end}_s{side}"].to_numpy(float)
        for side in (num, den)
        for end in ("low", "high")
    ]
    out = list(intervals)
    for i in itertools.compress(range(len(out)), flagged):
        value, low, high = out[i]
        top_low, top_high, bottom_low, bottom_high = (end[i] for end in ends)
        if math.isfinite(value) and bottom_low > 0 and bottom_high > 0:
            out[i] = (value, min(low, top_low / bottom_high), max(high, top_high / bottom_low))
    return out


def _or(value: float, fallback: float) -> float:
    return value if value is not None and math.isfinite(value) and value > 0 else fallback


def _pair_keys(rows: pd.DataFrame, by_host: bool = True) -> list[str]:
    hosts = rows["host"].astype(str) if by_host else pd.Series("", index=rows.index)
    return [
        f"{host}\x1f{workload}\x1f{world}\x1f{without(p, *DEVICE_BOUND_PARAMS)}\x1f{work}"
        for host, workload, world, p, work in zip(
            hosts,
            rows["workload"].astype(str),
            rows["world_size"],
            rows["p"],
            work_keys(rows),
            strict=True,
        )
    ]


def work_keys(rows: pd.DataFrame) -> list[str]:
    """The work each row declares per call (:data:`WORK`, ``-`` where absent) as text: rows of
    one case's parameters on two devices did the same computation only where it is equal."""
    columns = [
        rows[name] if name in rows else pd.Series(math.nan, index=rows.index) for name in WORK
    ]
    return [
        "\x1e".join("-" if value != value else f"{float(value):.9g}" for value in values)
        for values in zip(*columns, strict=True)
    ]


def _table(merged: pd.DataFrame, intervals: list[tuple[float, float, float]]) -> pd.DataFrame:
    value, low, high = (np.array(column, dtype=float) for column in zip(*intervals, strict=True))
    return pd.DataFrame(
        {
            "host": merged["host"].astype(str),
            "workload": merged["workload"].astype(str),
            "device": merged["device"].astype(str),
            "device_kind": merged["device_kind"].astype(str),
            "gpu_label": _labels(merged, ""),
            "cpu_label": _labels(merged, "_cpu"),
            "series": merged["series"],
            "variant": merged["variant"],
            "params": merged["p"],
            "precision": [precision_of(p) for p in merged["p"]],
            "include_transfer": [bool(p.get("include_transfer", False)) for p in merged["p"]],
            "axis": merged["axis"].astype(object).where(merged["axis"].notna(), None),
            "axis_value": merged["axis_value"].astype(float),
            "speedup": value,
            "low": low,
            "high": high,
            "cpu_row": merged["row_id_cpu"].astype(str),
            "gpu_row": merged["row_id"].astype(str),
            "row_id": merged["row_id"].astype(str),
            "cpu_median_s": merged["median_s_cpu"].astype(float),
            "gpu_median_s": merged["median_s"].astype(float),
            "suspect": (merged["suspect"] | merged["suspect_cpu"]).astype(bool),
            "reasons": [
                _union(a, b) for a, b in zip(merged["reasons"], merged["reasons_cpu"], strict=True)
            ],
            "uncertain": pair_codes(merged, "uncertain", "_cpu"),
            "item_unit": _item(merged),
            "cpu_items_per_s": merged["items_per_s_cpu"].astype(float),
            "gpu_items_per_s": merged["items_per_s"].astype(float),
        }
    ).reset_index(drop=True)


def _item(merged: pd.DataFrame) -> pd.Series:
    """What one item of each pair is, as its workload declared it (either row's; null where
    neither did: items)."""
    if "item_unit" not in merged:
        return pd.Series(None, index=merged.index, dtype=object)
    return (
        merged["item_unit"]
        .where(merged["item_unit"].notna(), merged["item_unit_cpu"])
        .astype(object)
    )


def pair_codes(merged: pd.DataFrame, column: str, suffix: str) -> list[tuple[str, ...]]:
    """The codes of ``column`` of each pair's two rows (empty where the rows have none)."""
    if column not in merged:
        return [()] * len(merged)
    return [_union(a, b) for a, b in zip(merged[column], merged[column + suffix], strict=True)]


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))


def _labels(merged: pd.DataFrame, suffix: str) -> list[str]:
    """``NVIDIA H200 (cuda:0)`` for an accelerator, the model alone for a CPU."""
    models = merged["device_model" + suffix].astype(object).tolist()
    names = merged["device" + suffix].astype(str).tolist()
    kinds = merged["device_kind" + suffix].astype(str).tolist()
    return [
        str(model or name) if kind == "cpu" else f"{model or name} ({name})"
        for model, name, kind in zip(models, names, kinds, strict=True)
    ]


# -- the interval --------------------------------------------------------------------------------


def block_length(count: int) -> int:
    """Samples per block: n^(1/3) (the usual order for a moving-block bootstrap), at least 1."""
    return max(1, round(count ** (1 / 3)))


def block_picks(count: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``resamples`` × ``count`` positions: each resample is made of blocks of
    :func:`block_length` consecutive positions (wrapping around), started at random, cut to
    ``count``."""
    length = block_length(count)
    blocks = -(-count // length)
    starts = rng.integers(0, count, (resamples, blocks))
    picks = (starts[:, :, None] + np.arange(length)) % count
    return picks.reshape(resamples, blocks * length)[:, :count]


def ratio_intervals(
    pairs: Sequence[tuple[Any, Any]],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> list[tuple[float, float, float]]:
    """(median ratio, low, high) of every (numerator samples, denominator samples) pair:
    ratio of medians and its block-bootstrap interval. Pairs of equal sample counts share
    their resample positions and are resampled together; a pair without samples, or with one
    that is not finite and positive, gets NaN."""
    tail = (1 - confidence) / 2 * 100
    arrays = [(_samples(a), _samples(b)) for a, b in pairs]
    groups: dict[tuple[int, int], list[int]] = {}
    for index, (num, den) in enumerate(arrays):
        if len(num) and len(den):
            groups.setdefault((len(num), len(den)), []).append(index)
    out: list[tuple[float, float, float]] = [(math.nan, math.nan, math.nan)] * len(pairs)
    for counts, members in groups.items():
        rng = np.random.default_rng(seed)
        picks = (block_picks(counts[0], resamples, rng), block_picks(counts[1], resamples, rng))
        for start in range(0, len(members), CHUNK):  # bounds memory: chunk × resamples floats
            part = members[start : start + CHUNK]
            num = np.stack([arrays[i][0] for i in part])
            den = np.stack([arrays[i][1] for i in part])
            usable = _positive(num) & _positive(den)  # checked a chunk at a time, not a pair
            found = _intervals(num[usable], den[usable], picks, tail)
            for i, interval in zip(itertools.compress(part, usable), found, strict=True):
                out[i] = interval
    return out


def _intervals(
    num: np.ndarray, den: np.ndarray, picks: tuple[np.ndarray, np.ndarray], tail: float
) -> list[tuple[float, float, float]]:
    """(ratio, low, high) of each row of ``num`` over the same row of ``den`` (m × n samples
    each), resampled at ``picks``."""
    if not len(num):
        return []
    ratios = np.median(num, axis=1) / np.median(den, axis=1)
    resampled = resampled_medians(num, picks[0]) / resampled_medians(den, picks[1])
    low, high = np.percentile(resampled, [tail, 100 - tail], axis=1)
    return list(zip(ratios.tolist(), low.tolist(), high.tolist(), strict=True))


def _samples(samples: Any) -> np.ndarray:
    """A row's stored samples as floats (none: empty)."""
    if samples is None or len(samples) == 0:
        return NO_SAMPLES
    return np.asarray(samples, dtype=float)


def _positive(samples: np.ndarray) -> np.ndarray:
    """Which rows of ``samples`` are all finite and above zero."""
    return (np.isfinite(samples) & (samples > 0)).all(axis=1)


NO_SAMPLES = np.empty(0)
