"""The Data page: every row of the store as downloadable Parquet and CSV, and what each column
holds (see ``docs/results-schema.md``).

Each file stays under :data:`MAX_FILE_BYTES`, so that the site can be published from a Git
repository: GitHub warns above 50 MiB a file and refuses a push above 100 MiB, and a GitHub
Pages site may hold 1 GB. A CSV above the limit is gzipped (a million rows: 496 MiB of CSV,
41.5 MiB gzipped in ~1.5 s), and a file still above it is cut into parts of whole rows
(``results-1.parquet``, ``results-2.parquet``, …).
"""

from __future__ import annotations

import gzip
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from benchsite import Page, RenderedPage, hookimpl
from benchsite.units import format_bytes

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site


# the per-sample lists: in the Parquet file only. A spreadsheet has no use for them, and they
# are most of a big store's CSV (a million rows: hundreds of MB, over GitHub Pages' 100 MB a file)
SAMPLE_COLUMNS = ["samples_s", "device_samples_s"]
MAX_FILE_BYTES = 50 * 2**20
PARQUET_TEXT = "Every row and column, including every timing sample (Parquet, zstd)."
CSV_TEXT = (
    "The same rows as CSV, with each row's statistics but not its timing samples (those are in "
    "the Parquet file); list and JSON columns are JSON text."
)


@dataclass(frozen=True)
class DataFile:
    name: str
    href: str
    size: str
    description: str


@dataclass(frozen=True)
class DataContext:
    """``data.html``: the downloadable files and the columns they hold."""

    files: list[DataFile]
    rows: int
    columns: list[str]
    parquet_names: list[str]  # one file, or its parts in order


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="data", nav="Data", order=90, render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.tables import DERIVED_COLUMNS

    frame = site.results.drop(columns=list(DERIVED_COLUMNS))
    table = pa.Table.from_pandas(_plain(frame), preserve_index=False)
    unsampled = table.drop_columns([name for name in SAMPLE_COLUMNS if name in table.column_names])
    parquet = named_parts("results", "parquet", in_parts(table, parquet_bytes))
    csv = csv_bytes(unsampled)
    csvs, csv_text = [("results.csv", csv)], CSV_TEXT
    if len(csv) > MAX_FILE_BYTES:  # a big store's CSV: gzipped, it is ~12 times smaller
        packed = in_parts(unsampled, lambda part: gzipped(csv_bytes(part)), first=gzipped(csv))
        csvs = named_parts("results", "csv.gz", packed)
        csv_text = f"{CSV_TEXT} Gzipped: as plain text it is {format_bytes(len(csv))}."
    files = [
        DataFile(name, f"data/{name}", format_bytes(len(blob)), _described(text, n, len(found)))
        for found, text in ((parquet, PARQUET_TEXT), (csvs, csv_text))
        for n, (name, blob) in enumerate(found, start=1)
    ]
    context = DataContext(files, len(frame), list(frame.columns), [name for name, _ in parquet])
    return [
        *(RenderedPage(f"data/{name}", blob) for name, blob in parquet + csvs),
        site.render("data.html", "data.html", context, "data"),
    ]


def _described(text: str, part: int, parts: int) -> str:
    if parts == 1:
        return text
    if part == 1:
        return f"{text} In {parts} parts of whole rows, each under {format_bytes(MAX_FILE_BYTES)}."
    return f"Part {part} of {parts}."


def in_parts(
    table: pa.Table,
    write: Callable[[pa.Table], bytes],
    first: bytes | None = None,
) -> list[bytes]:
    """``write(table)`` (``first`` when already written), or, when that is over
    :data:`MAX_FILE_BYTES`, ``write`` of as few consecutive row slices as keeps each one under
    it (if one row can be)."""
    blobs, limit = [first if first is not None else write(table)], MAX_FILE_BYTES
    while max(map(len, blobs)) > limit and len(blobs) < table.num_rows:
        parts = max(len(blobs) + 1, math.ceil(len(blobs) * max(map(len, blobs)) * 1.1 / limit))
        rows = math.ceil(table.num_rows / parts)
        blobs = [write(table.slice(start, rows)) for start in range(0, table.num_rows, rows)]
    return blobs


def named_parts(stem: str, suffix: str, blobs: list[bytes]) -> list[tuple[str, bytes]]:
    """``stem.suffix`` for one file; ``stem-1.suffix``, ``stem-2.suffix``, … for parts."""
    if len(blobs) == 1:
        return [(f"{stem}.{suffix}", blobs[0])]
    return [(f"{stem}-{n}.{suffix}", blob) for n, blob in enumerate(blobs, start=1)]


def gzipped(data: bytes) -> bytes:
    """Level 3: as fast as level 1 here (~340 MB/s) and 12% smaller; level 6 is 2.6 times
    slower for 14% less. No time in the header: the same rows give the same file (a site kept
    in Git does not change it on every rebuild)."""
    return gzip.compress(data, compresslevel=3, mtime=0)


def parquet_bytes(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def csv_bytes(table: pa.Table) -> bytes:
    """The table as CSV, written by Arrow: a store's 100,000 rows take ~1 s instead of ~7 s with
    pandas, most of that spent writing floats (Arrow writes the same values, with exponents such
    as ``1e-8`` where Python writes ``1e-08``; timestamps in ISO form, booleans as
    ``true``/``false``)."""
    for index, field in enumerate(table.schema):
        if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
            table = table.set_column(index, field.name, _json_lists(table.column(index)))
    buffer = io.BytesIO()
    pacsv.write_csv(table, buffer)
    return buffer.getvalue()


def _json_lists(column: pa.ChunkedArray) -> pa.Array:
    """A list column as JSON text (``[0.5, 0.25]``, ``["noisy"]``); empty where null."""
    lists = column.combine_chunks()
    values = lists.values
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        escaped = pc.replace_substring(pc.replace_substring(values, "\\", "\\\\"), '"', '\\"')
        items = pc.binary_join_element_wise('"', escaped, '"', "")
    else:
        items = values.cast(pa.string())
    texts = type(lists).from_arrays(lists.offsets, items, mask=lists.is_null())
    return pc.binary_join_element_wise("[", pc.binary_join(texts, ", "), "]", "")


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Flags as lists (the site keeps them as tuples); no flags column when no plugin set any.
    The rows themselves are not copied (a fleet's million took ~1 GB more)."""
    plain = frame.copy(deep=False)
    if "flags" in plain:
        if plain["flags"].map(len).sum() == 0:
            return plain.drop(columns=["flags"])
        plain["flags"] = plain["flags"].map(list)
    return plain
