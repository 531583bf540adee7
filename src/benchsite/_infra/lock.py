"""The one file lock: an exclusive lock file, held by one process at a time, never waited for.

It is :class:`filelock.FileLock` (``flock`` on POSIX, ``msvcrt.locking`` on Windows): the
system releases it when its holder ends, however it ends, so a dead holder's lock is taken
over without any check. The holder writes its PID into the file, so that the message of a
refused taker can name it. The file stays after release (readers of a folder ignore it),
unless the holder asked to remove it when its block ends cleanly (a run's lock).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import filelock


@contextlib.contextmanager
def exclusive(
    path: Path, busy: Callable[[int | None], Exception], remove: bool = False
) -> Iterator[None]:
    """Hold the lock file ``path`` (created if needed) for the block. When another process,
    or another block of this one, holds it, raise ``busy(pid)`` at once: the holder's PID, or
    ``None`` where it cannot be read. An :class:`OSError` (a folder that cannot be written)
    propagates. With ``remove``, a block that ends without an exception removes the file while
    it still holds it; a taker that locked the file just removed sees that it is no longer
    the one at ``path`` and takes that one instead."""
    lock = _acquired(path, busy)
    try:
        yield
        if remove:
            path.unlink(missing_ok=True)
    finally:
        lock.release()


def _acquired(path: Path, busy: Callable[[int | None], Exception]) -> filelock.FileLock:
    while True:
        locked: list[int] = []  # the inode of the file locked

        def acquired(fd: int, locked: list[int] = locked) -> None:
            _write_pid(fd)
            locked.append(os.fstat(fd).st_ino)

        lock = filelock.FileLock(
            path, blocking=False, preserve_lock_file=True, on_acquired=acquired
        )
        try:
            lock.acquire()
        except filelock.Timeout:  # an OSError too: caught first
            raise busy(holder(path)) from None
        with contextlib.suppress(FileNotFoundError):
            if not locked or os.stat(path).st_ino == locked[0]:
                return lock
        lock.release()  # the file locked was removed by its last holder: take the new one


def holder(path: Path) -> int | None:
    """The PID the holder of the lock file ``path`` wrote, or ``None``."""
    try:
        return int(path.read_text(encoding="ascii").strip() or 0) or None
    except (OSError, ValueError):
        return None


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
