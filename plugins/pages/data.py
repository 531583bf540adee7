"""The Data page: every row of the store as downloadable Parquet and CSV, and what each column
holds (see ``docs/results-schema.md``)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from benchsite import Page, RenderedPage, hookimpl
from benchsite.tables.rows import DERIVED_COLUMNS
from benchsite.units import format_bytes

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site


# the per-sample lists: in the Parquet file only. A spreadsheet has no use for them, and they
# are most of a big store's CSV (a million rows: hundreds of MB, over GitHub Pages' 100 MB a file)
SAMPLE_COLUMNS = ["samples_s", "device_samples_s"]


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


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="data", nav="Data", order=90, render=render)]


def render(site: Site) -> list[RenderedPage]:
    frame = site.results.drop(columns=list(DERIVED_COLUMNS))
    table = pa.Table.from_pandas(_plain(frame), preserve_index=False)
    unsampled = table.drop_columns([name for name in SAMPLE_COLUMNS if name in table.column_names])
    parquet, csv = parquet_bytes(table), csv_bytes(unsampled)
    files = [
        DataFile(
            "results.parquet",
            "data/results.parquet",
            format_bytes(len(parquet)),
            "Every row and column, including every timing sample (Parquet, zstd).",
        ),
        DataFile(
            "results.csv",
            "data/results.csv",
            format_bytes(len(csv)),
            "The same rows as CSV, with each row's statistics but not its timing samples "
            "(those are in the Parquet file); list and JSON columns are JSON text.",
        ),
    ]
    context = DataContext(files, len(frame), list(frame.columns))
    return [
        RenderedPage("data/results.parquet", parquet),
        RenderedPage("data/results.csv", csv),
        site.render("data.html", "data.html", context, "data"),
    ]


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
    """Flags as lists (the site keeps them as tuples); no flags column when no plugin set any."""
    plain = frame.copy()
    if "flags" in plain:
        if plain["flags"].map(len).sum() == 0:
            return plain.drop(columns=["flags"])
        plain["flags"] = plain["flags"].map(list)
    return plain
