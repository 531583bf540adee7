"""One row per case of a run, whatever wrote the store; a part vanishing mid-listing is listed
again (issue 41)."""

from __future__ import annotations

import pandas as pd
import pytest

from benchsite.store import check
from benchsite.store import parts as store
from benchsite.testing import complete_row


def case_row(size: int, median: float, when: str) -> dict:
    return complete_row(
        {
            "run_id": "r",
            "host": "h",
            "workload": "w",
            "params": {"size": size},
            "median_s": median,
            "timestamp": pd.Timestamp(when, tz="UTC"),
        }
    )


def test_readers_and_compaction_keep_one_row_per_case_of_a_run(tmp_path):
    root = tmp_path / "store"
    # as two writers of one run left it before runs had one writer everywhere: case 1 twice
    store.write_rows(
        root, "h", "r", [case_row(1, 1.0, "2026-01-01 10:00"), case_row(2, 2.0, "2026-01-01 10:01")]
    )
    store.write_rows(root, "h", "r", [case_row(1, 3.0, "2026-01-01 10:02")])
    store.write_rows(
        root, "h", "other", [{**case_row(1, 5.0, "2026-01-01 10:03"), "run_id": "other"}]
    )
    rows = store.read_results(root)
    assert sorted(zip(rows["run_id"], rows["median_s"], strict=True)) == [
        ("other", 5.0),
        ("r", 2.0),
        ("r", 3.0),
    ]
    store.compact_run(root, "h", "r")
    assert len(list(store.run_dir(root, "h", "r").glob("part-*.parquet"))) == 1
    compacted = store.read_table(store.run_dir(root, "h", "r").parent.parent)
    assert sorted(compacted["median_s"].to_pylist()) == [2.0, 3.0, 5.0]


def test_a_part_vanishing_under_compaction_and_check_is_listed_again(tmp_path, monkeypatch):
    root = tmp_path / "store"
    store.write_rows(root, "h", "r", [case_row(1, 1.0, "2026-01-01 10:00")])
    store.write_rows(root, "h", "r", [case_row(2, 2.0, "2026-01-01 10:01")])
    real, calls = store.scan_run, []

    def vanishing_once(folder):  # as a compaction of another process committing meanwhile
        calls.append(folder)
        if len(calls) == 1:
            raise store._Vanished
        return real(folder)

    monkeypatch.setattr(store, "scan_run", vanishing_once)
    assert store.compact_run(root, "h", "r") is not None and len(calls) == 2
    calls.clear()
    assert check.check_store(root).problems == [] and len(calls) >= 2
    monkeypatch.setattr(store, "scan_run", lambda folder: (_ for _ in ()).throw(store._Vanished()))
    with pytest.raises(store.StoreError, match="kept changing while it was read"):
        store.compact_run(root, "h", "r")
