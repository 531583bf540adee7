"""How a case ended: the one list of statuses a result row can hold, and which of them are
failures (the site shows them as failed, ``--retry-failed`` measures them again)."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """How a case ended (a ``StrEnum``: the store and every comparison see the plain text)."""

    OK = "ok"  # measured
    SKIPPED = "skipped"  # the workload does not apply here (SkipCase, wrong device kind, ...)
    ERROR = "error"  # setup or a call raised
    OOM = "oom"  # out of memory
    CRASH = "crash"  # the worker (or a rank) died
    TIMEOUT = "timeout"  # killed after the case timeout


# every status but ok and skipped: the case should have been measured and was not
FAILED = frozenset(str(status) for status in Status) - {Status.OK, Status.SKIPPED}
