"""The GPU-over-CPU speedup of every case measured on both, with its confidence interval.

Speedup = CPU median time / GPU median time, with a percentile-bootstrap 95% confidence interval
from the stored per-call samples (:func:`benchsite.stats.bootstrap_ratio_cis`). Shared by the
speedup, crossover, recommendation, FAQ and claims analyses (computed once per results frame).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from benchsite.plugins._findings import cpu_gpu_pairs, per_frame, precision_of, samples

from benchsite.stats import bootstrap_ratio_cis

COLUMNS = [
    "host", "workload", "gpu_device", "gpu_label", "cpu_label", "params", "precision",
    "include_transfer", "axis", "axis_value", "speedup", "low", "high", "cpu_row", "gpu_row",
    "cpu_median_s", "gpu_median_s",
]  # fmt: skip


def speedup_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (CPU, GPU) pair of the same case on the same host; see the module docstring."""
    return per_frame("speedups", frame, lambda: _build(frame))


def _build(frame: pd.DataFrame) -> pd.DataFrame:
    pairs = cpu_gpu_pairs(frame)
    cis = bootstrap_ratio_cis([(samples(cpu), samples(gpu)) for cpu, gpu in pairs], resamples=1000)
    records = [_record(cpu, gpu, ci) for (cpu, gpu), ci in zip(pairs, cis, strict=True)]
    table = pd.DataFrame(records, columns=COLUMNS)
    return table.sort_values(["host", "workload", "gpu_device", "axis_value"], kind="stable")


def _record(cpu: Any, gpu: Any, ci: tuple[float, float, float]) -> dict[str, Any]:
    value, low, high = ci
    return {
        "host": str(gpu.host),
        "workload": str(gpu.workload),
        "gpu_device": str(gpu.device),
        "gpu_label": _label(gpu),
        "cpu_label": _label(cpu),
        "params": dict(gpu.p),
        "precision": precision_of(gpu.p),
        "include_transfer": bool(gpu.p.get("include_transfer", False)),
        "axis": gpu.axis if isinstance(gpu.axis, str) else None,
        "axis_value": float(gpu.axis_value) if gpu.axis_value == gpu.axis_value else None,
        "speedup": value,
        "low": low,
        "high": high,
        "cpu_row": str(cpu.row_id),
        "gpu_row": str(gpu.row_id),
        "cpu_median_s": float(cpu.median_s),
        "gpu_median_s": float(gpu.median_s),
    }


def _label(row: Any) -> str:
    model = str(row.device_model or row.device)
    return model if row.device_kind == "cpu" else f"{model} ({row.device})"


def kind_of_workload(name: str) -> str:
    """``training``, ``inference`` or ``other`` from the workload name's suffix."""
    if name.endswith("-train") or name.startswith("ddp-"):
        return "training"
    if name.endswith("-infer"):
        return "inference"
    return "other"
