"""One writer per run in an object store: a lease, kept alive by a heartbeat.

An object store has no ``flock``, and pyarrow's filesystems offer no conditional write, so the
lease is built from what every strongly consistent object store (S3, GCS, Azure Blob) does
offer: an object is visible to every listing once its upload completed, and its modification
time is the server's clock. A writer takes the lease of a run in three steps:

1. write its own lease object ``<run>/.lease-<token>`` (a unique key: nothing is overwritten);
2. list the run's lease objects;
3. if any other lease is *live* (written less than :func:`timeout_s` before its own, both
   times the server's), delete its own and refuse; else it holds the run.

Two writers can never both hold the run: of two leases, the one written second is written
after the first's upload completed, so the second writer's listing shows the first lease and
it refuses. (Both may see each other and back off: each then retries a few times after a
random pause, so one of them gets it.) A holder rewrites its lease every quarter of the timeout
(the heartbeat); a lease not rewritten for :func:`timeout_s` is a dead writer's (killed, its
machine gone) and is taken over, and so, at once, is a lease whose writer ran on this machine
and is no longer running: the taker deletes it, which the old holder, if it was only
frozen, notices at its next heartbeat or write and stops (:meth:`Lease.confirm`). A holder
that could not renew for half the timeout (a frozen process, an unreachable store) stops too,
before any taker can see its lease stale.

Readers ignore the lease objects (they list only ``part-*.parquet``).
"""

from __future__ import annotations

import json
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psutil
import pyarrow.fs as pafs

from benchsite.errors import StoreError
from benchsite.store.remote import RemotePath, translated

PREFIX = ".lease-"
ENV_VAR = "BENCHSITE_LEASE_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 60.0
MIN_TIMEOUT_S = 4.0  # object stores keep modification times to the second
ATTEMPTS = 4


def timeout_s() -> float:
    """Seconds without a heartbeat after which a lease is a dead writer's (``BENCHSITE_LEASE_
    TIMEOUT_S``, default 60; at least 4, since object stores keep times to the second)."""
    try:
        wanted = float(os.environ.get(ENV_VAR, DEFAULT_TIMEOUT_S))
    except ValueError:
        raise StoreError(f"{ENV_VAR} must be a number of seconds: fix or unset it") from None
    if not wanted >= MIN_TIMEOUT_S or wanted == float("inf"):
        raise StoreError(f"{ENV_VAR} must be a number of seconds from {MIN_TIMEOUT_S:g} on")
    return wanted


@dataclass(frozen=True)
class Seen:
    """Another writer's lease object, as a listing shows it."""

    path: RemotePath
    written: datetime


class Lease:
    """The lease of the run in ``folder``, held by this process (see the module)."""

    def __init__(self, folder: RemotePath) -> None:
        self.folder = folder
        self.path = folder / f"{PREFIX}{uuid.uuid4().hex}"
        self.timeout = timeout_s()
        self._stop = threading.Event()
        self._lost = False
        self._renewed = time.monotonic()
        self._beat: threading.Thread | None = None

    def acquire(self) -> None:
        """Hold the run, or raise a one-line :class:`StoreError` naming the live holder."""
        for attempt in range(ATTEMPTS):
            live, stale = self._contest()
            if not live:
                for seen in stale:  # a dead writer's: taken over
                    seen.path.unlink(missing_ok=True)
                self._beat = threading.Thread(target=self._heartbeat, daemon=True)
                self._beat.start()
                return
            self.path.unlink(missing_ok=True)
            if attempt + 1 < ATTEMPTS:
                time.sleep(random.uniform(0.2, 0.8))
        raise self._refusal(live[0])

    def _contest(self) -> tuple[list[Seen], list[Seen]]:
        """Write this lease, list them all: (other live leases, other stale ones)."""
        self._write()
        leases = _listed(self.folder)
        mine = next((seen for seen in leases if seen.path.path == self.path.path), None)
        if mine is None:  # a store that does not list what it just wrote: trust no one
            raise StoreError(f"{self.folder} did not list an object just written: retry")
        others = [seen for seen in leases if seen.path.path != self.path.path]
        live = [
            seen
            for seen in others
            if (mine.written - seen.written).total_seconds() < self.timeout
            and not _dead_here(_owner(seen.path))
        ]
        return live, [seen for seen in others if seen not in live]

    def _write(self) -> None:
        body = {"host": socket.gethostname(), "pid": os.getpid(), "started": _started()}
        self.path.write_bytes(json.dumps(body).encode())
        self._renewed = time.monotonic()

    def _overdue(self) -> bool:
        """Whether the last renewal is so old that a taker may be about to see it stale."""
        return time.monotonic() - self._renewed > self.timeout / 2

    def _refusal(self, holder: Seen) -> StoreError:
        who = _holder(holder.path)
        run = self.folder.name.removeprefix("run=")
        return StoreError(
            f"run {run} is being written by {who} (its lease was renewed at "
            f"{holder.written:%H:%M:%S} UTC): wait for it to end (or stop it), then run again; "
            f"a writer silent for {self.timeout:g} s is taken over"
        )

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.timeout / 4):
            try:
                if self._overdue() or not self.path.exists():  # taken over, or about to be
                    self._lost = True
                    return
                self._write()
            except StoreError:
                continue  # the store is unreachable for now: the next beat tries again

    def confirm(self) -> None:
        """Raise :class:`StoreError` if the lease was taken over (call before each write)."""
        if self._lost or self._overdue() or not self.path.exists():
            self._lost = True
            raise StoreError(
                f"the lease of {self.folder} was taken over by another writer after this one "
                f"was silent for {self.timeout:g} s: this run stops; its stored cases are kept"
            )

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if not self._lost:
            self.path.unlink(missing_ok=True)


@contextmanager
def held(folder: RemotePath) -> Iterator[Lease]:
    """Hold the lease of the run in ``folder`` for the block (see the module)."""
    lease = Lease(folder)
    lease.acquire()
    try:
        yield lease
    finally:
        lease.release()


def _listed(folder: RemotePath) -> list[Seen]:
    selector = pafs.FileSelector(folder.path, allow_not_found=True)
    with translated(folder):
        infos = folder.fs.get_file_info(selector)
    return [
        Seen(folder / info.base_name, info.mtime)
        for info in infos
        if info.base_name.startswith(PREFIX) and info.mtime is not None
    ]


def _owner(path: RemotePath) -> dict[str, Any]:
    """What a lease object says of its writer (nothing, if it cannot be read)."""
    try:
        with translated(path), path.fs.open_input_stream(path.path) as handle:
            body = json.loads(handle.read())
    except (StoreError, OSError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _started() -> float:
    return psutil.Process().create_time()


def _dead_here(owner: dict[str, Any]) -> bool:
    """Whether the lease's writer ran on this machine and is gone (no process of its pid was
    started when it was): then its lease is taken over at once, without waiting it out."""
    if owner.get("host") != socket.gethostname() or not isinstance(owner.get("pid"), int):
        return False
    try:
        return psutil.Process(owner["pid"]).create_time() != owner.get("started")
    except psutil.Error:
        return True


def _holder(path: RemotePath) -> str:
    owner = _owner(path)
    if isinstance(owner.get("pid"), int) and owner.get("host"):
        return f"process {owner['pid']} on {owner['host']}"
    return "another process"
