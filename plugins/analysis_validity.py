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
  any CPU comparison for it crosses precisions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
from benchsite.plugins._findings import (
    decoded,
    finding,
    info_value,
    is_accelerator,
    metric,
    precision_of,
    without,
)

from benchsite import Analysis, Finding, hookimpl
from benchsite.jobs import run_jobs

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
}


@hookimpl
def prepare_results(results: pd.DataFrame) -> pd.DataFrame:
    """Add the ``flags`` column (a list of flag codes per row)."""
    out = results.copy()
    if out.empty:
        out["flags"] = pd.Series([], dtype=object)
        return out
    rows = decoded(results)
    # only the columns the checks read: itertuples costs per column and row
    narrow = rows[list(FLAG_COLUMNS)].assign(cpu_params=_cpu_params(rows))
    cpu_cases = _cpu_cases(narrow)
    # rows are checked one by one, tens of thousands of them: in chunks, on every core
    starts = range(0, len(narrow), CHUNK_ROWS)
    jobs = [functools.partial(_flags, narrow.iloc[at : at + CHUNK_ROWS], cpu_cases) for at in starts]
    out["flags"] = [flags for chunk in run_jobs(jobs) for flags in chunk]
    return out


CHUNK_ROWS = 25_000


def _flags(rows: pd.DataFrame, cpu_cases: CpuCases) -> list[list[str]]:
    return [row_flags(row, cpu_cases) for row in rows.itertuples()]


FLAG_COLUMNS = ("status", "host", "workload", "device_kind", "device_model", "p", "m", "dev",
                "tflops", "gbps", "bytes", "median_s", "iqr_s", "threads")


def _cpu_params(rows: pd.DataFrame) -> pd.Series:
    """Each row's parameters as a CPU row of the same case has them (``include_transfer``
    dropped), as a key; worked out once per distinct parameter text."""
    keys: dict[Any, str] = {}
    out = []
    for text, params in zip(rows["params"], rows["p"], strict=True):
        if text not in keys:
            keys[text] = without(params, "include_transfer")
        out.append(keys[text])
    return pd.Series(out, index=rows.index, dtype=object)  # Python strings: walked row by row


@dataclass(frozen=True)
class CpuCases:
    """(host, workload, params-without-transfer) of every ok CPU row, and the (host, workload)
    pairs among them, as sets: every GPU row looks both up."""

    cases: frozenset[tuple[str, str, str]]
    workloads: frozenset[tuple[str, str]]


def row_flags(row: Any, cpu_cases: CpuCases | None = None) -> list[str]:
    """Every flag that applies to one decoded row (see the module docstring); with
    ``cpu_cases``, the row also has ``cpu_params`` (:func:`_cpu_params`)."""
    if row.status != "ok":
        return []
    flags = [code for code, check in ROW_CHECKS if check(row)]
    if cpu_cases is not None and _precision_mismatch(row, cpu_cases):
        flags.append("precision-mismatch")
    return flags


@functools.cache
def datasheet_peak(model: str, key: str) -> float | None:
    """The datasheet figure ``key`` (a precision, or ``gbps``) of a GPU model, when known."""
    for part, peaks in DATASHEET:
        if part.lower() in model.lower():
            return peaks.get(key)
    return None


def _num(value: Any) -> float | None:
    # a tuple, not int | float: isinstance is faster with it, and this runs ten times a row
    return float(value) if isinstance(value, (int, float)) and value == value else None


def _above_peak(row: Any) -> bool:
    tflops, gbps = _num(row.tflops), _num(row.gbps)
    precision = precision_of(row.p)
    if row.device_kind == "cpu":
        cpus = _num(info_value(row, "logical_cpus"))
        per_cycle = CPU_FLOP_PER_CYCLE.get(precision)
        bound = cpus * CPU_GHZ * per_cycle / 1e3 if cpus and per_cycle else None
        return bool(tflops and bound and tflops > bound)
    model = str(row.device_model or "")
    flop_peak, byte_peak = datasheet_peak(model, precision), datasheet_peak(model, "gbps")
    over_flops = bool(tflops and flop_peak and tflops > 1.05 * flop_peak)
    # transfers are not bounded by HBM, and neither is a copy whose buffers fit in the cache
    # (16 MiB copied on an H200 ran at 5.1 TB/s out of its 60 MB L2: in-cache, not an error)
    in_device = row.workload in ("copy",) and not _in_cache(row)
    return over_flops or bool(in_device and gbps and byte_peak and gbps > 1.05 * byte_peak)


def _in_cache(row: Any) -> bool:
    size = _num(row.bytes)
    cache = _num(info_value(row, "l3_cache_bytes")) or _num(info_value(row, "l2_cache_bytes"))
    return bool(size and cache and size < cache)


def _launch_bound(row: Any) -> bool:
    return is_accelerator(row.device_kind) and float(row.median_s) < LAUNCH_BOUND_S


def _noisy(row: Any) -> bool:
    iqr, median = _num(row.iqr_s), _num(row.median_s)
    return bool(iqr is not None and median and iqr > NOISY_IQR * median)


def _throttled(row: Any) -> bool:
    reasons = metric(row, "nvml.throttle_reasons")
    if reasons is not None and int(reasons) & THROTTLE_MASK:
        return True
    clock, top = metric(row, "nvml.sm_clock_mean_mhz"), _num(info_value(row, "max_sm_clock_mhz"))
    return bool(clock and top and clock < CLOCK_SHARE * top)


def _not_all_cores(row: Any) -> bool:
    usable, threads = _num(info_value(row, "usable_cpus")), _num(row.threads)
    pinned = "threads" in row.p
    return row.device_kind == "cpu" and not pinned and bool(usable and threads and threads < usable)


ROW_CHECKS: tuple[tuple[str, Callable[[Any], bool]], ...] = (
    ("above-peak", _above_peak),
    ("in-cache", _in_cache),
    ("launch-bound", _launch_bound),
    ("noisy", _noisy),
    ("clock-throttled", _throttled),
    ("cpu-not-all-cores", _not_all_cores),
)


def _cpu_cases(rows: pd.DataFrame) -> CpuCases:
    cpu = rows[(rows["status"] == "ok") & (rows["device_kind"] == "cpu")]
    cases = set(zip(cpu["host"], cpu["workload"], cpu["cpu_params"], strict=True))
    return CpuCases(frozenset(cases), frozenset((host, name) for host, name, _ in cases))


def _precision_mismatch(row: Any, cpu_cases: CpuCases) -> bool:
    if not is_accelerator(row.device_kind) or not any(k in row.p for k in ("precision", "dtype")):
        return False
    same_workload = (row.host, row.workload) in cpu_cases.workloads
    return same_workload and (row.host, row.workload, row.cpu_params) not in cpu_cases.cases


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
