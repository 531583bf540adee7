"""The ``benchsite`` command: parse, then call one library function per command.

Exit statuses:

- 0: done;
- 1: done, but what was asked did not come out whole: ``run`` stored no successful case,
  ``build`` had an analysis or a page fail (``--keep-going`` accepts that and exits 0),
  ``compare --fail-on-regression`` found a case significantly slower than allowed;
- 2: a problem the user can fix (a bad flag or value, an unknown workload, an unreadable
  store, a plugin error with ``--strict``): a :class:`benchsite.errors.BenchsiteError`,
  printed here as one line, ``error: ...``; so is a path the system refuses (an
  :class:`OSError` naming the file, like a name too long);
- 130: interrupted (Ctrl-C); a run keeps the cases that finished;
- 143: terminated (SIGTERM), handled as Ctrl-C is.

Problems with plugins that are not fatal are one ``note: ...`` line each on stderr.
"""

from __future__ import annotations

import math
import shutil
import signal
import sys
import warnings
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from typer.main import get_command

from benchsite.cli import compare as compare_cli
from benchsite.cli import usage
from benchsite.cli.compare import locate
from benchsite.errors import BenchsiteError, PluginDeprecationWarning, StoreWarning
from benchsite.host.manager import load_plugins
from benchsite.version import __version__

# what a command needs is imported when it runs (pandas, pyarrow, the runner): `--help` and
# `--version` load none of it

if TYPE_CHECKING:
    from benchsite.cli.progress import ProgressReporter
    from benchsite.measure.runner import RunReport
    from benchsite.site import BuildOptions

app = typer.Typer(
    help="Measure PyTorch workloads on every CPU and GPU of this machine; publish a site.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # click's plain help: flags shown as flags, readable when piped
)
console = Console(highlight=False, soft_wrap=True)  # a long line stays one line when piped
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

PluginOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--plugin",
        "-p",
        metavar="PLUGIN",
        help="Extra plugin: a .py file, a folder of them, or a module.",
    ),
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Stop at any plugin error (otherwise a note).")
]
ResultsOpt = Annotated[
    Path,
    typer.Option(
        "--results",
        metavar="DIR|URL",
        parser=locate,
        help="Results store: a folder, or file://, s3://, gs://, az:// URL (docs/fleet.md).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON, for scripts.")]


