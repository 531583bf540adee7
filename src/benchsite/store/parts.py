"""The results store: a Parquet dataset partitioned by host and run.

Layout: ``<root>/host=<host>/run=<run_id>/part-<id>.parquet``. Every finished case is written as
its own part file before the next case starts, so an interrupted run loses at most the case in
flight; when a run ends its parts are compacted into one file. Each run has one writer at a
time (:func:`benchsite.store.runlock.run_lock`), so many machines and processes write into one
store at once.

One canonical schema (:data:`SCHEMA`) is cast on every write and passed on every read: a file
written before a column existed reads that column as null. The schema is additive only; its
version is stored in each file's metadata, and a store holding a file of a newer version is
refused. ``docs/results-schema.md`` documents every column.

Crash safety: why a kill at any instruction leaves a readable store without duplicates
-------------------------------------------------------------------------------------
Readers see only files named ``part-*.parquet`` that are complete. A file is written under a
hidden temporary name (``.part-<id>.parquet.tmp-<pid>``), fsynced, then renamed into place
(``os.replace`` is atomic) and the folder fsynced. A kill before the rename leaves only a hidden
temporary file, which no reader lists and which the next holder of the run's lock deletes
(:func:`tidy_run`); a kill after it leaves a complete file. So every part a reader lists is whole.

A part may *supersede* others: its Parquet metadata (``benchsite.supersedes``) names the part
files it replaces and the row ids it replaces. The record is inside the file, so it appears in
the same atomic rename as the rows that replace them. Readers take the union of these records
over a run's parts and skip every superseded file and row. Compaction of a run is:

1. list the run's parts and read their records; the live parts are those not superseded;
2. write one new part holding the live rows, recording as superseded every part listed in step 1
   *and* every part those already superseded (the record is transitive);
3. rename it into place (the commit point), then unlink the superseded parts one by one.

A kill before 3 leaves the old parts and a temporary file: the store reads as before. A kill
at any point after 3 leaves the new part plus some of the parts it names; readers skip those, and
because the record is transitive, whichever subset of older parts survives is still covered.
The next compaction or :func:`tidy_run` unlinks what remains. A reader racing a compaction may
list a part that is unlinked before it reads it; the unlink happens only after the superseding
part was renamed into place, so the reader lists the run again and finds it (:func:`_read_run`).
``--retry-failed`` uses the same record: the new row's part supersedes the failed row's id.
As a second line of defence, readers drop any repeated ``row_id``, and keep one row of each case
of a run (:data:`CASE_COLUMNS`; the newest), as compaction does.

Object stores (``s3://``, ``gs://``, ``az://``; :mod:`benchsite.store.remote`)
-------------------------------------------------------------------------
An object store has no rename, and needs none: an object becomes visible whole when its upload
completes, or never. A part is written once, directly under its unique final key; a writer
killed mid-upload leaves an unfinished upload that no listing shows. Supersedes records,
compaction and the repeated-``row_id`` defence work unchanged, so a kill at any step again
leaves every row readable once. A run has one writer there too: the lock is a lease object
with a heartbeat (:mod:`benchsite.store.lease`), so a second ``--resume`` of a run being written
is refused.

Every step is a fault point (:mod:`benchsite.store.faults`): ``tests/test_faults.py`` kills a writer
with real signals at each of them and checks the invariants above.
"""

from __future__ import annotations

import errno
import functools
import json
import math
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from benchsite._infra import atomic
from benchsite._infra.status import FAILED
from benchsite._infra.text import first_line
from benchsite.errors import StoreError, StoreWarning
from benchsite.store import faults
from benchsite.store.remote import RemotePath, translated

Folder = (
    Path | RemotePath
)  # a local folder, or a prefix of an object store (benchsite.store.remote)

