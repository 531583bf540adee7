"""Can this number be trusted? Validity flags on every result row, and their summary.

``prepare_results`` adds a ``flags`` column: a list of short codes per row that the site shows
as badges next to the number, because a benchmark number is only as good as the way it was
taken:

- ``above-peak``: faster than the device's datasheet peak (a missing synchronization is the
  usual cause: the timer stopped before the GPU finished);
- ``in-cache``: the bytes one call touches fit in the device's cache, so it measures cache, not
  memory, bandwidth;
- ``launch-bound``: a GPU call under 20 µs mostly measures kernel-launch overhead;
- ``noisy``: the samples' interquartile range exceeds 10% of the median;
- ``clock-throttled``: the GPU ran below 85% of its maximum SM clock, or NVML reported power or
  thermal throttling during the case;
- ``cpu-not-all-cores``: a CPU case used fewer threads than the process may use (unless the
  case pins its thread count on purpose);
- ``precision-mismatch``: a GPU case at a precision the CPU did not run for the same case, so
  any CPU comparison for it crosses precisions;
- ``unstable``: the samples drifted (a level shift or trend, ``stationary`` false) in every
  sampling pass; the stored interval spans both levels;
- ``busy``: other processes used a noticeable share of the cores while the case ran (the
  ``cpu`` collector's system and process use) or before the run (``environment``);
- ``irreproducible``: the case's rounds, each measured in its own worker process, disagree
  beyond what their within-round intervals allow (``reproducible`` false,
  :mod:`benchsite.measure.rounds`); the stored interval covers every round's median;
- ``host-bound``: the GPU's own time per call (``device_median_s``, its calls queued back to
  back) is under half the host-measured time: the host's launch rate sets the number, and it
  moves from one process and one machine to the next.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from benchsite import Analysis, Finding, Flag, hookimpl
from benchsite.toolkit.findings import (
    ACCELERATOR_KINDS,
    HOST_BOUND_SHARE,
    decoded,
    finding,
    metric_value,
    precision_of,
    without,
)

NOISY_IQR = 0.10
LAUNCH_BOUND_S = 20e-6
CLOCK_SHARE = 0.85
# NVML clocks-event reasons that mean slowed down: SW power cap, HW slowdown, SW/HW thermal,
# power brake (idle, application clocks and sync boost are not throttling).
THROTTLE_MASK = 0x04 | 0x08 | 0x20 | 0x40 | 0x80
# Datasheet dense peaks by device-model substring: TFLOP/s per precision, and memory GB/s.
DATASHEET = (
    ("H200", {"fp32": 67.0, "tf32": 495.0, "bf16": 989.0, "fp16": 989.0, "gbps": 4800.0}),
    ("H100", {"fp32": 67.0, "tf32": 495.0, "bf16": 989.0, "fp16": 989.0, "gbps": 3350.0}),
    ("A100", {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0, "gbps": 2039.0}),
    ("L4", {"fp32": 30.3, "tf32": 60.0, "bf16": 121.0, "fp16": 121.0, "gbps": 300.0}),
    ("A10", {"fp32": 31.2, "tf32": 62.5, "bf16": 125.0, "fp16": 125.0, "gbps": 600.0}),
    ("V100", {"fp32": 15.7, "tf32": 15.7, "bf16": 15.7, "fp16": 125.0, "gbps": 900.0}),
    ("T4", {"fp32": 8.1, "tf32": 8.1, "bf16": 8.1, "fp16": 65.0, "gbps": 320.0}),
)
# A CPU bound generous enough never to flag a real result: 4 GHz on every logical CPU, two
# AVX-512 FMA units (64 fp32 FLOP/cycle), AMX for bf16/fp16 (1024 FLOP/cycle).
CPU_GHZ, CPU_FLOP_PER_CYCLE = 4.0, {"fp32": 64, "tf32": 64, "bf16": 1024, "fp16": 1024}

FLAG_TEXT = {
    "above-peak": "faster than the device's datasheet peak (likely a missing synchronization)",
    "in-cache": "working set fits in the device cache (measures cache, not memory)",
    "launch-bound": "GPU call under 20 µs (measures launch overhead, not the GPU's speed)",
    "noisy": "samples spread more than 10% of the median (IQR)",
    "clock-throttled": "GPU clocks below maximum or throttling during the case",
    "cpu-not-all-cores": "CPU case used fewer threads than the usable cores",
    "precision-mismatch": "no CPU row at this precision: CPU comparisons cross precisions",
    "unstable": "the samples drifted (level shift or trend) while measured, also when sampled "
    "again: the interval spans both levels",
    "busy": "other processes used the machine's cores while it was measured",
    "irreproducible": "its rounds, each in a fresh process, disagree beyond their intervals: "
    "the interval covers every round",
    "host-bound": "the GPU's own time is under half the host-measured time: the host's launch "
    "rate sets the number",
}
# what each flag means to the tables (hook: register_flags): a suspect number cannot be right and
# is never a headline; an uncertain one stays in every verdict with its interval widened to its
# samples' spread; a rate flagged not-a-peak is no device's peak where something else was measured
SUSPECT = frozenset({"above-peak"})
UNCERTAIN = frozenset({"noisy", "unstable", "busy", "irreproducible"})
NOT_A_PEAK = frozenset({"in-cache", "launch-bound", "above-peak"})
BUSY_SHARE = 0.10  # others' use of the cores, as benchsite.measure.busy judges the machine


@hookimpl
def register_flags() -> list[Flag]:
    """The flags :func:`prepare_results` sets, each with what it means to the tables."""
    return [
        Flag(
            code,
            text,
            suspect=code in SUSPECT,
            not_a_peak=code in NOT_A_PEAK,
            uncertain=code in UNCERTAIN,
        )
        for code, text in FLAG_TEXT.items()
    ]


@hookimpl
def prepare_results(results: pd.DataFrame) -> pd.DataFrame:
    """Add the ``flags`` column (a tuple of flag codes per row)."""
    out = results.copy(deep=False)  # new columns only: the rows themselves are not copied
    if out.empty:
        out["flags"] = pd.Series([], dtype=object)
        return out
    out = decoded(out)  # its p, m and dev columns are kept: the tables read them too
    checked = Checked.of(out)
    out["flags"] = row_flags(checked)
    # the device's peak at the row's precision: the tables hold precision gains against it
    out["peak_tflops"] = peak_tflops(checked)
    return out


@dataclass(frozen=True)
class Checked:
    """What the checks read, one array per column, each value of ``device_info``, ``metrics``
    and ``params`` taken out once: the checks then run on whole columns (a big store has
    100,000 rows; checked one at a time they took seconds)."""

    ok: np.ndarray
    kind: pd.Series
    precision: pd.Series
    model: pd.Series
    workload: pd.Series
    numbers: dict[str, np.ndarray]
    pinned: np.ndarray
    with_precision: np.ndarray
    cpu_cases: np.ndarray  # (host, workload, params without include_transfer) is a CPU case
    cpu_workloads: np.ndarray  # (host, workload) has CPU cases

    @classmethod
    def of(cls, rows: pd.DataFrame) -> Checked:
        ok = (rows["status"] == "ok").to_numpy(bool)
        kind = rows["device_kind"].astype(str)
        params, devices = _distinct(rows["params"]), _distinct(rows["device_info"])
        numbers = {
            name: _column_numbers(rows[name]) if name in rows else np.full(len(rows), np.nan)
            for name in NUMBER_COLUMNS
        }
        numbers["busy_before"], numbers["host_cpus"] = _machine(rows)
        for key in DEVICE_INFO:
            numbers[key] = _each(rows["dev"], devices, lambda dev, key=key: _number(dev.get(key)))
        numbers |= _metrics(rows)
        cpu_params = _each(rows["p"], params, lambda p: without(p, *TRANSFER), object)
        pair = _codes(rows["host"]) * (rows["workload"].nunique() + 1) + _codes(rows["workload"])
        case = pair * (len(rows) + 1) + _codes(pd.Series(cpu_params))
        cpu = ok & (kind == "cpu").to_numpy()
        return cls(
            ok=ok,
            kind=kind,
            precision=pd.Series(_each(rows["p"], params, precision_of, object), dtype=object),
            model=rows["device_model"].fillna("").astype(str),
            workload=rows["workload"].astype(str),
            numbers=numbers,
            pinned=_each(rows["p"], params, lambda p: "threads" in p, bool),
            with_precision=_each(
                rows["p"], params, lambda p: "precision" in p or "dtype" in p, bool
            ),
            cpu_cases=np.isin(case, case[cpu]),
            cpu_workloads=np.isin(pair, pair[cpu]),
        )

    def accelerator(self) -> np.ndarray:
        return self.kind.isin(ACCELERATOR_KINDS).to_numpy()


TRANSFER = ("include_transfer",)
NUMBER_COLUMNS = (
    "tflops",
    "gbps",
    "bytes",
    "median_s",
    "iqr_s",
    "threads",
    "stationary",
    "world_size",
    "reproducible",
    "device_median_s",
)
DEVICE_INFO = (
    "logical_cpus",
    "l3_cache_bytes",
    "l2_cache_bytes",
    "max_sm_clock_mhz",
    "usable_cpus",
)
METRICS = (
    "nvml.throttle_reasons",
    "nvml.sm_clock_mean_mhz",
    "cpu.system_util_mean",
    "cpu.process_util_mean",
)


def row_flags(checked: Checked) -> list[tuple[str, ...]]:
    """Every flag of every row (see the module docstring), as a tuple in :data:`CHECKS` order;
    none on a row whose status is not ok. Rows with the same flags share one tuple, made once:
    a list a row cost ~1 s of a fleet's million rows, and ~1 s more to read back."""
    hits = np.zeros(len(checked.ok), dtype=np.int64)
    for bit, (_, check) in enumerate(CHECKS):
        hits |= (check(checked) & checked.ok).astype(np.int64) << bit
    masks, each = np.unique(hits, return_inverse=True)
    tuples = np.empty(len(masks), dtype=object)
    tuples[:] = [
        tuple(code for bit, (code, _) in enumerate(CHECKS) if mask >> bit & 1)
        for mask in masks.tolist()
    ]
    return tuples[each.reshape(-1)].tolist()