def _show_version(value: bool) -> None:
    if value:
        print(f"benchsite {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Measure PyTorch workloads on every CPU and GPU of this machine; publish a site."""


@app.command()
def run(
    quick: Annotated[bool, typer.Option("--quick", help="Small grids (default).")] = False,
    full: Annotated[bool, typer.Option("--full", help="Full grids: every size and batch.")] = False,
    models: Annotated[
        bool,
        typer.Option(
            "--models", help="Only the well-known models' full grids (many minutes; README)."
        ),
    ] = False,
    workload: Annotated[
        list[str] | None,
        typer.Option("--workload", "-w", metavar="NAME", help="Workload name or glob."),
    ] = None,
    device: Annotated[
        list[str] | None,
        typer.Option("--device", "-d", metavar="DEVICE", help="Device name or glob (cpu, cuda:0)."),
    ] = None,
    results: ResultsOpt = Path("results"),
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", metavar="SECONDS", help="Seconds before a case is killed."),
    ] = None,
    budget: Annotated[
        float | None,
        typer.Option("--budget", metavar="SECONDS", help="Seconds of sampling per case at most."),
    ] = None,
    rounds: Annotated[
        int | None,
        typer.Option(
            "--rounds",
            metavar="N",
            help="Measure every case in N rounds, each in a fresh process (default 3, up to 5).",
        ),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the interrupted run of this selection.")
    ] = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="With --resume: measure failed cases again.")
    ] = False,
    host: Annotated[
        str | None, typer.Option("--host", metavar="NAME", help="Host name to store.")
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(
            "--label",
            "-l",
            metavar="KEY=VALUE",
            help="Label the run (git commit, driver update ...); repeatable.",
        ),
    ] = None,
    nnodes: Annotated[
        int | None,
        typer.Option("--nnodes", metavar="N", help="Spread distributed cases over N machines."),
    ] = None,
    rdzv_endpoint: Annotated[
        str | None,
        typer.Option(
            "--rdzv-endpoint",
            metavar="HOST:PORT",
            help="With --nnodes: where the nodes meet (the same on every node).",
        ),
    ] = None,
    rdzv_id: Annotated[
        str | None,
        typer.Option("--rdzv-id", metavar="JOB", help="With --nnodes: the job's name."),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            metavar="MODULE:FACTORY[,key=value...]",
            help="Also measure your own torch.nn.Module (docs/models.md); repeatable.",
        ),
    ] = None,
    plugin: PluginOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Run the workloads on every device and store every measurement.

    Exits 1 when no case succeeded."""
    from benchsite.cli.progress import ProgressReporter

    if quick + full + models > 1:
        raise BenchsiteError("--quick, --full and --models exclude each other: pass one")
    from benchsite.measure.distributed.multinode import nodes_option
    from benchsite.measure.runner import RunOptions, parse_labels, run_benchmarks
    from benchsite.store import parts as store

    options = RunOptions(
        results=results,
        profile="models" if models else "full" if full else "quick",
        workloads=tuple(workload or ()),
        devices=tuple(device or ()),
        plugins=tuple(plugin or ()),
        strict=strict,
        timeout_s=timeout,
        budget_s=budget,
        resume=resume or retry_failed,
        retry_failed=retry_failed,
        host=host,
        labels=parse_labels(label or ()),
        nodes=nodes_option(nnodes, rdzv_endpoint, rdzv_id),
        # a job over several machines measures in one round: the nodes' rounds would have to
        # meet at the rendezvous in step, which they do not yet do
        rounds=1 if rounds is None and (nnodes or 1) > 1 else rounds,
        models=tuple(model or ()),
    )
    _check_positive(timeout=timeout, budget=budget)
    if rounds is not None and rounds < 1:
        raise BenchsiteError(f"--rounds must be a whole number from 1, got {rounds}")
    with ProgressReporter(console) as reporter:
        report = run_benchmarks(options, reporter)
    summary = ", ".join(f"{count} {status}" for status, count in sorted(report.statuses.items()))
    where = store.run_dir(report.results, report.host, report.run_id)
    for name, seconds in sorted(report.workload_s.items(), key=lambda item: -item[1]):
        console.print(f"  {name:<24} {seconds:8.1f} s", highlight=False)  # wall time per workload
    if report.interrupted:
        _interrupted(report, where, summary)
    console.print(f"stored {summary or 'nothing'} in {where}")
    if report.statuses and not report.statuses.get("ok") and not report.held_ok:
        err_console.print(
            f"[red]error:[/] no case succeeded ({summary}): see the lines above, or "
            f"`benchsite results --results {escape(str(report.results))}`"
        )
        raise typer.Exit(1)


def _interrupted(report: RunReport, where: object, summary: str) -> None:
    """One line on what an interrupted run kept, and how to go on; exit 130."""
    if report.compaction_interrupted:
        console.print(
            f"interrupted during compaction: every stored case is kept in {where}; "
            "`benchsite run --resume` (same options) finishes it"
        )
    elif not report.statuses and not report.held:
        console.print("interrupted before any case was stored: nothing to resume")
    else:
        console.print(f"interrupted: finished cases kept in {where} ({summary or 'none'}).")
        console.print("continue with: benchsite run --resume (same options)")
    raise typer.Exit(130)


MAX_SECONDS = 7 * 24 * 3600.0  # a week: more than any case, and within what a wait can take


def _check_positive(**values: float | None) -> None:
    for name, value in values.items():
        if value is not None and not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
            raise BenchsiteError(
                f"--{name} must be a positive number of seconds up to {MAX_SECONDS:g} "
                f"(a week), got {value:g}"
            )


NameArg = Annotated[str | None, typer.Argument(help="Show this one in full.")]


@app.command()
def devices(
    name: NameArg = None, json: JsonOpt = False, plugin: PluginOpt = None, strict: StrictOpt = False
) -> None:
    """List the devices found here, one a line.

    With NAME: everything captured about that device."""
    from benchsite.cli import listing

    rows = listing.device_rows(load_plugins(tuple(plugin or ()), strict=strict))
    _list("devices", rows, name, json)


@app.command()
def workloads(
    name: NameArg = None, json: JsonOpt = False, plugin: PluginOpt = None, strict: StrictOpt = False
) -> None:
    """List the workloads, one a line.

    Each line: name, quick/full cases, device kinds, description. With NAME: its grids and
    settings in full."""
    from benchsite.cli import listing

    rows = listing.workload_rows(load_plugins(tuple(plugin or ()), strict=strict))
    _list("workloads", rows, name, json)


@app.command()
def plugins(
    name: NameArg = None, json: JsonOpt = False, plugin: PluginOpt = None, strict: StrictOpt = False
) -> None:
    """List the plugins found, one a line.

    Each line: name, version, where from, and its hooks or the error that stopped it."""
    from benchsite.cli import listing

    rows = listing.plugin_rows(load_plugins(tuple(plugin or ()), strict=strict))
    _list("plugins", rows, name, json)


def _list(kind: str, rows: list[dict[str, object]], name: str | None, as_json: bool) -> None:
    """One line per item (cut to a terminal's width, whole when piped), or one in full."""
    from benchsite.cli import listing

    if name is not None:
        row = listing.pick(kind, rows, name)
        lines = [listing.as_json(row)] if as_json else listing.detail_lines(row)
    elif as_json:
        lines = [listing.as_json(rows)]
    else:
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        lines = listing.summary_lines(kind, rows, width)
    for line in lines:
        print(line)


@app.command()
def results(
    results: ResultsOpt = Path("results"),
    run: Annotated[
        str | None,
        typer.Option("--run", metavar="ID", help="Run id (or its start); default: the newest."),
    ] = None,
    host: Annotated[
        str | None, typer.Option("--host", metavar="NAME", help="Newest run of this host.")
    ] = None,
    csv: Annotated[
        Path | None, typer.Option("--csv", metavar="FILE", help="Also write the rows as CSV.")
    ] = None,
    json: Annotated[
        Path | None, typer.Option("--json", metavar="FILE", help="Also write the rows as JSON.")
    ] = None,
) -> None:
    """Show one run as a table.

    The newest run unless --run or --host says which; --csv and --json also write its rows."""
    from benchsite.cli import results as results_view

    rows = results_view.select_run(results, run, host)
    lines = [results_view.heading(rows), *results_view.table_lines(rows)]
    for line in [*lines, *results_view.failure_lines(rows)]:
        print(line)
    for path, form in ((csv, "csv"), (json, "json")):
        if path is not None:
            results_view.export(rows, path, form)
            console.print(f"wrote {len(rows)} rows to {escape(str(path))}")


@app.command()
def build(
    results: ResultsOpt = Path("results"),
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Folder to write the site to.")
    ] = Path("site"),
    templates: Annotated[
        Path | None,
        typer.Option(
            "--templates", metavar="DIR", help="Folder of templates overriding the theme."
        ),
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", metavar="TEXT", help="The site's title.")
    ] = None,
    plugin: PluginOpt = None,
    strict: StrictOpt = False,
    keep_going: Annotated[
        bool, typer.Option("--keep-going", help="Publish even if a page or analysis failed.")
    ] = False,
    reference: Annotated[
        list[str] | None,
        typer.Option(
            "--reference",
            metavar="SOURCE",
            help="Rows beside yours: h200 (shipped), a store folder or URL, a site's "
            "data/results.parquet (https://); repeatable.",
        ),
    ] = None,
) -> None:
    """Build the static site from the store.

    With no ./results yet, the quick suite is run on this machine first. The site is written
    beside --out and replaces it only when the build succeeded. Exits 1 when an analysis or a
    page failed (nothing is published) unless --keep-going."""
    from benchsite.cli.progress import ProgressReporter
    from benchsite.site import BuildOptions, build_site
    from benchsite.site.publish import check_out
    from benchsite.store.reference import configured, read_references

    check_out(out)  # before the quick suite a fresh checkout runs first
    options = BuildOptions(
        results, out, templates, plugins=tuple(plugin or ()), strict=strict, keep_going=keep_going
    )
    options = replace(options, references=(*configured(), *(reference or ())))
    options = replace(options, title=title) if title else options
    # the references read and checked first: a bad one is one line before any measuring
    references = read_references(options.references) if options.references else None
    try:
        with ProgressReporter(console) as reporter:
            measure_first_if_new(options, reporter)
            report = build_site(options, reporter, references)
    except KeyboardInterrupt:
        console.print(f"interrupted: nothing published, {escape(str(out))} is as it was.")
        raise typer.Exit(130) from None
    for name, error in {**report.analysis_errors, **report.page_errors}.items():
        err_console.print(f"[yellow]note:[/] {escape(name)} failed: {escape(error)}")  # kept going
    console.print(
        f"built {report.files} files from {report.rows} rows in {report.seconds:.1f} s: "
        f"open {escape(str(out / 'index.html'))} or run `benchsite serve --site {escape(str(out))}`"
    )


