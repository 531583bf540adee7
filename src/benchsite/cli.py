"""The ``benchsite`` command: parse, then call one library function per command.

Every error a user can cause is a :class:`benchsite.errors.BenchsiteError`, printed here as one
line (``error: ...``) with exit status 2; Ctrl-C during a run keeps what finished (exit 130).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from benchsite import registry, store
from benchsite.errors import BenchsiteError
from benchsite.plugin_manager import load_plugins
from benchsite.runner import RunOptions, run_benchmarks

app = typer.Typer(
    help="Measure PyTorch workloads on every CPU and GPU of this machine; publish a site.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

PluginOpt = Annotated[
    list[str] | None,
    typer.Option("--plugin", "-p", help="Extra plugin: a .py file, a folder of them, or a module."),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Fail when any plugin cannot be loaded.")]
ResultsOpt = Annotated[Path, typer.Option("--results", help="Results store folder (Parquet).")]


@app.command()
def run(
    quick: Annotated[bool, typer.Option("--quick", help="Small grids (default).")] = False,
    full: Annotated[bool, typer.Option("--full", help="Full grids: every size and batch.")] = False,
    workload: Annotated[
        list[str] | None, typer.Option("--workload", "-w", help="Workload name or glob.")
    ] = None,
    device: Annotated[
        list[str] | None, typer.Option("--device", "-d", help="Device name or glob (cpu, cuda:0).")
    ] = None,
    results: ResultsOpt = Path("results"),
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds before a case is killed.")
    ] = None,
    budget: Annotated[
        float | None, typer.Option("--budget", help="Seconds of sampling per case at most.")
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue this host's newest run, skipping done cases.")
    ] = False,
    host: Annotated[str | None, typer.Option("--host", help="Host name to store.")] = None,
    plugin: PluginOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Run the workloads on every device and store every measurement."""
    from benchsite.progress import ProgressReporter

    if quick and full:
        raise BenchsiteError("--quick and --full exclude each other: pass one")
    options = RunOptions(
        results=results,
        profile="full" if full else "quick",
        workloads=tuple(workload or ()),
        devices=tuple(device or ()),
        plugins=tuple(plugin or ()),
        strict=strict,
        timeout_s=timeout,
        budget_s=budget,
        resume=resume,
        host=host,
    )
    _check_positive(timeout=timeout, budget=budget)
    with ProgressReporter(console) as reporter:
        report = run_benchmarks(options, reporter)
    summary = ", ".join(f"{count} {status}" for status, count in sorted(report.statuses.items()))
    where = store.run_dir(report.results, report.host, report.run_id)
    for name, seconds in sorted(report.workload_s.items(), key=lambda item: -item[1]):
        console.print(f"  {name:<24} {seconds:8.1f} s", highlight=False)  # wall time per workload
    if report.interrupted:
        console.print(f"interrupted: finished cases kept in {where} ({summary or 'none'}).")
        console.print("continue with: benchsite run --resume (same options)")
        raise typer.Exit(130)
    console.print(f"stored {summary or 'nothing'} in {where}")


def _check_positive(**values: float | None) -> None:
    for name, value in values.items():
        if value is not None and value <= 0:
            raise BenchsiteError(f"--{name} must be a positive number of seconds, got {value:g}")


@app.command()
def devices(plugin: PluginOpt = None, strict: StrictOpt = False) -> None:
    """List the devices found on this machine and what was captured about each."""
    plugins = load_plugins(tuple(plugin or ()), strict=strict)
    table = Table("device", "kind", "model", "fingerprint", "details")
    for name, registered in registry.devices(plugins).items():
        found = registered.item
        details = {k: v for k, v in found.info.items() if k != "model" and k != "blas"}
        table.add_row(
            name,
            found.kind,
            str(found.info.get("model")),
            found.fingerprint,
            escape(json.dumps(details, default=str)),
        )
    console.print(table)


