"""One writer per run: the lock file ``.lock`` in the run's folder (:mod:`benchsite._infra.lock`).

A lock left by a killed or interrupted run is taken over by the next one, and readers ignore
it; a run that ends cleanly removes it (so it does not land in a store that is committed or
synced). An object store offers no lock: there the lock is a lease object with a heartbeat
(:mod:`benchsite.store.lease`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from benchsite._infra import lock
from benchsite.errors import StoreError
from benchsite.store import lease
from benchsite.store.remote import RemotePath

LOCK_NAME = ".lock"


class LocalLock:
    """A held lock file: never lost while its holder lives."""

    def confirm(self) -> None:
        """Nothing to check (a lease's :meth:`~benchsite.store.lease.Lease.confirm` has)."""


Held = LocalLock | lease.Lease


@contextlib.contextmanager
def run_lock(folder: Path | RemotePath) -> Iterator[Held]:
    """Hold the lock of the run stored in ``folder`` (created if needed); refuse, with one
    line naming the writer, if another process holds it. ``confirm()`` on what it gives,
    before each write, raises if the lock was lost (a lease taken over)."""
    if isinstance(folder, RemotePath):
        with lease.held(folder) as taken:
            yield taken
        return
    folder.mkdir(parents=True, exist_ok=True)
    with lock.exclusive(folder / LOCK_NAME, lambda pid: _refused(folder, pid), remove=True):
        yield LocalLock()


def _refused(folder: Path, pid: int | None) -> StoreError:
    who = f"process {pid}" if pid else "another process"
    return StoreError(
        f"run {folder.name.removeprefix('run=')} is being written by {who}: "
        f"wait for it to end (or stop it), then run again"
    )
