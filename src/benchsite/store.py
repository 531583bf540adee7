"""The results store: a Parquet dataset partitioned by host and run.

Layout: ``<root>/host=<host>/run=<run_id>/part-<n>.parquet``. Every finished case is written as
its own part file (temp file, then rename) before the next case starts, so an interrupted run
loses at most the case in flight; when a run ends its parts are compacted into one file. Runs
never share files, so many machines and processes can write into one store without locking.

One canonical schema (:data:`SCHEMA`) is cast on every write and passed on every read: a file
written before a column existed reads that column as null. The schema is additive only; its
version is stored in each file's metadata. ``docs/results-schema.md`` documents every column.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from benchsite.errors import StoreError

SCHEMA_VERSION = 1

_F64 = pa.float64()
SCHEMA = pa.schema(
    [
        ("row_id", pa.string()),
        ("run_id", pa.string()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("host", pa.string()),
        ("device", pa.string()),
        ("device_kind", pa.string()),
        ("device_model", pa.string()),
        ("fingerprint", pa.string()),
        ("workload", pa.string()),
        ("plugin", pa.string()),
        ("plugin_version", pa.string()),
        ("profile", pa.string()),
        ("params", pa.string()),
        ("case_key", pa.string()),
        ("axis", pa.string()),
        ("axis_value", _F64),
        ("status", pa.string()),
        ("error", pa.string()),
        ("samples_s", pa.list_(_F64)),
        ("calls_per_sample", pa.int64()),
        ("n_samples", pa.int64()),
        ("warmup_calls", pa.int64()),
        ("median_s", _F64),
        ("mean_s", _F64),
        ("std_s", _F64),
        ("min_s", _F64),
        ("q1_s", _F64),
        ("q3_s", _F64),
        ("iqr_s", _F64),
        ("ci_low_s", _F64),
        ("ci_high_s", _F64),
        ("rel_ci", _F64),
        ("converged", pa.bool_()),
        ("measure_s", _F64),
        ("flops", _F64),
        ("bytes", _F64),
        ("items", _F64),
        ("tflops", _F64),
        ("gbps", _F64),
        ("items_per_s", _F64),
        ("threads", pa.int64()),
        ("cache_flushed", pa.bool_()),
        ("world_size", pa.int64()),
        ("ranks", pa.string()),
        ("metrics", pa.string()),
        ("device_info", pa.string()),
        ("environment", pa.string()),
        ("benchsite_version", pa.string()),
        ("torch_version", pa.string()),
        ("schema_version", pa.int64()),
        # stationarity of the samples and the device's own time (docs/results-schema.md)
        ("shift", _F64),
        ("drift_p", _F64),
        ("stationary", pa.bool_()),
        ("sampling_passes", pa.int64()),
        ("device_median_s", _F64),
        ("device_samples_s", pa.list_(_F64)),
    ]
)
JSON_COLUMNS = ("params", "ranks", "metrics", "device_info", "environment")


def run_dir(root: Path, host: str, run_id: str) -> Path:
    return Path(root) / f"host={_safe(host)}" / f"run={_safe(run_id)}"


def _safe(text: str) -> str:
    """Keep a partition value readable and filesystem-safe."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text) or "_"


