"""``benchsite compare BASE NEW``: two hosts, runs or device models case by case, and the
regression gate ``--fail-on-regression 5%`` (exit 1 when a case got significantly slower by
more than 5%; a slowdown resting on a suspect row is inconclusive unless ``--strict``). Every
number comes from :mod:`benchsite.tables.compare`, every row's validity from the
``prepare_results`` plugins, as on the site."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchsite.errors import SelectionError

if TYPE_CHECKING:
    import pandas as pd

    from benchsite.store.remote import RemotePath
    from benchsite.tables import compare as comparing

MARKS = {"slower": "SLOWER", "faster": "faster", "same": ""}


def locate(text: str) -> Path | RemotePath:
    """``--results``' parser (:func:`benchsite.store.remote.locate`), imported when a command
    runs: the command line starts without pyarrow."""
    from benchsite.store.remote import locate as located

    return located(text)


GATE_MARKS = {"regression": " REGRESSION", "inconclusive": " INCONCLUSIVE"}


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
            metavar="SLOWDOWN",
            help="Exit 1 if a case got significantly slower by more than SLOWDOWN: "
            "a share (5%), a ratio (1.5x) or a time (2ms).",
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Fail on slowdowns resting on suspect rows too (busy, noisy ...); "
            "stop at any plugin error.",
        ),
    ] = False,
    plugin: Annotated[
        list[str] | None,
        typer.Option("--plugin", "-p", metavar="PLUGIN", help="Extra plugin, as for build."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON rows, for scripts.")] = False,
) -> None:
    """Compare two hosts, runs or device models: NEW/BASE time per case with its 95% interval.

    Exits 1 with --fail-on-regression when a case got significantly slower by more than it;
    a slowdown resting on a row the site marks suspect is inconclusive (exit 0) unless
    --strict."""
    from benchsite.tables import compare as comparing  # loaded with this command, not the CLI
    from benchsite.tables.reruns import run_medians

    threshold = comparing.parse_threshold(fail_on_regression) if fail_on_regression else None
    rows = prepared_rows(results, tuple(plugin or ()), strict)
    sides = comparing.side(rows, base), comparing.side(rows, new)
    if set(sides[0].rows["row_id"]) == set(sides[1].rows["row_id"]):
        raise SelectionError(
            f"{base!r} and {new!r} select the same rows: name two hosts, runs or models"
        )
    table = comparing.compare(*sides, medians=run_medians(rows))  # reruns' spread: no change
    if threshold is not None:
        table = table.assign(verdict=comparing.gate_verdicts(table, threshold, strict))
    lines = [_as_json(table)] if as_json else report_lines(*sides, table)
    for line in lines:
        print(line)
    if threshold is not None:
        _gate(table, threshold, quiet=as_json)


def prepared_rows(results: Path, plugin_specs: tuple[str, ...], strict: bool) -> pd.DataFrame:
    """The store's rows after every ``prepare_results`` hook, as the site reads them: the
    validity flags (busy, noisy ...) come from those plugins, and which of them make a row
    suspect from their ``register_flags``."""
    from benchsite.host import registry
    from benchsite.host.manager import load_plugins
    from benchsite.site.analyse import prepare_results
    from benchsite.store import parts as store
    from benchsite.tables import Tables

    raw = store.read_results(results)
    if raw.empty:
        raise SelectionError(f"{results} holds no results: run `benchsite run` first")
    plugins = load_plugins(plugin_specs, strict=strict)
    flags = [entry.item for entry in registry.flags(plugins).values()]  # which are suspect
    return Tables.of(prepare_results(plugins, raw), flags).rows


def _gate(table: pd.DataFrame, threshold: comparing.Threshold, quiet: bool) -> None:
    """Exit 1 on a regression; say how many slowdowns were inconclusive (on stderr with
    --json, which keeps stdout one JSON document)."""
    verdict = table["verdict"]
    unsure = int((verdict == "inconclusive").sum())
    if unsure:
        reasons = sorted({r for rs in table["reasons"][verdict == "inconclusive"] for r in rs})
        typer.echo(
            f"inconclusive: {unsure} case(s) slower by more than {threshold} rest on suspect "
            f"rows ({', '.join(reasons)}): measure again on a quiet machine, or --strict to "
            f"fail on them",
            err=quiet,
        )
    failed = int((verdict == "regression").sum())
    if failed:
        typer.echo(
            f"regression: {failed} case(s) significantly slower by more than {threshold}",
            err=quiet,
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
    from benchsite.units import format_seconds  # numpy: loaded with the command

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
    mark = MARKS[row.change] + (f" (suspect: {', '.join(row.reasons)})" if row.suspect else "")
    mark += GATE_MARKS.get(getattr(row, "verdict", ""), "")
    return (
        f"{row.workload:<20} {case[:44]:<44} {device[:14]:<14} "
        f"{format_seconds(row.median_base_s):>9} {format_seconds(row.median_new_s):>9} "
        f"{interval:>24} {mark}"
    ).rstrip()


def _as_json(table: pd.DataFrame) -> str:
    records = table.drop(columns=["reasons"]).assign(reasons=table["reasons"].map(list))
    return json.dumps(records.to_dict("records"), default=str)