def _distinct(texts: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each row's number among the distinct values of ``texts``, and the first row of each:
    a store repeats the same parameters and device info across its runs."""
    codes = _codes(texts)
    return codes, np.unique(codes, return_index=True)[1]


def _codes(values: pd.Series) -> np.ndarray:
    return pd.factorize(values, use_na_sentinel=False)[0]


def _each(
    column: pd.Series,
    distinct: tuple[np.ndarray, np.ndarray],
    read: Callable[[Any], Any],
    dtype: type = float,
) -> np.ndarray:
    """``read(value)`` for the value of ``column`` on every row, worked out once per distinct
    text (:func:`_distinct`); the decoded dicts (empty when absent) are only read."""
    codes, first = distinct
    values = column.to_numpy(object)
    return np.array([read(values[row] or {}) for row in first], dtype=dtype)[codes]


def _number(value: Any) -> float:
    """A value as a float, NaN where it is no number (a bool counts, as 0 or 1)."""
    return float(value) if isinstance(value, (int, float)) and value == value else math.nan


def _column_numbers(column: pd.Series) -> np.ndarray:
    if pd.api.types.is_numeric_dtype(column):
        return column.to_numpy(dtype=float, na_value=np.nan)
    return np.array([_number(value) for value in column], dtype=float)


def _metrics(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The NVML metrics the checks read (:func:`metric_value`, NaN where missing); only rows
    whose metrics mention NVML are looked into."""
    out = {key: np.full(len(rows), np.nan) for key in METRICS}
    text = rows["metrics"].astype(str)
    mentioned = text.str.contains("nvml.", regex=False) | text.str.contains("cpu.", regex=False)
    mentioned = mentioned.to_numpy(bool)
    metrics = rows["m"].to_numpy(object)
    for row in np.flatnonzero(mentioned):
        for key in METRICS:
            value = metric_value(metrics[row], key)
            out[key][row] = np.nan if value is None else value
    return out


def _set(values: np.ndarray) -> np.ndarray:
    """Truthiness as the row checks used it: a number that is there and not zero."""
    return ~np.isnan(values) & (values != 0)


@functools.cache
def datasheet_peak(model: str, key: str) -> float | None:
    """The datasheet figure ``key`` (a precision, or ``gbps``) of a GPU model, when known."""
    for part, peaks in DATASHEET:
        if part.lower() in model.lower():
            return peaks.get(key)
    return None


def _peaks(models: pd.Series, keys: pd.Series) -> np.ndarray:
    """:func:`datasheet_peak` of every row's (model, key), NaN where none is known."""
    model_codes, model_names = pd.factorize(models)
    key_codes, key_names = pd.factorize(keys)
    table = np.array(
        [[datasheet_peak(str(m), str(k)) or np.nan for k in key_names] for m in model_names],
        dtype=float,
    ).reshape(len(model_names), len(key_names))
    return table[model_codes, key_codes]


def peak_tflops(c: Checked) -> np.ndarray:
    """Every row's device peak TFLOP/s at its precision (datasheet for a GPU, the generous CPU
    bound for a CPU), NaN where unknown."""
    per_cycle = c.precision.map(CPU_FLOP_PER_CYCLE).to_numpy(float)
    cpu_bound = c.numbers["logical_cpus"] * CPU_GHZ * per_cycle / 1e3
    return np.where((c.kind == "cpu").to_numpy(), cpu_bound, _peaks(c.model, c.precision))


def _above_peak(c: Checked) -> np.ndarray:
    tflops, gbps = c.numbers["tflops"], c.numbers["gbps"]
    per_cycle = c.precision.map(CPU_FLOP_PER_CYCLE).to_numpy(float)
    bound = c.numbers["logical_cpus"] * CPU_GHZ * per_cycle / 1e3
    cpu = (c.kind == "cpu").to_numpy()
    cpu_over = _set(tflops) & _set(bound) & (tflops > bound)
    flop_peak = _peaks(c.model, c.precision)
    byte_peak = _peaks(c.model, pd.Series("gbps", index=c.model.index))
    over_flops = _set(tflops) & _set(flop_peak) & (tflops > 1.05 * flop_peak)
    # transfers are not bounded by HBM, and neither is a copy whose buffers fit in the cache
    # (16 MiB copied on an H200 ran at 5.1 TB/s out of its 60 MB L2: in-cache, not an error)
    in_device = (c.workload == "copy").to_numpy() & ~_in_cache(c)
    over_bytes = in_device & _set(gbps) & _set(byte_peak) & (gbps > 1.05 * byte_peak)
    return np.where(cpu, cpu_over, over_flops | over_bytes)


def _in_cache(c: Checked) -> np.ndarray:
    size, l3 = c.numbers["bytes"], c.numbers["l3_cache_bytes"]
    cache = np.where(_set(l3), l3, c.numbers["l2_cache_bytes"])
    return _set(size) & _set(cache) & (size < cache)


def _launch_bound(c: Checked) -> np.ndarray:
    return c.accelerator() & (c.numbers["median_s"] < LAUNCH_BOUND_S)


def _noisy(c: Checked) -> np.ndarray:
    iqr, median = c.numbers["iqr_s"], c.numbers["median_s"]
    return ~np.isnan(iqr) & _set(median) & (iqr > NOISY_IQR * median)


def _throttled(c: Checked) -> np.ndarray:
    reasons = c.numbers["nvml.throttle_reasons"]
    slowed = np.array([v == v and int(v) & THROTTLE_MASK != 0 for v in reasons], dtype=bool)
    clock, top = c.numbers["nvml.sm_clock_mean_mhz"], c.numbers["max_sm_clock_mhz"]
    return slowed | (_set(clock) & _set(top) & (clock < CLOCK_SHARE * top))


def _not_all_cores(c: Checked) -> np.ndarray:
    usable, threads = c.numbers["usable_cpus"], c.numbers["threads"]
    cpu = (c.kind == "cpu").to_numpy()
    return cpu & ~c.pinned & _set(usable) & _set(threads) & (threads < usable)


def _precision_mismatch(c: Checked) -> np.ndarray:
    return c.accelerator() & c.with_precision & c.cpu_workloads & ~c.cpu_cases


def _unstable(c: Checked) -> np.ndarray:
    return c.numbers["stationary"] == 0


def _irreproducible(c: Checked) -> np.ndarray:
    return c.numbers["reproducible"] == 0


def _host_bound(c: Checked) -> np.ndarray:
    device, host = c.numbers["device_median_s"], c.numbers["median_s"]
    return c.accelerator() & _set(device) & _set(host) & (device < HOST_BOUND_SHARE * host)


def _busy(c: Checked) -> np.ndarray:
    """Busy before the run, or others' CPU use during the samples (system use over every
    logical CPU, less this process's own) above :data:`BUSY_SHARE` of the cores (at least half
    a core); a distributed case's other ranks are its own, so it is judged before the run only."""
    cores = np.where(
        np.isnan(c.numbers["logical_cpus"]), c.numbers["host_cpus"], c.numbers["logical_cpus"]
    )
    system, own = c.numbers["cpu.system_util_mean"], c.numbers["cpu.process_util_mean"]
    others = system / 100 * cores - own / 100
    alone = ~(c.numbers["world_size"] > 1)
    during = alone & ~np.isnan(others) & (others > np.maximum(0.5, BUSY_SHARE * cores))
    return during | (c.numbers["busy_before"] == 1)


def _machine(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """From each row's ``environment``: busy before the run (1/0), and the host's logical CPUs
    (NaN where not recorded)."""
    if "environment" not in rows:
        return np.zeros(len(rows)), np.full(len(rows), np.nan)
    codes, first = _distinct(rows["environment"])  # one text per run: each read once
    text = rows["environment"].iloc[first].astype(str)
    busy = text.str.contains('"machine_busy": true', regex=False).to_numpy(float)
    cpus = text.str.extract(r'"logical_cpus": (\d+)')[0].astype(float).to_numpy()
    return busy[codes], cpus[codes]


CHECKS: tuple[tuple[str, Callable[[Checked], np.ndarray]], ...] = (
    ("above-peak", _above_peak),
    ("in-cache", _in_cache),
    ("launch-bound", _launch_bound),
    ("noisy", _noisy),
    ("clock-throttled", _throttled),
    ("cpu-not-all-cores", _not_all_cores),
    ("precision-mismatch", _precision_mismatch),
    ("unstable", _unstable),
    ("busy", _busy),
    ("irreproducible", _irreproducible),
    ("host-bound", _host_bound),
)


# -- the summary finding -------------------------------------------------------------------------


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="validity",
            description="How many results carry each validity flag, and what each flag means.",
            analyze=validity_findings,
        )
    ]