@app.command()
def workloads(plugin: PluginOpt = None, strict: StrictOpt = False) -> None:
    """List the workloads with their parameter grids (full and quick)."""
    plugins = load_plugins(tuple(plugin or ()), strict=strict)
    table = Table("workload", "plugin", "devices", "full grid", "quick grid", "description")
    for name, registered in registry.workloads(plugins).items():
        item = registered.item
        table.add_row(
            escape(name),
            escape(registered.plugin),
            ", ".join(item.devices),
            f"{len(item.grid('full'))} cases: {escape(_grid_text(item.params))}",
            f"{len(item.grid('quick'))} cases: {escape(_grid_text(item.quick or item.params))}",
            escape(item.description),
        )
    console.print(table)


def _grid_text(grid: object) -> str:
    parts = grid if isinstance(grid, list | tuple) else [grid]
    return " | ".join(
        ", ".join(f"{key}={list(values)}" for key, values in part.items()) for part in parts
    )


@app.command()
def plugins(plugin: PluginOpt = None) -> None:
    """List every plugin found: where it came from, its version, hooks, and load errors."""
    loaded = load_plugins(tuple(plugin or ()))
    table = Table("plugin", "from", "version", "hooks", "error")
    for info in loaded.infos.values():
        table.add_row(
            escape(info.name),
            escape(info.source),
            escape(info.version),
            ", ".join(info.hooks),
            f"[red]{escape(info.error)}[/]" if info.error else "",
        )
    console.print(table)


@app.command()
def results(results: ResultsOpt = Path("results")) -> None:
    """Show the newest run in the store as a table."""
    frame = store.read_results(results)
    if frame.empty:
        raise BenchsiteError(f"{results} holds no results: run `benchsite run` first")
    newest = frame[frame["run_id"] == frame.iloc[-1]["run_id"]]
    first = newest.iloc[0]
    console.print(
        f"run {first['run_id']} on {first['host']}, {first['timestamp']:%Y-%m-%d %H:%M} UTC"
    )
    table = Table(
        "workload", "params", "device", "status", "median", "95% CI", "IQR", "samples", "rate"
    )
    for row in newest.itertuples():
        table.add_row(
            escape(str(row.workload)),
            escape(str(row.params)),
            str(row.device),
            str(row.status),
            *_timing_cells(row),
        )
    console.print(table)


def _timing_cells(row: object) -> list[str]:
    from benchsite.units import format_rate, format_seconds

    if row.status != "ok":
        return [escape(str(row.error or ""))[:60], "", "", "", ""]
    return [
        format_seconds(row.median_s),
        f"{format_seconds(row.ci_low_s)}–{format_seconds(row.ci_high_s)}",
        format_seconds(row.iqr_s),
        f"{row.n_samples}×{row.calls_per_sample}",
        format_rate(row),
    ]


@app.command()
def build(
    results: ResultsOpt = Path("results"),
    out: Annotated[Path, typer.Option("--out", help="Folder to write the site to.")] = Path("site"),
    templates: Annotated[
        Path | None, typer.Option("--templates", help="Folder of templates overriding the theme.")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="The site's title.")] = None,
    plugin: PluginOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Build the static site from the store (running the quick suite first if it is empty)."""
    from benchsite.progress import ProgressReporter
    from benchsite.site import BuildOptions, build_site

    options = BuildOptions(results, out, templates, plugins=tuple(plugin or ()), strict=strict)
    options = replace(options, title=title) if title else options
    try:
        with ProgressReporter(console) as reporter:
            report = build_site(options, reporter)
    except KeyboardInterrupt:
        console.print(f"interrupted: the site in {escape(str(out))} is incomplete; build it again.")
        raise typer.Exit(130) from None
    for name, error in {**report.analysis_errors, **report.page_errors}.items():
        err_console.print(f"[yellow]note:[/] {escape(name)} failed: {escape(error)}")
    console.print(
        f"built {report.files} files from {report.rows} rows in {report.seconds:.1f} s: "
        f"open {escape(str(out / 'index.html'))} or run `benchsite serve --site {escape(str(out))}`"
    )


@app.command()
def serve(
    site: Annotated[Path, typer.Option("--site", help="The built site folder.")] = Path("site"),
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free).")] = 8000,
) -> None:
    """Preview the built site on http://127.0.0.1:<port>/."""
    from benchsite.site.serve import serve_site

    serve_site(site, port, announce=console.print)


def main() -> None:
    """Entry point: turn user errors into one line and exit status 2."""
    try:
        app()
    except BenchsiteError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
