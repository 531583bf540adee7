"""The one file lock: an exclusive lock file, held by one process at a time, never waited for.

It is :class:`filelock.FileLock` (``flock`` on POSIX, ``msvcrt.locking`` on Windows): the
system releases it when its holder ends, however it ends, so a dead holder's lock is taken
over without any check. The holder writes its PID into the file, so that the message of a
refused taker can name it. The file stays after release (readers of a folder ignore it).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import filelock


@contextlib.contextmanager
def exclusive(path: Path, busy: Callable[[int | None], Exception]) -> Iterator[None]:
    """Hold the lock file ``path`` (created if needed) for the block. When another process,
    or another block of this one, holds it, raise ``busy(pid)`` at once: the holder's PID, or
    ``None`` where it cannot be read. An :class:`OSError` (a folder that cannot be written)
    propagates."""
    lock = filelock.FileLock(path, blocking=False, preserve_lock_file=True, on_acquired=_write_pid)
    try:
        lock.acquire()
    except filelock.Timeout:  # an OSError too: caught first
        raise busy(holder(path)) from None
    try:
        yield
    finally:
        lock.release()


def holder(path: Path) -> int | None:
    """The PID the holder of the lock file ``path`` wrote, or ``None``."""
    try:
        return int(path.read_text(encoding="ascii").strip() or 0) or None
    except (OSError, ValueError):
        return None


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