def measure_first_if_new(options: BuildOptions, reporter: ProgressReporter) -> bool:
    """Run the quick suite on this machine into ``options.results`` when that is the default
    store and it does not exist yet (so one command on a fresh clone ends in a site); whether
    it ran. Ctrl-C during it stops the build (the rows measured so far are kept)."""
    from benchsite.measure.runner import RunOptions, run_benchmarks
    from benchsite.site.build import DEFAULT_RESULTS

    where = locate(options.results)
    if where != DEFAULT_RESULTS or where.exists():
        return False
    reporter.notice(f"no results yet ({where}): running the quick suite on this machine first")
    run = RunOptions(results=where, plugins=options.plugins, strict=options.strict)
    if run_benchmarks(run, reporter).interrupted:
        raise KeyboardInterrupt
    return True


@app.command("new-plugin")
def new_plugin(
    name: Annotated[str, typer.Argument(help="The plugin's name, like my-workloads.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="DIR", help="Folder to create (default: ./NAME)."),
    ] = None,
) -> None:
    """Write a new plugin package to start from.

    An installable package: a pyproject with the entry point, a workload, a collector and
    tests that pass as generated."""
    from benchsite.cli import scaffold

    folder = scaffold.write_plugin(name, out or Path(name))
    console.print(f"wrote {escape(str(folder))}: a workload, a collector and their tests")
    console.print(f"next: {escape(scaffold.next_command(folder))}")


@app.command()
def serve(
    site: Annotated[
        Path, typer.Option("--site", metavar="DIR", help="The built site folder.")
    ] = Path("site"),
    port: Annotated[
        int, typer.Option("--port", metavar="PORT", help="Port on 127.0.0.1 (0: any free).")
    ] = 8000,
) -> None:
    """Preview the built site on http://127.0.0.1:<port>/."""
    from benchsite.site.serve import serve_site

    if not 0 <= port <= 65535:
        raise BenchsiteError(f"--port must be between 0 and 65535, got {port}")
    serve_site(site, port, announce=console.print)


app.command("compare")(compare_cli.compare)  # two hosts, runs or models; the regression gate

store_app = typer.Typer(help="Check and repair the results store.", no_args_is_help=True)
app.add_typer(store_app, name="store")


@store_app.command("check")
def store_check(
    results: ResultsOpt = Path("results"),
    quarantine: Annotated[
        bool,
        typer.Option(
            "--quarantine",
            help="Move unreadable parts aside (never deletes); abort unfinished S3 uploads "
            "older than an hour.",
        ),
    ] = False,
) -> None:
    """List parts readers skip (corrupt, truncated, foreign); tidy what dead writers left."""
    from benchsite.store import check

    report = check.check_store(results, quarantine)
    for problem, moved in report.listed():
        where = f" -> moved to {escape(str(moved))}" if moved else ""
        console.print(f"{escape(str(problem.path))}: {escape(problem.reason)}{where}")
    for upload in report.uploads or ():
        console.print(
            f"{escape(upload.key)}: unfinished upload, started {upload.started:%Y-%m-%d %H:%M} UTC"
        )
    console.print(report.summary())
    if report.problems and not quarantine:
        raise typer.Exit(1)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (a run keeps its cases, a build publishes nothing), so
    that no process of the pools is left writing into a closed pipe."""


_terminated: list[int] = []  # the SIGTERMs received: a command ending in 130 then ends in 143


def _terminate(signum: int, frame: object) -> None:
    _terminated.append(signum)
    raise Terminated


def main(args: list[str] | None = None) -> None:
    """Entry point: turn user errors into one line and exit status 2, Ctrl-C into exit 130,
    SIGTERM into exit 143 (each after the command's own line on what was kept). A usage error
    (an unknown option, a value of a wrong type, a missing value) is one line too, exit 2."""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    signal.signal(signal.SIGTERM, _terminate)
    show_warnings_as_notes()
    try:
        _invoke(sys.argv[1:] if args is None else list(args))
    except BenchsiteError as exc:
        err_console.print(f"[red]error:[/] {escape(one_line(str(exc)))}")
        sys.exit(exc.exit_code)
    except OSError as exc:  # a path the user named that the system refuses (a name too long)
        if exc.filename is None:
            raise
        where = one_line(str(exc.filename))
        err_console.print(
            f"[red]error:[/] cannot use {escape(where)} ({exc.strerror}): fix the path"
        )
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("terminated" if _terminated else "interrupted")
        sys.exit(143 if _terminated else 130)
    except SystemExit as exc:
        if exc.code == 130 and _terminated:
            sys.exit(143)
        raise


def _invoke(args: list[str]) -> None:
    """Run the command ``args`` names; click's errors become a :class:`usage.UsageError`, a bare
    group shows its help (exit 2), and the command's exit status is raised as ``SystemExit``."""
    try:
        code = app(args=args, standalone_mode=False)
    except usage.NoArgsIsHelpError as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except usage.ClickException as exc:
        raise usage.UsageError(exc, get_command(app), args) from None
    except typer.Abort:  # an end of input where one was read
        err_console.print("aborted")
        raise SystemExit(1) from None
    # `typer.Exit(code)` comes back as `code` outside click's standalone mode; the end of a
    # command is a `SystemExit` either way, as it was in standalone mode
    raise SystemExit(code or 0)


def one_line(text: str) -> str:
    """``text`` on one line: a control character (a newline in a name, a terminal escape) is
    shown as its escape, ``\\n``, never acted on."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def show_warnings_as_notes() -> None:
    """Show a :class:`StoreWarning` as a ``warning:`` line and a plugin's deprecation as a
    ``note:`` line, each deprecation once per process."""
    warnings.showwarning = _show_warning
    warnings.simplefilter("always", PluginDeprecationWarning)  # _show_warning says each once


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, StoreWarning):
        err_console.print(f"[yellow]warning:[/] {escape(str(message))}")
    elif issubclass(category, PluginDeprecationWarning):
        note = f"note: {message} ({Path(filename).name}:{lineno})"
        if note not in _deprecations_noted:  # Python's own "once" forgets: a second plugin
            _deprecations_noted.add(note)  # manager, or any change of the warning filters
            err_console.print(escape(note))
    else:
        _default_show_warning(message, category, filename, lineno, file, line)


_default_show_warning = warnings.showwarning
_deprecations_noted: set[str] = set()  # the notes this process said


if __name__ == "__main__":
    main()
