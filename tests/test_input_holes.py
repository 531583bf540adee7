"""The holes issue 41 found at the edges of the store and the command line, each closed at its
cause: every test here failed before its fix. In-process through ``benchsite.cli.app.main``
(real store, real plugins), except where a real signal or process is the point."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from benchsite.store import parts as store
from benchsite.testing import complete_row
from benchsite.toolkit.csvfile import csv_bytes
from tests.conftest import CASEBOOK
from tests.test_cli import cli

FAST = ("-p", CASEBOOK, "-d", "cpu", "--budget", "0.05")


def one_line_error(err: str) -> None:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: "), err


def stored(root: Path, *rows: dict) -> None:
    store.write_rows(
        root, "h", "r1", [complete_row({"run_id": "r1", "host": "h", **row}) for row in rows]
    )


# -- CSV formula injection -------------------------------------------------------------------


FORMULAS = ['=HYPERLINK("http://x")', "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx"]


def test_csv_cells_a_spreadsheet_would_run_are_quoted_and_numbers_stay_numbers():
    table = pa.table({"error": [*FORMULAS, "plain", None], "median_s": [-0.5] * 8})
    rows = list(csv.reader(csv_bytes(table).decode().splitlines(keepends=True)))
    assert [row[0] for row in rows[1:7]] == [f"'{text}" for text in FORMULAS]
    assert rows[7][0] == "plain" and rows[8][0] == ""
    assert {row[1] for row in rows[1:]} == {"-0.5"}  # a number, not quoted


def test_results_csv_quotes_a_skip_reason_that_is_a_formula(tmp_path, capsys):
    root = tmp_path / "store"
    stored(root, {"workload": "w", "status": "skipped", "error": "=cmd|'/C calc'!A0"})
    status, _, err = cli(
        capsys, "results", "--results", str(root), "--csv", str(tmp_path / "r.csv")
    )
    assert status == 0, err
    rows = list(csv.DictReader((tmp_path / "r.csv").open(newline="")))
    assert rows[0]["error"] == "'=cmd|'/C calc'!A0"


def test_results_export_to_an_unwritable_path_is_one_line(tmp_path, capsys):
    root = tmp_path / "store"
    stored(root, {"workload": "w", "median_s": 0.001})
    for form in ("--csv", "--json"):
        status, _, err = cli(
            capsys, "results", "--results", str(root), form, str(tmp_path / "no" / "x")
        )
        assert status == 2 and f"cannot write {form}" in err
        one_line_error(err)


# -- damaged and old stores ----------------------------------------------------------------------


def test_a_part_with_only_a_row_id_column_is_not_a_part(tmp_path, capsys):
    root = tmp_path / "store"
    stored(root, {"workload": "w", "median_s": 0.001})
    folder = store.run_dir(root, "h", "r1")
    pq.write_table(pa.table({"row_id": ["x"]}), folder / "part-onlyrowid.parquet")
    status, out, err = cli(capsys, "results", "--results", str(root))
    assert status == 0 and "Traceback" not in err and "part-onlyrowid" in err  # skipped, named
    status, out, err = cli(capsys, "store", "check", "--results", str(root))
    assert status == 1 and "part-onlyrowid.parquet: not a benchsite part (no run_id" in out


def test_a_store_without_timestamps_reads_lists_its_runs_and_resumes(tmp_path, capsys):
    root = tmp_path / "store"
    args = ("run", "-w", "case-add", *FAST, "--host", "h", "--results", str(root))
    assert cli(capsys, *args)[0] == 0
    for path in root.glob("host=*/run=*/part-*.parquet"):  # as a store written without them
        table = pq.read_table(path)
        pq.write_table(table.drop_columns(["timestamp"]), path)
    status, out, err = cli(capsys, "results", "--results", str(root))
    assert status == 0 and "case-add" in out, err
    assert len(store.list_runs(root)) == 1
    status, out, err = cli(capsys, *args, "--resume")
    assert status == 0 and "2 of 2 cases already stored" in out, err


# -- run -----------------------------------------------------------------------------------------


def test_a_resume_whose_remaining_cases_all_skip_exits_0_when_the_run_holds_ok_cases(
    tmp_path, capsys
):
    root = tmp_path / "store"
    args = ("run", *FAST, "--host", "h", "--results", str(root), "-w", "case-add")
    assert cli(capsys, *args)[0] == 0  # 2 ok cases
    status, out, err = cli(capsys, *args, "-w", "case-skip", "--resume")  # 1 more: a skip
    assert status == 0 and "2 of 3 cases already stored" in out and "1 skipped" in out, out + err


def test_timeouts_and_budgets_past_a_week_are_one_line(tmp_path, capsys):
    for option in ("--timeout", "--budget"):
        status, _, err = cli(
            capsys,
            "run",
            "-w",
            "case-add",
            "-p",
            CASEBOOK,
            option,
            "1e10",
            "--results",
            str(tmp_path / "s"),
        )
        assert status == 2 and f"{option} must be a positive number of seconds" in err
        one_line_error(err)
    assert not (tmp_path / "s").exists()


def test_ctrl_c_before_the_first_stored_case_leaves_no_run_and_advises_no_resume(
    tmp_path, capsys, monkeypatch
):
    root = tmp_path / "store"
    monkeypatch.setenv("BENCHSITE_FAULT", "write:after-write=INT")  # before the first rename
    status, out, err = cli(capsys, "run", "-w", "case-add", *FAST, "--results", str(root))
    assert status == 130 and "nothing to resume" in out and "--resume" not in out, out + err
    assert list(root.glob("host=*/run=*")) == []


def test_ctrl_c_during_compaction_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch):
    root = tmp_path / "store"
    monkeypatch.setenv("BENCHSITE_FAULT", "compact:after-write=INT")
    status, out, err = cli(capsys, "run", "-w", "case-add", *FAST, "--results", str(root))
    assert status == 130 and "interrupted during compaction" in out, out + err
    assert "Traceback" not in err
    assert len(store.read_results(root)) == 2  # every stored case kept


def test_a_plain_run_refuses_a_store_of_a_newer_schema_before_any_work(tmp_path, capsys):
    root = tmp_path / "store"
    stored(root, {"workload": "w", "median_s": 0.001})
    part = next(root.glob("host=*/run=*/part-*.parquet"))
    table = pq.read_table(part)
    pq.write_table(table.replace_schema_metadata({"benchsite.schema_version": "99"}), part)
    status, out, err = cli(capsys, "run", "-w", "case-add", *FAST, "--results", str(root))
    assert status == 2 and "newer benchsite" in err and "stored" not in out
    one_line_error(err)
    assert len(list(root.glob("host=*/run=*"))) == 1  # no run folder added


def test_the_pre_flight_refusal_creates_no_results_folder(tmp_path, capsys):
    root = tmp_path / "new" / "store"
    status, _, err = cli(capsys, "run", "-w", "no-such-workload", *FAST, "--results", str(root))
    assert status == 2 and "no workload matches" in err
    assert not (tmp_path / "new").exists()
