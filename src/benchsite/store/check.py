"""Checks of a results store: before a run writes into it (:func:`preflight`), and on demand
(``benchsite store check``: :func:`find_problems`, :func:`quarantine`, :func:`tidy_store`).

A problem part (corrupt, truncated, foreign) is never deleted: quarantine moves it to
``<store>/quarantine/<host>/<run>/`` where no reader looks. Temporary files of dead writers and
parts already superseded by a compaction hold nothing a reader would see; tidying deletes them.
"""

from __future__ import annotations

import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from benchsite.errors import StoreError
from benchsite.store import parts as store
from benchsite.store import runlock as locks
from benchsite.store.remote import RemotePath

MIN_FREE_BYTES = 16 * 2**20
MAX_HOST_CHARS = 128
QUARANTINE = "quarantine"
_HOST_CHARS = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Problem:
    """A part file readers skip, and why."""

    path: Path
    reason: str


def preflight(root: Path, host: str) -> None:
    """Refuse, with one line, a store or host name a run could not write into; before any case."""
    check_host(host)
    if isinstance(root, RemotePath):
        _probe(root)
        return
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise StoreError(f"--results {root} is a file, not a folder: pass a results folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{uuid.uuid4().hex[:8]}"
        probe.write_bytes(b"benchsite")
        probe.unlink()
    except OSError as exc:
        raise StoreError(
            f"cannot write into {root} ({exc.strerror}): pick a writable --results"
        ) from None
    free = shutil.disk_usage(root).free
    if free < MIN_FREE_BYTES:
        raise StoreError(
            f"{root} has {free // 2**20} MiB free, less than {MIN_FREE_BYTES // 2**20} MiB: "
            f"free space or pick another --results"
        )


def _probe(root: RemotePath) -> None:
    """Write and delete one object: credentials, endpoint and bucket checked before any case."""
    probe = root / f".probe-{uuid.uuid4().hex[:8]}"
    probe.write_bytes(b"benchsite")
    probe.unlink(missing_ok=True)


def check_host(host: str) -> None:
    """A host name becomes a folder name: letters, digits, '.', '-', '_', at most 128 chars."""
    if len(host) > MAX_HOST_CHARS:
        raise StoreError(
            f"host name is {len(host)} characters, more than {MAX_HOST_CHARS}: pass a shorter --host"
        )
    if not _HOST_CHARS.fullmatch(host):
        raise StoreError(
            f"host name {host!r} must start with a letter or digit and hold only letters, "
            f"digits, '.', '-' and '_': pass another --host"
        )


@dataclass
class CheckReport:
    """What ``benchsite store check`` found and did."""

    problems: list[Problem]
    moved: list[Path]
    tidied: int

    def listed(self) -> list[tuple[Problem, Path | None]]:
        moved: list[Path | None] = [*self.moved]
        moved += [None] * (len(self.problems) - len(moved))
        return list(zip(self.problems, moved, strict=True))

    def summary(self) -> str:
        found = (
            f"{len(self.problems)} unreadable part(s)" if self.problems else "no unreadable part"
        )
        action = ", quarantined" if self.moved else ""
        return f"{found}{action}; {self.tidied} leftover file(s) of dead writers removed"


def check_store(root: Path, move: bool = False) -> CheckReport:
    """Tidy the store, list its unreadable parts and, if ``move``, quarantine them."""
    root = root if isinstance(root, RemotePath) else Path(root)
    if not root.is_dir():
        raise StoreError(f"{root} is not a results store folder: pass --results")
    tidied = tidy_store(root)
    problems = find_problems(root)
    return CheckReport(problems, quarantine(root, problems) if move else [], tidied)


def find_problems(root: Path) -> list[Problem]:
    """Every part of the store that readers skip (raises on a part of a newer schema)."""
    found = []
    for folder in store.run_folders(root):
        scan = store.scan_run(folder)
        store.read_parts(folder, scan)  # data pages too, not only footers
        found += [Problem(folder / name, reason) for name, reason in sorted(scan.bad.items())]
    return found


def quarantine(root: Path, problems: list[Problem]) -> list[Path]:
    """Move each problem part to ``<root>/quarantine/...``, keeping its host and run folders."""
    moved: list[Path] = []
    if problems and isinstance(root, RemotePath):
        raise StoreError(
            f"--quarantine moves files of a local store; in {root}, copy the parts "
            f"listed above aside with the object store's own tools"
        )
    for problem in problems:
        relative = problem.path.relative_to(root)
        target = Path(root) / QUARANTINE / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        problem.path.replace(target)
        moved.append(target)
    return moved


def tidy_store(root: Path) -> int:
    """Delete the leftovers of dead writers in every run no live process writes; the count."""
    removed = 0
    for folder in store.run_folders(root):
        if not _has_leftovers(folder):
            continue  # nothing to do: take no lock (the store may be read-only)
        before = _entries(folder)
        try:
            with locks.run_lock(folder):
                store.tidy_run(folder)
        except (StoreError, OSError):
            continue  # a live writer holds this run (its files are its own), or read-only
        removed += before - _entries(folder)
    return removed


def _has_leftovers(folder: Path) -> bool:
    temporary = any(True for _ in folder.glob(".part-*.tmp-*"))
    return temporary or bool(store.scan_run(folder).superseded_present)


def _entries(folder: Path) -> int:
    return sum(1 for path in folder.iterdir() if path.name != locks.LOCK_NAME)