T = TypeVar("T")
SCHEMA_VERSION = 3
SUPERSEDES_KEY = b"benchsite.supersedes"

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
        # what the user said about the run: `benchsite run --label key=value`
        ("labels", pa.string()),
        # rounds: the case measured in several worker processes (docs/results-schema.md)
        ("rounds", pa.int64()),
        ("round_medians_s", pa.list_(_F64)),
        ("round_ci_low_s", pa.list_(_F64)),
        ("round_ci_high_s", pa.list_(_F64)),
        ("round_sizes", pa.list_(pa.int64())),
        ("round_spread", _F64),
        ("rounds_p", _F64),
        ("reproducible", pa.bool_()),
        # what one of `items` is, as the workload declared it: "image" (null: none, items)
        ("item_unit", pa.string()),
    ]
)
JSON_COLUMNS = ("params", "ranks", "metrics", "device_info", "environment", "labels")


def run_dir(root: Folder, host: str, run_id: str) -> Folder:
    return _root(root) / f"host={_safe(host)}" / f"run={_safe(run_id)}"


def _root(root: Folder | str) -> Folder:
    return root if isinstance(root, RemotePath) else Path(root)


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
                value = json.dumps(_finite(value), sort_keys=True, default=str, allow_nan=False)
            columns[name].append(value)
    return pa.table(columns, schema=SCHEMA).replace_schema_metadata(
        {"benchsite.schema_version": str(SCHEMA_VERSION)}
    )


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite number as ``None``: JSON has no NaN (Python would
    write a bare ``NaN`` that other readers refuse)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def write_rows(
    root: Folder,
    host: str,
    run_id: str,
    rows: list[Mapping[str, Any]],
    supersedes_rows: Iterable[str] = (),
) -> Folder:
    """Write rows as a new part file of one run, atomically; the part replaces the rows whose ids
    are in ``supersedes_rows`` (a retried case's failed row)."""
    folder = run_dir(root, host, run_id)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create {folder} ({exc.strerror}): check --results") from None
    table = _with_record(to_table(rows), files=(), rows=supersedes_rows)
    return _write_atomic(table, folder, "write")


def _with_record(table: pa.Table, files: Iterable[str], rows: Iterable[str]) -> pa.Table:
    record = {"files": sorted(set(files)), "rows": sorted(set(rows))}
    metadata = {**(table.schema.metadata or {})}
    metadata[b"benchsite.schema_version"] = str(SCHEMA_VERSION).encode()
    if record["files"] or record["rows"]:
        metadata[SUPERSEDES_KEY] = json.dumps(record).encode()
    return table.replace_schema_metadata(metadata)


def _write_atomic(table: pa.Table, folder: Folder, step: str) -> Folder:
    """Write ``table`` as a new part of ``folder``: hidden temporary file, fsync, rename, fsync
    of the folder (:func:`benchsite._infra.atomic.replacing`). A failed write leaves no
    temporary file behind. In an object store the part
    is written once under its unique key: an object appears whole when its upload completes, or
    not at all, so no rename is needed (nor offered)."""
    final = folder / f"part-{uuid.uuid4().hex[:12]}.parquet"
    if isinstance(final, RemotePath):
        with translated(final):
            pq.write_table(table, final.path, filesystem=final.fs)
        faults.point(f"{step}:after-rename")
        return final
    written = functools.partial(faults.point, f"{step}:after-write")
    try:
        with atomic.replacing(final, durable=True, before_replace=written) as temp:
            pq.write_table(table, temp)
    except OSError as exc:
        raise StoreError(f"cannot write {final} ({exc.strerror}): {_advice(exc)}") from None
    faults.point(f"{step}:after-rename")
    return final