def validity_findings(results: pd.DataFrame) -> list[Finding]:
    """One finding per flag that occurs, plus an overall one saying how many rows are clean."""
    flagged = results if "flags" in results else prepare_results(results)
    ok = flagged[flagged["status"] == "ok"]
    if ok.empty:
        return []
    hits = _rows_per_flag(ok)
    findings = [_overall(ok, hits)]
    for code, text in FLAG_TEXT.items():
        if hits[code]:
            findings.append(_flag_finding(code, text, ok.iloc[hits[code]], len(ok)))
    return findings


def _rows_per_flag(ok: pd.DataFrame) -> dict[str, list[int]]:
    """The positions in ``ok`` of the rows carrying each flag, in one pass over the rows."""
    hits: dict[str, list[int]] = {code: [] for code in FLAG_TEXT}
    for position, flags in enumerate(ok["flags"]):
        for code in set(flags) & hits.keys():
            hits[code].append(position)
    return hits


def _overall(ok: pd.DataFrame, hits: dict[str, list[int]]) -> Finding:
    clean = ok[[not flags for flags in ok["flags"]]]
    counts = {code: len(hits[code]) for code in FLAG_TEXT}
    share = len(clean) / len(ok)
    answer = (
        f"{len(clean)} of {len(ok)} successful results ({share * 100:.0f}%) carry no validity "
        "flag; the others are marked with a badge saying why they deserve caution."
    )
    listed = "\n".join(f"- `{c}` on {n} rows: {FLAG_TEXT[c]}" for c, n in counts.items() if n)
    return finding(
        "validity",
        ["overall"],
        "Can these numbers be trusted?",
        answer,
        explanation=listed or "No result row carries a flag.",
        numbers={"ok_rows": len(ok), "clean_rows": len(clean), **counts},
        evidence=ok["row_id"],
        strength="strong" if share >= 0.8 else "moderate",
    )


def _flag_finding(code: str, text: str, hit: pd.DataFrame, total: int) -> Finding:
    workloads = ", ".join(sorted(hit["workload"].astype(str).unique()))
    return finding(
        "validity",
        [code],
        f"Flag {code}: {len(hit)} results",
        f"{len(hit)} of {total} results are flagged {code}: {text}.",
        explanation=f"Workloads concerned: {workloads}.",
        numbers={"rows": len(hit), "share": len(hit) / total},
        evidence=hit["row_id"],
        scope={"workloads": sorted(hit["workload"].astype(str).unique())},
        strength="strong",
    )
