"""CSV files of result rows, for the site's ``data/results.csv`` and ``benchsite results
--csv``: one writer, so both quote alike.

Spreadsheets run a cell that begins with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or
a carriage return) as a formula: a plugin's error text or skip reason stored in a result would
run on the machine of whoever opens the CSV. Every *text* cell that begins with one of those is
written with a leading ``'`` (OWASP's advice for CSV injection), which spreadsheets show as
text; number columns are written as numbers (``-0.5`` stays a number).
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

__all__ = ["FORMULA_START", "csv_bytes", "inert"]

FORMULA_START = r"^[=+\-@\t\r]"  # what a cell a spreadsheet would run begins with


def csv_bytes(table: pa.Table) -> bytes:
    """The table as CSV, written by Arrow: a store's 100,000 rows take ~1 s instead of ~7 s with
    pandas, most of that spent writing floats (Arrow writes the same values, with exponents such
    as ``1e-8`` where Python writes ``1e-08``; timestamps in ISO form, booleans as
    ``true``/``false``). Lists are written as JSON text; text that a spreadsheet would run as a
    formula is quoted (see the module)."""
    for index, field in enumerate(table.schema):
        if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
            table = table.set_column(index, field.name, _json_lists(table.column(index)))
    for index, field in enumerate(table.schema):
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            table = table.set_column(index, field.name, inert(table.column(index)))
    buffer = io.BytesIO()
    pacsv.write_csv(table, buffer)
    return buffer.getvalue()


def inert(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """A text column with ``'`` before every cell a spreadsheet would run as a formula."""
    formula = pc.fill_null(pc.match_substring_regex(column, FORMULA_START), False)
    quote = pa.scalar("'", type=column.type)
    quoted = pc.binary_join_element_wise(quote, column, pa.scalar("", type=column.type))
    return pc.if_else(formula, quoted, column)


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
