"""The Data page: every row of the store as downloadable Parquet and CSV, and what each column
holds (see ``docs/results-schema.md``)."""

from __future__ import annotations

import io
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchsite import Page, RenderedPage, hookimpl
from benchsite.site import Site
from benchsite.site.context import DataContext, DataFile
from benchsite.units import format_number

SITE_COLUMNS = ("params_obj", "params_text", "variant", "series")


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="data", nav="Data", order=90, render=render)]


def render(site: Site) -> list[RenderedPage]:
    frame = site.results.drop(columns=list(SITE_COLUMNS))
    parquet, csv = parquet_bytes(frame), csv_bytes(frame)
    files = [
        DataFile(
            "results.parquet",
            "data/results.parquet",
            format_number(len(parquet), "B"),
            "Every row and column, including every timing sample (Parquet, zstd).",
        ),
        DataFile(
            "results.csv",
            "data/results.csv",
            format_number(len(csv), "B"),
            "The same rows as CSV; list and JSON columns are JSON text.",
        ),
    ]
    context = DataContext(files, len(frame), list(frame.columns))
    return [
        RenderedPage("data/results.parquet", parquet),
        RenderedPage("data/results.csv", csv),
        site.render("data.html", "data.html", context, "data"),
    ]


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    table = pa.Table.from_pandas(_plain(frame), preserve_index=False)
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def csv_bytes(frame: pd.DataFrame) -> bytes:
    plain = _plain(frame)
    for column in ("samples_s", "flags"):
        if column in plain:
            plain[column] = plain[column].map(_json_list)
    return plain.to_csv(index=False).encode("utf-8")


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Flags as lists (the site keeps them as tuples); no flags column when no plugin set any."""
    plain = frame.copy()
    if "flags" in plain:
        if plain["flags"].map(len).sum() == 0:
            return plain.drop(columns=["flags"])
        plain["flags"] = plain["flags"].map(list)
    return plain


def _json_list(value: object) -> str:
    return (
        json.dumps([float(v) if isinstance(v, float) else v for v in value])
        if (value is not None and not isinstance(value, float))
        else ""
    )
