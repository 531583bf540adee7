"""One writer per run: the lock file ``.lock`` in the run's folder (:mod:`benchsite._infra.lock`).

A lock left by a killed or interrupted run is taken over by the next one, and readers ignore
it; a run that ends cleanly removes it (so it does not land in a store that is committed or
synced). An object store offers no lock:
there the run's unique id keeps its one writer (see :mod:`benchsite.store.parts`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from benchsite._infra import lock
from benchsite.errors import StoreError
from benchsite.store.remote import RemotePath

LOCK_NAME = ".lock"


@contextlib.contextmanager
def run_lock(folder: Path | RemotePath) -> Iterator[None]:
    """Hold the lock of the run stored in ``folder`` (created if needed); refuse, with one
    line naming the writer, if another process holds it."""
    if isinstance(folder, RemotePath):
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    with lock.exclusive(folder / LOCK_NAME, lambda pid: _refused(folder, pid), remove=True):
        yield


def _refused(folder: Path, pid: int | None) -> StoreError:
    who = f"process {pid}" if pid else "another process"
    return StoreError(
        f"run {folder.name.removeprefix('run=')} is being written by {who}: "
        f"wait for it to end (or stop it), then run again"
    )
