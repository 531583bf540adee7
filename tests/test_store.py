"""The Parquet store: canonical schema on write and read, additive evolution, compaction."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.parquet as pq

from benchsite.store import parts as store
from benchsite.testing import complete_row
from tests.conftest import TESTS


def a_row(**values):
    row = {"row_id": "r1", "run_id": "run1", "host": "h", "workload": "w", "status": "ok"}
    return {**row, **values}


def test_round_trip_keeps_every_column(tmp_path):
    row = a_row(samples_s=[0.1, 0.2], params={"size": 8}, metrics={"nvml.energy_j": 1.5})
    store.write_rows(tmp_path, "h", "run1", [row])
    frame = store.read_results(tmp_path)
    assert list(frame.columns) == store.SCHEMA.names
    assert list(frame.loc[0, "samples_s"]) == [0.1, 0.2]
    assert store.expand_json(frame, "params").loc[0, "size"] == 8
    assert store.decode_json(frame, "metrics")[0] == {"nvml.energy_j": 1.5}


def test_file_written_before_a_column_existed_reads_it_as_null(tmp_path):
    old_schema = pa.schema(
        [field for field in store.SCHEMA if field.name not in ("ranks", "world_size")]
    )
    old = store.to_table([a_row(row_id="old", world_size=None)]).select(old_schema.names)
    folder = store.run_dir(tmp_path, "h", "run0")
    folder.mkdir(parents=True)
    pq.write_table(old, folder / "part-old.parquet")
    store.write_rows(
        tmp_path, "h", "run1", [a_row(row_id="new", world_size=2, ranks=[{"rank": 0}])]
    )
    frame = store.read_results(tmp_path).set_index("row_id")
    assert frame.loc["new", "world_size"] == 2 and frame.loc["new", "ranks"] == '[{"rank": 0}]'
    assert frame["world_size"].isna()["old"] and frame["ranks"].isna()["old"]


def test_compaction_keeps_rows_and_leaves_one_file(tmp_path):
    for index in range(5):
        store.write_rows(tmp_path, "h", "run1", [a_row(row_id=f"r{index}")])
    store.compact_run(tmp_path, "h", "run1")
    files = list(store.run_dir(tmp_path, "h", "run1").glob("*.parquet"))
    assert len(files) == 1
    assert sorted(store.read_results(tmp_path)["row_id"]) == [f"r{i}" for i in range(5)]


def test_schema_version_is_in_the_file_metadata(tmp_path):
    path = store.write_rows(tmp_path, "h", "run1", [a_row()])
    metadata = pq.read_schema(path).metadata
    assert metadata[b"benchsite.schema_version"] == str(store.SCHEMA_VERSION).encode()


def test_unknown_columns_are_refused(tmp_path):
    import pytest

    from benchsite.errors import StoreError

    with pytest.raises(StoreError, match="schema lacks"):
        store.write_rows(tmp_path, "h", "run1", [a_row(bogus=1)])


def test_the_readers_that_the_schema_doc_shows_read_the_store(tmp_path, monkeypatch):
    """docs/results-schema.md's reader calls, run as written, on a store of two hosts and
    runs: every row, once, with the columns the files hold."""
    for host in ("alpha", "beta"):
        rows = [complete_row({"workload": "matmul", "host": host, "run_id": f"r-{host}"})]
        rows.append(complete_row({**rows[0], "row_id": f"second-{host}", "case_key": "other"}))
        store.write_rows(tmp_path / "results", host, f"r-{host}", rows)
    doc = (TESTS.parent / "docs" / "results-schema.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", doc, re.DOTALL)
    monkeypatch.chdir(tmp_path)
    found: dict = {}
    exec(code, found)
    expected = store.read_results(tmp_path / "results")
    assert sorted(found["rows"]["row_id"]) == sorted(expected["row_id"])
    assert sorted(found["rows"]["host"]) == ["alpha", "alpha", "beta", "beta"]
    assert found["table"].num_rows == 4 and found["table"].schema.names == store.SCHEMA.names


def test_a_run_lock_is_removed_when_its_run_ends_cleanly(tmp_path, run_workloads, results_dir):
    import pytest

    from benchsite.errors import StoreError
    from benchsite.store import runlock as locks
    from tests.conftest import CASEBOOK

    folder = tmp_path / "run=r"
    with locks.run_lock(folder):
        assert (folder / ".lock").exists()
        with pytest.raises(StoreError, match="is being written by process"), locks.run_lock(folder):
            pass
    assert not (folder / ".lock").exists()
    with pytest.raises(KeyError), locks.run_lock(folder):
        raise KeyError("interrupted")
    assert (folder / ".lock").exists()  # kept, as a killed run keeps it: the next taker takes it
    run_workloads("case-add", plugins=(CASEBOOK,))
    assert list(results_dir.rglob("part-*.parquet")) and not list(results_dir.rglob(".lock"))
