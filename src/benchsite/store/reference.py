"""Reference results: the rows of another store, read beside the user's own, never into it.

``benchsite build --reference SOURCE`` (repeatable; ``reference = [...]`` at the top of
``benchsite.toml``) names where they come from:

- a short name of the results benchsite ships (:data:`SHIPPED`: ``h200``, the store of
  ``examples/h200/results`` compacted into one Parquet file inside the package);
- a store folder, or a store URL ``--results`` takes (``file://``, ``s3://``, ``gs://``,
  ``az://``);
- one Parquet file of a store's rows: a local ``.parquet`` file, or the ``data/results.parquet``
  of any published benchsite site over ``https://`` or ``http://``.

Every reference is read whole, and checked, before a build does any other work: a source that
cannot be reached, is not a benchsite store, was written by a newer benchsite, or holds no rows
is one :class:`~benchsite.errors.StoreError` line (exit 2). A reference is only ever read: no
function here writes, locks or tidies anything (a store folder is read as
:func:`benchsite.store.parts.read_results` reads it, which writes nothing).

Each row read gets the column :data:`COLUMN`, the reference's label (``h200``, a folder's name,
a URL's host), which is how every later stage tells reference rows from the user's own.
"""

from __future__ import annotations

import io
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchsite.errors import ConfigError, StoreError, StoreWarning
from benchsite.host import config
from benchsite.store import parts
from benchsite.store.remote import SCHEMES, RemotePath, first_line, locate

COLUMN = "reference"  # the label of the reference a row came from (absent from the user's rows)
SHIPPED = {"h200": "h200.parquet"}  # short name → file in the package's reference/ folder
TIMEOUT_S = 30.0  # for an http(s) reference: seconds to connect and to wait for each read
WEB = ("http", "https")


@dataclass(frozen=True)
class Reference:
    """One reference: what the user named (``source``), its label, and its rows (with
    :data:`COLUMN`)."""

    source: str
    label: str
    rows: pd.DataFrame


def read_references(sources: tuple[str, ...]) -> pd.DataFrame:
    """The rows of every reference in ``sources``, each labelled in :data:`COLUMN`; raises
        :class:`StoreError` (one line) at the first source that is not a readable benchsite store
        with rows. Two sources of one label are told apart by a number (``h200``, ``h200-2``); a row
    two references both hold is kept once, from the first."""
    frames, labels = [], set()
    for source in sources:
        reference = read_reference(source)
        label, n = reference.label, 1
        while label in labels:
            n += 1
            label = f"{reference.label}-{n}"
        labels.add(label)
        rows = reference.rows.copy(deep=False)
        rows[COLUMN] = pd.Series(label, index=rows.index, dtype=object)
        frames.append(rows)
    if not frames:
        return pd.DataFrame()
    joined = pd.concat(frames, ignore_index=True)
    return joined.drop_duplicates("row_id", keep="first").reset_index(drop=True)  # each row once


def configured() -> tuple[str, ...]:
    """The references ``benchsite.toml`` names (``[build]`` ``reference = [...]``)."""
    found = config.value("build.reference", [])
    if isinstance(found, str):
        found = [found]
    if not isinstance(found, list) or not all(isinstance(item, str) for item in found):
        raise ConfigError(
            f"{config.config_path()}: build.reference must be a list of texts, like "
            '["h200", "https://example.org/site/data/results.parquet"]'
        )
    return tuple(found)


def read_reference(source: str) -> Reference:
    """One reference's rows (see the module docstring)."""
    source = source.strip()
    if not source:
        raise StoreError("--reference is empty: name h200, a store folder or URL, or a .parquet")
    if source in SHIPPED:
        path = resources.files("benchsite").joinpath("reference", SHIPPED[source])
        return _checked(source, source, _parquet_bytes(source, path.read_bytes()))
    scheme = urlsplit(source).scheme.lower() if "://" in source else ""
    if scheme in WEB:
        return _checked(source, urlsplit(source).netloc, _parquet_bytes(source, _fetch(source)))
    if scheme in ("", "file") and source.endswith(".parquet"):
        path = _locate(source)  # a file:// URL names a local file
        return _checked(source, Path(str(path)).stem, _parquet_bytes(source, _local_bytes(path)))
    rows = _read_store(source)
    return _checked(source, _store_label(source), rows)


