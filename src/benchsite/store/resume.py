"""``benchsite run --resume``: which interrupted run to continue, and which of its cases to skip.

The run continued is the newest run of this host that *matches the selection* (measured with the
same profile, holding only cases of the planned workloads and devices) and is not complete (some
planned case missing, or, with ``--retry-failed``, some case whose row failed); failing that, the
newest matching run (killed during its compaction, say: resuming finishes it). A finished run of
other workloads is never picked. A retried case's new row supersedes its failed row in the
store (:func:`benchsite.store.parts.write_rows`), so each case keeps one row.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from benchsite._infra.status import FAILED
from benchsite.errors import SelectionError
from benchsite.store import parts as store

Key = tuple[str, str]  # (device, case_key)


@dataclass(frozen=True)
class Resumption:
    """The run to continue, the cases it already holds, and the failed rows to measure again."""

    run_id: str
    done: frozenset[Key]
    retry: dict[Key, str] = field(default_factory=dict)  # case → id of its failed row


def find_run(
    results: Path, host: str, planned: Collection[Key], profile: str, retry_failed: bool
) -> Resumption:
    """The newest incomplete run of ``host`` matching the selection, or a one-line error."""
    frame = store.read_results(results)
    frame = frame[frame["host"] == host]
    wanted = set(planned)
    matching = [
        _resumption(run_id, rows, retry_failed)
        for run_id, rows in _runs_newest_last(frame)
        if _matches(rows, wanted, profile)
    ]
    incomplete = [found for found in matching if wanted - found.done]
    if incomplete or matching:  # a complete run is continued only to finish its compaction
        return (incomplete or matching)[-1]
    raise SelectionError(
        f"nothing to resume: {results} holds no run of host {host} for this selection "
        f"(same workloads, devices and profile); run without --resume"
    )


def _runs_newest_last(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    order = frame.groupby("run_id", sort=False)["timestamp"].max().sort_values(kind="stable")
    return [(str(run_id), frame[frame["run_id"] == run_id]) for run_id in order.index]


def _matches(rows: pd.DataFrame, wanted: set[Key], profile: str) -> bool:
    profiles = set(rows["profile"].dropna())
    return profiles <= {profile} and set(_keys(rows)) <= wanted


def _resumption(run_id: str, rows: pd.DataFrame, retry_failed: bool) -> Resumption:
    keys = _keys(rows)
    failed = rows["status"].isin(FAILED).to_numpy() if retry_failed else [False] * len(rows)
    retry = {
        key: str(row_id)
        for key, row_id, bad in zip(keys, rows["row_id"], failed, strict=True)
        if bad
    }
    done = frozenset(key for key in keys if key not in retry)
    return Resumption(run_id, done, retry)


def _keys(rows: pd.DataFrame) -> list[Key]:
    return list(zip(rows["device"].astype(str), rows["case_key"].astype(str), strict=True))