def _advice(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full; free space and resume with `benchsite run --resume`"
    return "check that the results folder is writable"


def compact_run(root: Folder, host: str, run_id: str) -> Folder | None:
    """Merge a run's live parts into one file and unlink the parts it replaces (see the module
    docstring for why a kill at any step is safe). Call it holding the run's lock."""
    folder = run_dir(root, host, run_id)
    scan = scan_listing(folder)
    if len(scan.live) < 2:
        _unlink_all(folder, scan.superseded_present)
        return folder / scan.live[0] if scan.live else None
    table = _unique_rows(_read_live(folder, scan))  # one row per case, as readers keep
    replaced = {*scan.live, *scan.superseded}
    final = _write_atomic(_with_record(table, replaced, scan.rows), folder, "compact")
    _unlink_all(folder, sorted(replaced & set(scan.present)))
    return final


def tidy_run(folder: Folder) -> None:
    """Remove what dead writers of this run left: temporary files and superseded parts. Call
    it holding the run's lock (no other writer of the run can then exist)."""
    for temp in folder.glob(".part-*.tmp-*"):
        temp.unlink(missing_ok=True)
    _unlink_all(folder, scan_listing(folder).superseded_present)


def _unlink_all(folder: Folder, names: Iterable[str]) -> None:
    for name in names:
        (folder / name).unlink(missing_ok=True)
        faults.point("compact:after-unlink")


@dataclass
class RunScan:
    """A run folder's parts as a reader sees them: which are live, what they supersede, and the
    parts that cannot be read (name → reason)."""

    present: list[str] = field(default_factory=list)
    live: list[str] = field(default_factory=list)
    superseded: set[str] = field(default_factory=set)
    rows: set[str] = field(default_factory=set)
    bad: dict[str, str] = field(default_factory=dict)

    @property
    def superseded_present(self) -> list[str]:
        return [name for name in self.present if name in self.superseded]


def scan_run(folder: Folder) -> RunScan:
    """Read the footer of every part of a run; raise :class:`StoreError` on a newer schema."""
    scan = RunScan()
    for path in sorted(folder.glob("part-*.parquet")):
        try:
            schema = _read_schema(path)
        except FileNotFoundError:
            raise _Vanished from None
        except (pa.ArrowException, OSError) as exc:
            scan.bad[path.name] = f"not a readable Parquet file ({first_line(exc)})"
            continue
        problem = _foreign(schema) or _check_version(path, schema)
        if problem:
            scan.bad[path.name] = problem
            continue
        scan.present.append(path.name)
        record = json.loads((schema.metadata or {}).get(SUPERSEDES_KEY, b"{}"))
        scan.superseded.update(record.get("files", ()))
        scan.rows.update(record.get("rows", ()))
    scan.live = [name for name in scan.present if name not in scan.superseded]
    return scan


def scan_listing(folder: Folder) -> RunScan:
    """:func:`scan_run`, listing again while a part vanishes under it (a compaction of another
    process committed)."""
    return _steadily(folder, lambda: scan_run(folder))


def unreadable_parts(folder: Folder) -> dict[str, str]:
    """The parts of a run that readers skip (footers and data pages read), name → reason."""

    def scan_and_read() -> dict[str, str]:
        scan = scan_run(folder)
        read_parts(folder, scan)
        return scan.bad

    return _steadily(folder, scan_and_read)


def _steadily(folder: Folder, read: Callable[[], T]) -> T:
    """``read()`` again while a part vanishes under it; one line if the run never holds still."""
    for _ in range(20):
        try:
            return read()
        except _Vanished:
            continue
    raise StoreError(f"{folder} kept changing while it was read: try again")


def check_schema(root: Folder) -> None:
    """Raise a one-line :class:`StoreError` if a part of the store at ``root`` was written by a
    newer benchsite (its footers only: a run refuses such a store before any work)."""
    root = _root(root)
    if root.is_dir():
        for folder in run_folders(root):
            scan_listing(folder)


def _read_schema(path: Folder) -> pa.Schema:
    if isinstance(path, RemotePath):
        return pq.read_schema(path.path, filesystem=path.fs)
    return pq.read_schema(path)


def _dataset(paths: list[Folder]) -> ds.Dataset:
    """The Parquet parts ``paths`` (all of one store) as one dataset of the canonical schema."""
    remote = [path for path in paths if isinstance(path, RemotePath)]
    if remote:
        return ds.dataset(
            [p.path for p in remote], schema=SCHEMA, format="parquet", filesystem=remote[0].fs
        )
    return ds.dataset([str(path) for path in paths], schema=SCHEMA, format="parquet")


# the columns every part has held since the first schema: a file without one is not a part
REQUIRED = ("row_id", "run_id", "host", "device", "workload", "params", "case_key", "status")


def _foreign(schema: pa.Schema) -> str | None:
    missing = [name for name in REQUIRED if name not in schema.names]
    if missing:
        return f"not a benchsite part (no {', '.join(missing)} column)"
    for field_ in schema:
        expected = SCHEMA_TYPES.get(field_.name)
        if expected is not None and field_.type != expected:
            if not _same_kind(field_.type, expected):
                return f"not a benchsite part (column {field_.name} is {field_.type})"
    return None


# each column's type by name, looked up for every column of every part read
SCHEMA_TYPES = {field_.name: field_.type for field_ in SCHEMA}


def _same_kind(found: pa.DataType, expected: pa.DataType) -> bool:
    text = (pa.types.is_string, pa.types.is_large_string)
    return (any(test(found) for test in text) and any(test(expected) for test in text)) or (
        pa.types.is_timestamp(found) and pa.types.is_timestamp(expected)
    )


def _check_version(path: Path, schema: pa.Schema) -> None:
    raw = (schema.metadata or {}).get(b"benchsite.schema_version", b"1")
    version = int(raw) if raw.isdigit() else 0
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer benchsite (schema version {version}, this one reads "
            f"up to {SCHEMA_VERSION}): upgrade benchsite to read this store"
        )


class _Vanished(Exception):
    """A part was unlinked while a reader listed the run: a compaction committed meanwhile."""


def _read_live(folder: Folder, scan: RunScan) -> pa.Table:
    """The live rows of a run: superseded rows dropped, parts that fail to read skipped (and
    added to ``scan.bad``)."""
    try:
        table = _dataset([folder / name for name in scan.live]).to_table()
    except FileNotFoundError:
        raise _Vanished from None
    except (pa.ArrowException, OSError):
        table = pa.concat_tables(read_parts(folder, scan))
    if scan.rows:
        table = table.filter(pc.invert(pc.is_in(table["row_id"], pa.array(sorted(scan.rows)))))
    return table


def read_parts(folder: Folder, scan: RunScan) -> list[pa.Table]:
    tables = [SCHEMA.empty_table()]
    for name in list(scan.live):
        try:
            tables.append(_dataset([folder / name]).to_table())
        except FileNotFoundError:
            raise _Vanished from None
        except (pa.ArrowException, OSError) as exc:
            scan.bad[name] = f"cannot be read ({first_line(exc)})"
            scan.live.remove(name)
            scan.present.remove(name)
    return tables


def _read_run(folder: Folder) -> tuple[pa.Table, dict[str, str]]:
    """A run's live rows and its unreadable parts, listing again if a compaction commits while
    it reads."""

    def read() -> tuple[pa.Table, dict[str, str]]:
        scan = scan_run(folder)
        return _read_live(folder, scan), scan.bad

    return _steadily(folder, read)


def run_folders(root: Folder) -> list[Folder]:
    """Every run folder of the store at ``root``."""
    if isinstance(root, RemotePath):
        return sorted(root.glob("host=*/run=*"))
    return sorted(path for path in Path(root).glob("host=*/run=*") if path.is_dir())


def read_table(root: Folder) -> pa.Table:
    """Read every live row of the store at ``root`` with the canonical schema. A part that
    cannot be read is skipped with a :class:`StoreWarning` naming it; each ``row_id`` once."""
    root = _root(root)
    if not root.exists():
        return SCHEMA.empty_table()
    if not root.is_dir():
        raise StoreError(f"{root} is not a folder: pass --results a results store folder")
    folders = run_folders(root)
    whole = _read_at_once(folders)
    if whole is not None:
        return _unique_rows(whole)
    tables = [SCHEMA.empty_table()]
    for folder in folders:
        table, bad = _read_run(folder)
        tables.append(table)
        for name, reason in bad.items():
            warnings.warn(StoreWarning(f"skipped {folder / name}: {reason}"), stacklevel=2)
    return _unique_rows(pa.concat_tables(tables))


def _read_at_once(folders: list[Folder]) -> pa.Table | None:
    """Every run's live parts read as one dataset, in the order of ``folders`` (one read, not one
    per run). ``None`` (read them a run at a time, as
    :func:`_read_run` does) where a run needs care: a part that cannot be read, rows that a
    compaction superseded, or a part that vanished meanwhile (a compaction committing)."""
    try:
        scans = [(folder, scan_run(folder)) for folder in folders]
    except _Vanished:
        return None
    if any(scan.bad or scan.rows for _, scan in scans):
        return None
    paths = [folder / name for folder, scan in scans for name in scan.live]
    if not paths:
        return SCHEMA.empty_table()
    try:
        return _dataset(paths).to_table()
    except (pa.ArrowException, OSError):  # FileNotFoundError too
        return None


# what one case of one run is: two rows with these equal are one measurement stored twice
CASE_COLUMNS = ("host", "run_id", "device", "case_key")


def _unique_rows(table: pa.Table) -> pa.Table:
    """Each ``row_id`` once, and each case of a run once (its newest row)."""
    ids = table["row_id"].to_pandas()
    repeated = ids.duplicated() & ids.notna()
    table = table.filter(pa.array(~repeated.to_numpy())) if repeated.any() else table
    return _one_per_case(table)


def _one_per_case(table: pa.Table) -> pa.Table:
    """The newest row of each case of each run (rows without a case key are all kept). Two
    writers of one run cannot store a case twice (:mod:`benchsite._infra.lock`); this keeps
    readers right about a store written before that held, whatever happened to it."""
    keyed = table.select(CASE_COLUMNS)
    if keyed.group_by(list(CASE_COLUMNS)).aggregate([]).num_rows == table.num_rows:
        return table  # the usual case, told by one hash aggregation
    frame = keyed.to_pandas()
    frame["timestamp"] = table["timestamp"].to_pandas()
    newest_last = frame.sort_values("timestamp", kind="stable", na_position="first")
    repeated = newest_last.duplicated(list(CASE_COLUMNS), keep="last").sort_index()
    repeated &= frame["case_key"].notna()
    return table.filter(pa.array(~repeated.to_numpy()))


def read_results(root: Folder) -> pd.DataFrame:
    """Read the whole store as a data frame, one row per case, newest run last.

    Text columns hold Python strings (``object``, as pandas 2 gives them): analyses and pages
    walk rows one by one, which is slower over pandas 3's Arrow-backed strings.
    """
    return frame_of(read_table(root))


def frame_of(table: pa.Table) -> pd.DataFrame:
    """Rows of the canonical schema as :func:`read_results` gives them: newest run last, text
    columns as Python strings."""
    # sorted by Arrow (a stable sort, nulls last, texts by code point as Python compares them),
    # faster than pandas at sorting many rows by their row ids
    table = table.take(
        pc.sort_indices(table, [("timestamp", "ascending"), ("row_id", "ascending")])
    )
    text = [f.name for f in table.schema if pa.types.is_string(f.type)]  # the schema's texts
    frame = table.drop_columns(text).to_pandas()
    for name in text:  # each distinct text one str object, shared by its rows
        # a Series of dtype object: a bare object array would be inferred as pandas 3's ``str``
        frame[name] = pd.Series(_shared_strings(table.column(name)), dtype=object)
    frame = frame[table.column_names]
    del table  # and hand what Arrow's allocator kept of it back
    pa.default_memory_pool().release_unused()
    return frame


def _shared_strings(column: pa.ChunkedArray) -> np.ndarray:
    """A text column as Python strings (``None`` where null), one object per distinct value."""
    encoded = column.combine_chunks().dictionary_encode()
    values = np.array([*encoded.dictionary.to_pylist(), None], dtype=object)
    return values[encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)]


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


def list_runs(root: Folder) -> pd.DataFrame:
    """One row per run in the store: host, run id, start, cases, statuses."""
    frame = read_results(root)
    if frame.empty:
        return pd.DataFrame(columns=["host", "run_id", "started", "cases", "ok", "failed"])
    grouped = frame.groupby(["host", "run_id"], observed=True)
    runs = grouped.agg(
        started=("timestamp", "min"),
        cases=("row_id", "size"),
        ok=("status", lambda s: int((s == "ok").sum())),
        failed=("status", lambda s: int(s.isin(FAILED).sum())),
    ).reset_index()
    return runs.sort_values("started").reset_index(drop=True)
