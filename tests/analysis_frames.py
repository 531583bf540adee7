"""Constructed result frames with known answers, for the analysis tests.

Rows are complete store rows (every column of :data:`benchsite.store.parts.SCHEMA`), written to a real
Parquet store and read back with :func:`benchsite.store.parts.read_results`, so the analyses see
exactly what they see in production. Samples are spread evenly around a chosen median, so the
median — and every ratio of medians — is known exactly.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from benchsite.store import parts as store

START = datetime(2025, 1, 1, tzinfo=UTC)
CPU_INFO = {
    "model": "Test CPU",
    "logical_cpus": 16,
    "affinity_cpus": 16,
    "usable_cpus": 16,
    "cgroup_cpu_quota": None,
    "memory_bytes": 256 * 2**30,
}
GPU_INFO = {
    "model": "NVIDIA H200",
    "memory_bytes": 141 * 2**30,
    "l2_cache_bytes": 60 * 2**20,
    "max_sm_clock_mhz": 1980,
}


def spread_samples(median: float, n: int = 21, spread: float = 0.02) -> list[float]:
    """``n`` (odd) samples evenly spaced within ±``spread`` of ``median``; median exact."""
    half = n // 2
    return [median * (1 + spread * (i - half) / half) for i in range(n)]


def row(
    workload: str,
    device: str,
    median_s: float,
    params: dict[str, Any] | None = None,
    *,
    host: str = "host-a",
    run: int = 0,
    status: str = "ok",
    samples: list[float] | None = None,
    metrics: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
    **columns: Any,
) -> dict[str, Any]:
    """One complete store row; ``device`` is ``cpu`` or ``cuda:N``; ``run`` orders runs."""
    params = dict(params or {})
    kind = "cpu" if device == "cpu" else "cuda"
    info = dict(info or (CPU_INFO if kind == "cpu" else GPU_INFO))
    axis = columns.pop(
        "axis",
        "batch"
        if "batch" in params
        else "size"
        if "size" in params
        else "threads"
        if "threads" in params
        else None,
    )
    values = samples if samples is not None else spread_samples(median_s)
    items = columns.pop("items", params.get("batch", 1))
    base = {
        "row_id": uuid.uuid4().hex,
        "run_id": f"run-{run:03d}",
        "timestamp": START + timedelta(days=run, seconds=len(values) * median_s),
        "host": host,
        "device": device,
        "device_kind": kind,
        "device_model": info["model"],
        "fingerprint": f"fp-{host}-{device}",
        "workload": workload,
        "plugin": "test",
        "plugin_version": "0",
        "profile": "quick",
        "params": params,
        "case_key": f"{workload}?{json.dumps(params, sort_keys=True)}",
        "axis": axis,
        "axis_value": float(params[axis]) if axis in params else None,
        "status": status,
        "error": None if status == "ok" else f"{status} in test",
        "world_size": params.get("world_size", 1),
        "metrics": metrics or {},
        "device_info": info,
        "threads": 16 if kind == "cpu" else None,
        "schema_version": store.SCHEMA_VERSION,
    }
    if status == "ok":
        base.update(_timing(values, items))
    base.update(columns)
    return base


def _timing(values: list[float], items: float | None) -> dict[str, Any]:
    from benchsite.stats import summarize

    summary = summarize(values)
    return {
        "samples_s": values,
        "calls_per_sample": 1,
        "n_samples": len(values),
        **summary.as_row(),
        "converged": True,
        "items": items,
        "items_per_s": items / summary.median_s if items else None,
    }


def frame(rows: Iterable[dict[str, Any]], root: Path) -> pd.DataFrame:
    """Write ``rows`` into a real store at ``root`` (one file per host and run), read it back."""
    by_run: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in rows:
        by_run.setdefault((item["host"], item["run_id"]), []).append(item)
    for (host, run_id), part in by_run.items():
        store.write_rows(root, host, run_id, part)
    return store.read_results(root)


def ids(results: pd.DataFrame, **where: Any) -> set[str]:
    """Row ids of the rows matching ``where`` (column equality; ``params_*`` looks in params)."""
    picked = results
    for column, value in where.items():
        picked = picked[picked[column] == value]
    return set(picked["row_id"])
