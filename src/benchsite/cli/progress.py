"""The progress of a run or a build: on a terminal a rich progress bar with an ETA below one
line per finished case (its median, or its error); anywhere else (a pipe, a CI log) one plain line per case and per build stage."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from benchsite.measure.runner import PlannedCase
from benchsite.units import format_seconds

STATUS_STYLE = {
    "ok": "green",
    "skipped": "dim",
    "error": "red",
    "crash": "red",
    "timeout": "yellow",
    "oom": "magenta",
}
# what a build waits for in each stage (a stage not listed is shown by its name)
STAGE_TEXT = {
    "plugins": "loading plugins",
    "read": "reading the store",
    "prepare": "preparing the results",
    "site": "setting up the pages",
    "analyse": "running the analyses",
    "pages": "rendering the pages",
    "assets": "writing assets, waiting for the chart SVGs",
}


class ProgressReporter:
    """Draws a run or a site build on ``console``; use as a context manager around it. When
    ``console`` is no terminal it prints plain lines instead of drawing a bar."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.plain = not console.is_terminal
        self.done = self.total = 0
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
            speed_estimate_period=3600.0,  # the run's average: per-case times vary tenfold
        )
        self.task: Any = None
        self.build_task: Any = None
        self.build_stages = 0
        self._seen: set[str] = set()

    def __enter__(self) -> ProgressReporter:
        if not self.plain:
            self.progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.build_task is not None and exc_info[0] is None:
            self.progress.update(
                self.build_task, description="building the site", completed=self.build_stages
            )
        if not self.plain:
            self.progress.stop()

    def started(self, run_id: str, total: int, resumed: int) -> None:
        if resumed:
            self.console.print(f"resuming run {run_id}: {resumed} of {total} cases already stored")
        else:
            self.console.print(f"run {run_id}: {total} cases")
        self.done, self.total = resumed, total
        self.task = self.progress.add_task("measuring", total=total, completed=resumed)
        if self.build_task is not None:  # a build's "read" stage waits for this run
            self.progress.update(
                self.build_task, description="building the site (read: waiting for the quick suite)"
            )

    def case_started(self, planned: PlannedCase) -> None:
        label = f"{planned.workload.item.name} {_short(planned.params)} on {planned.device.name}"
        self.progress.update(self.task, description=label)

    def case_finished(self, planned: PlannedCase, row: dict[str, Any]) -> None:
        status = row["status"]
        self.done += 1
        if self.plain:
            self.console.print(
                _plain_line(self.done, self.total, planned, row),
                soft_wrap=True,
                markup=False,
                highlight=False,
            )
        else:  # every finished case above the bar: its median, or why it has none
            style = STATUS_STYLE.get(status, "red")
            case = f"{planned.workload.item.name} {_short(planned.params)} on {planned.device.name}"
            self.console.print(
                f"[{style}]{status}[/] {escape(case)}: {escape(_outcome_text(row))}",
                markup=True,
                highlight=False,
            )
        self.progress.advance(self.task)

    def stage(self, name: str, index: int, count: int) -> None:
        """A site build's stage starts: one line, ``building the site (analyse)``, k of n."""
        text = STAGE_TEXT.get(name, name)
        if self.plain:
            self.console.print(f"building the site: {text} ({index + 1}/{count})")
            return
        if self.build_task is None:
            self.build_task = self.progress.add_task("building the site", total=count)
            self.build_stages = count
        self.progress.update(
            self.build_task, description=f"building the site ({text})", completed=index
        )

    def notice(self, text: str) -> None:
        if text not in self._seen:
            self._seen.add(text)
            self.console.print(f"[yellow]note:[/] {escape(text)}", highlight=False, soft_wrap=True)


def _plain_line(done: int, total: int, planned: PlannedCase, row: dict[str, Any]) -> str:
    """``[3/20] ok matmul size=256 on cpu: 1.2 ms`` (or the error, whole)."""
    case = f"{planned.workload.item.name} {_short(planned.params)} on {planned.device.name}"
    return f"[{done}/{total}] {row['status']} {case}: {_outcome_text(row)}"


def _outcome_text(row: dict[str, Any]) -> str:
    """A finished case's median time per call, or its error (whole)."""
    return format_seconds(row.get("median_s")) if row["status"] == "ok" else row.get("error") or ""


def _short(params: dict[str, Any]) -> str:
    return " ".join(f"{key}={value}" for key, value in params.items())