def _fetch(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        raise StoreError(
            f"--reference {url}: the server answered {exc.code} {exc.reason}: check the URL "
            "(a site's rows are at <site>/data/results.parquet)"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        why = getattr(exc, "reason", exc)
        raise StoreError(f"--reference {url}: cannot be reached ({why}): check the URL") from None


def _local_bytes(path: Path | RemotePath) -> bytes:
    try:
        return Path(str(path)).expanduser().read_bytes()
    except OSError as exc:
        raise StoreError(f"--reference {path}: cannot be read ({exc.strerror})") from None


def _parquet_bytes(source: str, data: bytes) -> pd.DataFrame:
    """The rows of one Parquet file of store rows (a published site's ``results.parquet``)."""
    try:
        table = pq.read_table(io.BytesIO(data))
    except (pa.ArrowException, OSError) as exc:
        raise StoreError(
            f"--reference {source}: not a Parquet file ({first_line(exc)}): name a benchsite "
            "store or its results.parquet"
        ) from None
    return _as_store_rows(source, table)


def _as_store_rows(source: str, table: pa.Table) -> pd.DataFrame:
    """``table`` in the canonical schema (columns it lacks as nulls); refused when it is not
    store rows or was written by a newer benchsite."""
    if "row_id" not in table.column_names or "median_s" not in table.column_names:
        raise StoreError(
            f"--reference {source}: not a benchsite store (no row_id or median_s column): name "
            "a store, or a site's data/results.parquet"
        )
    _check_version(source, table)
    columns = []
    for field in parts.SCHEMA:
        if field.name in table.column_names:
            columns.append(_cast(source, table.column(field.name), field))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return parts.frame_of(pa.Table.from_arrays(columns, schema=parts.SCHEMA))


def _cast(source: str, column: pa.ChunkedArray, field: pa.Field) -> pa.ChunkedArray:
    try:
        return column.cast(field.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise StoreError(
            f"--reference {source}: not a benchsite store (column {field.name} is "
            f"{column.type}, not {field.type})"
        ) from None


def _check_version(source: str, table: pa.Table) -> None:
    versions = [parts.SCHEMA_VERSION]
    metadata = table.schema.metadata or {}
    try:
        if b"benchsite.schema_version" in metadata:
            versions.append(int(metadata[b"benchsite.schema_version"]))
        if "schema_version" in table.column_names:
            versions.append(int(pc.max(table.column("schema_version")).as_py() or 0))
    except (ValueError, TypeError, pa.ArrowException):
        raise StoreError(
            f"--reference {source}: not a benchsite store (its schema version is not a number)"
        ) from None
    if max(versions) > parts.SCHEMA_VERSION:
        raise StoreError(
            f"--reference {source}: written by a newer benchsite (schema version "
            f"{max(versions)}, this one reads up to {parts.SCHEMA_VERSION}): upgrade benchsite"
        )


def _store_label(source: str) -> str:
    where = locate(source)
    return where.name or str(where)


def _read_store(source: str) -> pd.DataFrame:
    try:
        return _read_folder(source, _locate(source))
    except StoreError as exc:
        if str(exc).startswith("--reference "):
            raise
        text = str(exc).replace("--results", "--reference")  # an object store's line
        raise StoreError(f"--reference {source}: {text}") from None


def _read_folder(source: str, where: Path | RemotePath) -> pd.DataFrame:
    if not where.exists():
        raise StoreError(f"--reference {source} does not exist: name a store folder or URL")
    if not where.is_dir():
        raise StoreError(
            f"--reference {source}: not a benchsite store (a file; a store is a folder, "
            "or name a .parquet file of its rows)"
        )
    if not parts.run_folders(where):
        raise StoreError(
            f"--reference {source}: not a benchsite store (no host=*/run=* folders in it): "
            "name a store folder, or a .parquet file of its rows"
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StoreWarning)
        rows = parts.read_results(where)
    skipped = [found for found in caught if issubclass(found.category, StoreWarning)]
    if rows.empty and skipped:
        raise StoreError(f"--reference {source}: not a benchsite store ({skipped[0].message})")
    for found in skipped:  # a part skipped beside readable ones: said, as for --results
        warnings.warn(StoreWarning(f"--reference {source}: {found.message}"), stacklevel=2)
    return rows


def _locate(source: str) -> Path | RemotePath:
    scheme = urlsplit(source).scheme.lower() if "://" in source else ""
    if scheme and scheme not in (*SCHEMES, "file"):
        raise StoreError(
            f"--reference {source}: unknown scheme {scheme!r}; name h200, a folder, a .parquet "
            "file, or an http(s)://, file://, s3://, gs:// or az:// URL"
        )
    try:
        return locate(source)
    except StoreError as exc:
        raise StoreError(str(exc).replace("--results", "--reference", 1)) from None


def _checked(source: str, label: str, rows: pd.DataFrame) -> Reference:
    if rows.empty:
        raise StoreError(
            f"--reference {source}: holds no results (an empty store): name one with rows"
        )
    return Reference(source, label or source, rows)
