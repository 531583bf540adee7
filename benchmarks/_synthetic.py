"""Synthetic result stores for the build benchmarks (``site_build.py``, ``fleet.py``), written
column by column with pyarrow in the store's own layout (``host=…/run=…/part-….parquet``) and
schema (:data:`benchsite.store.parts.SCHEMA`): a million rows in seconds.

Every run of a host measures the same suite: ``workloads`` × ``variants`` precisions ×
``sizes`` × (``cpu``, ``cuda:0``), with 7 lognormal samples around a median that grows as
size^1.5 (the GPU ~40× faster, plus a launch overhead). Hosts cycle through ``models`` GPU and
CPU models, each a little faster than the one before, so a fleet has hardware to tell apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchsite.store import parts as store

PRECISIONS = ("fp32", "bf16", "fp16", "tf32", "fp64")
SAMPLES = 7
GPU_MODELS = ("Synthetic CUDA", "Synthetic H200", "Synthetic A100", "Synthetic L4")
CPU_MODELS = ("Synthetic CPU", "Synthetic Xeon", "Synthetic EPYC")


@dataclass(frozen=True)
class Shape:
    """What a synthetic store holds: ``hosts`` × ``runs`` runs of one suite each."""

    hosts: int = 10
    runs: int = 10  # per host
    workloads: int = 20
    variants: int = 5
    sizes: tuple[int, ...] = tuple(2**k for k in range(6, 16))
    models: int = 1  # distinct GPU (and CPU) models the hosts cycle through

    @property
    def cases(self) -> int:
        """Rows per run: every workload × variant × size on the CPU and the GPU."""
        return self.workloads * self.variants * len(self.sizes) * 2

    @property
    def rows(self) -> int:
        return self.hosts * self.runs * self.cases


@dataclass(frozen=True)
class Suite:
    """The columns every run shares (one entry per row of a run), made once."""

    workload: np.ndarray
    variant: np.ndarray
    size: np.ndarray
    gpu: np.ndarray  # True on the cuda:0 rows
    params: pa.Array
    case_key: pa.Array
    ids: list[str]  # the row id of the case, without host and run
    names: pa.Array  # the workload's name
    metrics: pa.Array  # the metrics JSON

    @classmethod
    def of(cls, shape: Shape) -> Suite:
        grid = np.array(
            np.meshgrid(
                range(shape.workloads), range(shape.variants), shape.sizes, (0, 1), indexing="ij"
            )
        ).reshape(4, -1)
        workload, variant, size, gpu = grid[0], grid[1], grid[2], grid[3].astype(bool)
        params = [
            json.dumps(
                {"precision": PRECISIONS[v % len(PRECISIONS)], "size": int(s)}, sort_keys=True
            )
            for v, s in zip(variant, size, strict=True)
        ]
        case_key = [f"workload-{w:02d}?{p}" for w, p in zip(workload, params, strict=True)]
        ids = [
            f"w{w}v{v}s{s}{'cuda:0' if g else 'cpu'}"
            for w, v, s, g in zip(workload, variant, size, gpu, strict=True)
        ]
        names = pa.array([f"workload-{w:02d}" for w in workload])
        metrics = pa.array([json.dumps({"memory.cpu_peak_rss_bytes": s * s * 12.0}) for s in size])
        return cls(
            workload, variant, size, gpu, pa.array(params), pa.array(case_key), ids, names, metrics
        )


def run_table(
    shape: Shape, suite: Suite, host: int, run: int, rng: np.random.Generator
) -> pa.Table:
    """One run of one host, cast to the store's schema."""
    n, gpu, size = shape.cases, suite.gpu, suite.size.astype(float)
    model = host % shape.models
    speed = np.where(gpu, 40.0 * (1 + 0.25 * model), 1.0 + 0.1 * model)
    median = 1e-6 * size**1.5 / speed + np.where(gpu, 2e-5, 1e-6)
    samples = (median[:, None] * rng.lognormal(0, 0.02, (n, SAMPLES))).ravel()
    started = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=host * 7 + run * 3)
    seconds = suite.workload * 60 + suite.variant
    stamp = np.datetime64(started.replace(tzinfo=None), "us") + seconds.astype("timedelta64[s]")
    kinds = np.where(gpu, "cuda", "cpu")
    flops = 2.0 * size**3
    columns = {
        "row_id": [f"h{host}r{run}{i}" for i in suite.ids],
        "run_id": [f"run-{host}-{run}"] * n,
        "host": [f"host-{host}"] * n,
        "device": np.where(gpu, "cuda:0", "cpu"),
        "device_kind": kinds,
        "device_model": np.where(
            gpu, GPU_MODELS[model % len(GPU_MODELS)], CPU_MODELS[model % len(CPU_MODELS)]
        ),
        "fingerprint": np.char.add(kinds.astype(str), f"-{host}"),
        "workload": suite.names,
        "plugin": ["synthetic"] * n,
        "plugin_version": ["1"] * n,
        "profile": ["full"] * n,
        "params": suite.params,
        "case_key": suite.case_key,
        "axis": ["size"] * n,
        "axis_value": size,
        "status": ["ok"] * n,
        "samples_s": pa.ListArray.from_arrays(
            np.arange(0, n * SAMPLES + 1, SAMPLES, dtype=np.int32), samples
        ),
        "timestamp": stamp,  # UTC
        "calls_per_sample": np.full(n, 10),
        "n_samples": np.full(n, SAMPLES),
        "warmup_calls": np.full(n, 4),
        "median_s": median,
        "ci_low_s": samples.reshape(n, SAMPLES).min(axis=1),
        "ci_high_s": samples.reshape(n, SAMPLES).max(axis=1),
        "iqr_s": median * 0.02,
        "flops": flops,
        "tflops": flops / median / 1e12,
        "world_size": np.ones(n, dtype=np.int64),
        "metrics": suite.metrics,
        "device_info": [json.dumps({"model": "Synthetic", "memory_bytes": 80 * 2**30})] * n,
        "schema_version": np.full(n, store.SCHEMA_VERSION),
    }
    arrays = [
        _array(columns[f.name], f.type) if f.name in columns else pa.nulls(n, type=f.type)
        for f in store.SCHEMA
    ]
    return pa.Table.from_arrays(arrays, schema=store.SCHEMA)


def _array(values: object, type_: pa.DataType) -> pa.Array:
    return values if isinstance(values, pa.Array) else pa.array(values, type=type_)


def write_store(root: Path, shape: Shape, seed: int = 0) -> int:
    """Write ``shape``'s store under ``root``, one part file per run; the rows written."""
    rng, suite = np.random.default_rng(seed), Suite.of(shape)
    for host in range(shape.hosts):
        for run in range(shape.runs):
            folder = store.run_dir(root, f"host-{host}", f"run-{host}-{run}")
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(run_table(shape, suite, host, run, rng), folder / "part-0.parquet")
    return shape.rows
