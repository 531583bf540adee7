"""The run's progress on the terminal: a rich progress bar with ETA and one line per failure."""

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

from benchsite.runner import PlannedCase

STATUS_STYLE = {
    "ok": "green",
    "skipped": "dim",
    "error": "red",
    "crash": "red",
    "timeout": "yellow",
    "oom": "magenta",
}


class ProgressReporter:
    """Draws a run or a site build on ``console``; use as a context manager around it."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task: Any = None
        self.build_task: Any = None
        self.build_stages = 0
        self._seen: set[str] = set()

    def __enter__(self) -> ProgressReporter:
        self.progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.build_task is not None and exc_info[0] is None:
            self.progress.update(
                self.build_task, description="building the site", completed=self.build_stages
            )
        self.progress.stop()

    def started(self, run_id: str, total: int, resumed: int) -> None:
        if resumed:
            self.console.print(f"resuming run {run_id}: {resumed} of {total} cases already stored")
        else:
            self.console.print(f"run {run_id}: {total} cases")
        self.task = self.progress.add_task("measuring", total=total, completed=resumed)

    def case_started(self, planned: PlannedCase) -> None:
        label = f"{planned.workload.item.name} {_short(planned.params)} on {planned.device.name}"
        self.progress.update(self.task, description=label)

    def case_finished(self, planned: PlannedCase, row: dict[str, Any]) -> None:
        status = row["status"]
        if status not in ("ok", "skipped"):
            style = STATUS_STYLE.get(status, "red")
            self.console.print(
                f"[{style}]{status}[/] {escape(planned.workload.item.name)} "
                f"{escape(_short(planned.params))} on {planned.device.name}: "
                f"{escape(row.get('error') or '')}",
                markup=True,
                highlight=False,
            )
        self.progress.advance(self.task)

    def stage(self, name: str, index: int, count: int) -> None:
        """A site build's stage starts: one line, ``building the site (analyse)``, k of n."""
        if self.build_task is None:
            self.build_task = self.progress.add_task("building the site", total=count)
            self.build_stages = count
        self.progress.update(self.build_task, description=f"building the site ({name})",
                             completed=index)  # fmt: skip

    def notice(self, text: str) -> None:
        if text not in self._seen:
            self._seen.add(text)
            self.console.print(f"[yellow]note:[/] {escape(text)}", highlight=False)


def _short(params: dict[str, Any]) -> str:
    return " ".join(f"{key}={value}" for key, value in params.items())