def to_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Cast result rows (dicts) to the canonical schema; JSON columns may be given as objects."""
    columns: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
    for row in rows:
        unknown = set(row) - set(columns)
        if unknown:
            raise StoreError(f"result row has columns the schema lacks: {sorted(unknown)}")
        for name in SCHEMA.names:
            value = row.get(name)
            if name in JSON_COLUMNS and value is not None and not isinstance(value, str):
                value = json.dumps(value, sort_keys=True, default=str)
            columns[name].append(value)
    return pa.table(columns, schema=SCHEMA).replace_schema_metadata(
        {"benchsite.schema_version": str(SCHEMA_VERSION)}
    )


def write_rows(root: Path, host: str, run_id: str, rows: list[Mapping[str, Any]]) -> Path:
    """Write rows as a new part file of one run, atomically (temp file, then rename)."""
    folder = run_dir(root, host, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"part-{uuid.uuid4().hex[:12]}.parquet"
    _write_atomic(to_table(rows), final)
    return final


def _write_atomic(table: pa.Table, final: Path) -> None:
    temp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    pq.write_table(table, temp)
    with open(temp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temp, final)


def compact_run(root: Path, host: str, run_id: str) -> Path | None:
    """Merge a run's part files into one file (for fast reads), keeping rows exactly."""
    folder = run_dir(root, host, run_id)
    parts = sorted(folder.glob("part-*.parquet"))
    if len(parts) < 2:
        return parts[0] if parts else None
    table = pa.concat_tables(_read_file(part) for part in parts)
    final = folder / f"part-{uuid.uuid4().hex[:12]}.parquet"
    _write_atomic(table, final)
    for part in parts:
        part.unlink()
    return final


def _read_file(path: Path) -> pa.Table:
    """One part file, brought to the current schema (columns it predates read as null)."""
    return ds.dataset(str(path), schema=SCHEMA, format="parquet").to_table()


def read_table(root: Path) -> pa.Table:
    """Read every row of the store at ``root`` as an Arrow table with the canonical schema."""
    root = Path(root)
    if not root.exists():
        return SCHEMA.empty_table()
    if not root.is_dir():
        raise StoreError(f"{root} is not a folder: pass --results a results store folder")
    files = sorted(str(p) for p in root.glob("host=*/run=*/part-*.parquet"))
    if not files:
        return SCHEMA.empty_table()
    try:
        return ds.dataset(files, schema=SCHEMA, format="parquet").to_table()
    except (pa.ArrowInvalid, OSError) as exc:
        raise StoreError(f"cannot read the results store {root}: {exc}") from exc


def read_results(root: Path) -> pd.DataFrame:
    """Read the whole store as a data frame, one row per case, newest run last.

    Text columns hold Python strings (``object``, as pandas 2 gives them): analyses and pages
    walk rows one by one, and pandas 3's Arrow-backed strings cost ~2 µs per value to walk.
    """
    frame = read_table(root).to_pandas()
    text = [name for name in frame.columns if isinstance(frame[name].dtype, pd.StringDtype)]
    frame = frame.astype(dict.fromkeys(text, object))
    return frame.sort_values(["timestamp", "row_id"], kind="stable").reset_index(drop=True)


def decode_json(frame: pd.DataFrame, column: str) -> pd.Series:
    """The JSON column ``column`` decoded into dicts (``{}`` where null).

    Each distinct text is decoded once: a store repeats the same parameters, metrics and device
    info across runs and hosts. Rows with equal text share one dict, so read it, never change it.
    """
    loaded: dict[str, Any] = {}

    def load(text: Any) -> Any:
        if not isinstance(text, str):
            return {}
        if text not in loaded:
            loaded[text] = json.loads(text)
        return loaded[text]

    return frame[column].map(load)


def expand_json(frame: pd.DataFrame, column: str, prefix: str = "") -> pd.DataFrame:
    """A frame with one column per key of the JSON column ``column`` (e.g. every parameter)."""
    decoded = decode_json(frame, column)
    expanded = pd.DataFrame(decoded.tolist(), index=frame.index)
    return expanded.add_prefix(prefix)


def list_runs(root: Path) -> pd.DataFrame:
    """One row per run in the store: host, run id, start, cases, statuses."""
    frame = read_results(root)
    if frame.empty:
        return pd.DataFrame(columns=["host", "run_id", "started", "cases", "ok", "failed"])
    grouped = frame.groupby(["host", "run_id"], observed=True)
    runs = grouped.agg(
        started=("timestamp", "min"),
        cases=("row_id", "size"),
        ok=("status", lambda s: int((s == "ok").sum())),
    ).reset_index()
    runs["failed"] = runs["cases"] - runs["ok"]
    return runs.sort_values("started").reset_index(drop=True)
