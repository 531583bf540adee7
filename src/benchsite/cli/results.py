"""What ``benchsite results`` shows: one run of the store (the newest, or any chosen by run id
and host), formatted as the site formats it, and the same rows as CSV or JSON for scripts."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from benchsite.cli.listing import aligned
from benchsite.errors import SelectionError
from benchsite.store import parts as store
from benchsite.units import format_rate, format_seconds

EXPORT_COLUMNS = (
    "run_id",
    "host",
    "timestamp",
    "workload",
    "params",
    "device",
    "status",
    "median_s",
    "ci_low_s",
    "ci_high_s",
    "iqr_s",
    "n_samples",
    "calls_per_sample",
    "tflops",
    "gbps",
    "items_per_s",
    "item_unit",  # what items_per_s counts: image, token (empty: items)
    "error",
)
TABLE_COLUMNS = ("workload", "device", "status", "median", "95% CI", "samples", "rate", "params")


def select_run(results: Path, run: str | None = None, host: str | None = None) -> pd.DataFrame:
    """The rows of one run: ``run`` (an id or its unique start), else the newest run of
    ``host`` (of any host when ``None``)."""
    frame = store.read_results(results)
    if frame.empty:
        raise SelectionError(f"{results} holds no results: run `benchsite run` first")
    if host is not None:
        frame = frame[frame["host"].astype(str) == host]
        if frame.empty:
            hosts = ", ".join(sorted(set(store.read_results(results)["host"].astype(str))))
            raise SelectionError(f"no run of host {host!r} in {results}; hosts: {hosts}")
    run_ids = list(dict.fromkeys(frame["run_id"].astype(str)))  # oldest first
    chosen = [run_ids[-1]] if run is None else [rid for rid in run_ids if rid.startswith(run)]
    if len(chosen) != 1:
        what = "no run" if not chosen else f"{len(chosen)} runs"
        raise SelectionError(
            f"{what} matching {run!r} in {results}; newest runs: {', '.join(run_ids[-5:])}"
        )
    return frame[frame["run_id"].astype(str) == chosen[0]]


def heading(rows: pd.DataFrame) -> str:
    first = rows.iloc[0]
    started = rows["timestamp"].min()
    when = "no timestamp" if pd.isna(started) else f"{started:%Y-%m-%d %H:%M} UTC"
    return f"run {first['run_id']} on {first['host']}, {when}"


def table_lines(rows: pd.DataFrame) -> list[str]:
    """A header and one whole line per row, in aligned columns: times in their unit, counts
    as integers, the rate with an SI prefix (as on the site); a failed case's cells are left
    empty (its error is listed in full by :func:`failure_lines`)."""
    cells = [
        [str(row.workload), str(row.device), str(row.status)]
        + (_timing(row) if row.status == "ok" else ["", "", "", ""])
        + [_params(row.params)]
        for row in rows.itertuples()
    ]
    return aligned([list(TABLE_COLUMNS), *cells])


def _timing(row: Any) -> list[str]:
    return [
        format_seconds(row.median_s),
        f"{format_seconds(row.ci_low_s)}–{format_seconds(row.ci_high_s)}",
        f"{_count(row.n_samples)}×{_count(row.calls_per_sample)}",
        format_rate(row),
    ]


def _count(value: Any) -> str:
    return (
        "–"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{int(value):,}"
    )


def _params(text: Any) -> str:
    try:
        params = json.loads(text) if isinstance(text, str) else dict(text or {})
    except (TypeError, ValueError):
        return str(text)
    return " ".join(f"{key}={value}" for key, value in params.items())


def failure_lines(rows: pd.DataFrame) -> list[str]:
    """One whole line per case that did not succeed: status, case and its full error."""
    return [
        f"{row.status}: {row.workload} {_params(row.params)} on {row.device}: {row.error or ''}"
        for row in rows.itertuples()
        if row.status != "ok"
    ]


def _iso(value: Any) -> str | None:
    return None if pd.isna(value) else value.isoformat()


def export(rows: pd.DataFrame, path: Path, form: str) -> None:
    """Write the rows' raw values (seconds, rates as stored) to ``path`` as CSV or JSON."""
    frame = rows[[name for name in EXPORT_COLUMNS if name in rows.columns]].copy()
    frame["timestamp"] = frame["timestamp"].map(_iso)
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype(str)
    if form == "csv":
        from benchsite.tables.csvfile import csv_bytes  # `run` loads no tables module

        data = csv_bytes(pa.Table.from_pandas(frame, preserve_index=False))
    else:
        records = json.loads(frame.to_json(orient="records"))
        data = (json.dumps(records, indent=2) + "\n").encode()
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise SelectionError(
            f"cannot write --{form} {path} ({exc.strerror or exc}): pass a writable file path"
        ) from None
