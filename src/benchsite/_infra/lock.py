"""One writer per run: an exclusive lock file in the run's folder.

On POSIX the lock is ``flock`` on ``<run>/.lock``: the kernel releases it when its holder dies,
however it dies, so a lock left by a killed run is taken over by the next one without any check.
Where ``fcntl`` is missing (Windows) the lock is the file itself, created exclusively and holding
the owner's pid; a file whose pid is no longer running is taken over. The file is never deleted
(deleting a lock file races with the next taker); readers ignore it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchsite.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"


@contextlib.contextmanager
def run_lock(folder: Path | Any) -> Iterator[None]:
    """Hold the lock of the run stored in ``folder`` (created if needed); refuse if taken. An
    object store offers no lock: there the run's unique id keeps its one writer (see
    :mod:`benchsite.store.parts`): a folder that is no local :class:`~pathlib.Path` (a
    :class:`benchsite.store.remote.RemotePath`) is not locked."""
    if not isinstance(folder, Path):
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    taker = _flock if fcntl is not None else _pidfile
    with taker(path):
        yield


def is_locked(folder: Path) -> bool:
    """Whether a live process holds the lock of the run in ``folder`` right now."""
    try:
        with run_lock(folder):
            return False
    except StoreError:
        return True


def _refuse(path: Path) -> StoreError:
    holder = _read_pid(path)
    who = f"process {holder}" if holder else "another process"
    return StoreError(
        f"run {path.parent.name.removeprefix('run=')} is being written by {who}: "
        f"wait for it to end (or stop it), then run again"
    )


@contextlib.contextmanager
def _flock(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by workers (PEP 446)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _refuse(path) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def _pidfile(path: Path) -> Iterator[None]:  # pragma: no cover - used where fcntl is missing
    import psutil

    holder = _read_pid(path)
    if holder and holder != os.getpid() and psutil.pid_exists(holder):
        raise _refuse(path)
    path.unlink(missing_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise _refuse(path) from None
    os.write(fd, f"{os.getpid()}\n".encode())
    os.close(fd)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip() or 0) or None
    except (OSError, ValueError):
        return None
