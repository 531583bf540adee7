"""``benchsite compare BASE NEW``: two hosts, runs or device models case by case, and the
regression gate ``--fail-on-regression 5%`` (exit 1 when a case got significantly slower by
more than 5%). Every number comes from :mod:`benchsite.tables.compare`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import pandas as pd
import typer

from benchsite.store import parts as store
from benchsite.store.remote import locate
from benchsite.units import format_seconds

if TYPE_CHECKING:
    from benchsite.tables import compare as comparing

MARKS = {"slower": "SLOWER", "faster": "faster", "same": ""}


def compare(
    base: Annotated[
        str, typer.Argument(metavar="BASE", help="Host, run id or device model to compare against.")
    ],
    new: Annotated[
        str, typer.Argument(metavar="NEW", help="Host, run id or device model compared.")
    ],
    results: Annotated[
        Path,
        typer.Option("--results", metavar="DIR|URL", parser=locate, help="Results store."),
    ] = Path("results"),
    fail_on_regression: Annotated[
        str | None,
        typer.Option(
            "--fail-on-regression",
            metavar="PCT",
            help="Exit 1 if a case got significantly slower by more than PCT (5%).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON rows, for scripts.")] = False,
) -> None:
    """Compare two hosts, runs or device models: NEW/BASE time per case with its 95% interval.

    Exits 1 with --fail-on-regression when a case got significantly slower by more than it."""
    from benchsite.tables import Tables  # the tables load with this command, not with the CLI
    from benchsite.tables import compare as comparing

    threshold = comparing.parse_threshold(fail_on_regression) if fail_on_regression else None
    rows = Tables.of(store.read_results(results)).rows
    sides = comparing.side(rows, base), comparing.side(rows, new)
    table = comparing.compare(*sides)
    lines = [_as_json(table)] if as_json else report_lines(*sides, table)
    for line in lines:
        print(line)
    if threshold is not None:
        failed = comparing.regressions(table, threshold)
        if not failed.empty:
            print(
                f"regression: {len(failed)} case(s) significantly slower by more than "
                f"{threshold:.0%}",
                flush=True,
            )
            raise typer.Exit(1)


def report_lines(base: comparing.Side, new: comparing.Side, table: pd.DataFrame) -> list[str]:
    """A heading, one line per case (slowest first), and the count of each change."""
    head = f"BASE {base.name} ({base.kind}) -> NEW {new.name} ({new.kind})"
    if table.empty:
        return [head, "no case was measured on both sides"]
    counts = table["change"].value_counts()
    lines = [
        head,
        f"{'workload':<20} {'case':<44} {'device':<14} {'base':>9} {'new':>9} "
        f"{'new/base [95% CI]':>24}",
    ]
    lines += [_line(row) for row in table.itertuples(index=False)]
    lines.append(
        f"{len(table)} cases: {counts.get('slower', 0)} significantly slower, "
        f"{counts.get('faster', 0)} faster, {counts.get('same', 0)} unchanged"
    )
    return lines


def _line(row: object) -> str:
    case = str(row.variant or "—")
    if isinstance(row.axis, str) and math.isfinite(row.axis_value):
        value = int(row.axis_value) if row.axis_value.is_integer() else row.axis_value
        case = f"{case}, {row.axis}={value}"
    device = (
        row.device_new
        if row.device_new == row.device_base
        else (f"{row.device_base}/{row.device_new}")
    )
    interval = f"{row.ratio:.3f} [{row.low:.3f}–{row.high:.3f}]"
    mark = MARKS[row.change] + (" (suspect)" if row.suspect else "")
    return (
        f"{row.workload:<20} {case[:44]:<44} {device[:14]:<14} "
        f"{format_seconds(row.median_base_s):>9} {format_seconds(row.median_new_s):>9} "
        f"{interval:>24} {mark}"
    ).rstrip()


def _as_json(table: pd.DataFrame) -> str:
    records = table.drop(columns=["reasons"]).assign(reasons=table["reasons"].map(list))
    return json.dumps(records.to_dict("records"), default=str)
