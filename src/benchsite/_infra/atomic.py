"""The one atomic write: a file is written under a hidden temporary name beside its place, then
renamed into place in one step (``os.replace``), so a reader sees the old file or the new one,
never half of either. A temporary file is named ``.<name>.tmp-<pid>``: no reader's pattern
matches it, and what a killed writer left can be found by that name."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def replacing(
    path: Path, durable: bool = False, before_replace: Callable[[], None] | None = None
) -> Iterator[Path]:
    """The temporary path to write ``path``'s new content to; when the block ends, it
    replaces ``path``. ``durable``: the file is fsynced before the rename and the folder after
    it, so that a power cut too leaves one file or the other. ``before_replace`` is called
    between writing and renaming. A block (or a step) that raises leaves no temporary file and
    ``path`` as it was."""
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        yield temp
        if durable:
            with open(temp, "rb") as handle:
                os.fsync(handle.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    if durable:
        _fsync_folder(path.parent)


def write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with replacing(path) as temp:
        temp.write_text(text, encoding="utf-8")


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a folder
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
