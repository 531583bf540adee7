"""The holes issue 41 found at the edges of the store and the command line, each closed at its
cause: every test here failed before its fix. In-process through ``benchsite.cli.app.main``
(real store, real plugins), except where a real signal or process is the point."""

from __future__ import annotations

import csv
import errno
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsite.errors import ConfigError
from benchsite.host import config
from benchsite.store import parts as store
from benchsite.tables.csvfile import csv_bytes
from benchsite.testing import complete_row
from tests.conftest import CASEBOOK, FAST_RUN
from tests.test_cli import cli


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
    args = ("run", "-w", "case-add", *FAST_RUN, "--host", "h", "--results", str(root))
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
    args = ("run", *FAST_RUN, "--host", "h", "--results", str(root), "-w", "case-add")
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
    status, out, err = cli(capsys, "run", "-w", "case-add", *FAST_RUN, "--results", str(root))
    assert status == 130 and "nothing to resume" in out and "--resume" not in out, out + err
    assert list(root.glob("host=*/run=*")) == []


def test_ctrl_c_during_compaction_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch):
    root = tmp_path / "store"
    monkeypatch.setenv("BENCHSITE_FAULT", "compact:after-write=INT")
    status, out, err = cli(capsys, "run", "-w", "case-add", *FAST_RUN, "--results", str(root))
    assert status == 130 and "interrupted during compaction" in out, out + err
    assert "Traceback" not in err
    assert len(store.read_results(root)) == 2  # every stored case kept


def test_a_plain_run_refuses_a_store_of_a_newer_schema_before_any_work(tmp_path, capsys):
    root = tmp_path / "store"
    stored(root, {"workload": "w", "median_s": 0.001})
    part = next(root.glob("host=*/run=*/part-*.parquet"))
    table = pq.read_table(part)
    pq.write_table(table.replace_schema_metadata({"benchsite.schema_version": "99"}), part)
    status, out, err = cli(capsys, "run", "-w", "case-add", *FAST_RUN, "--results", str(root))
    assert status == 2 and "newer benchsite" in err and "stored" not in out
    one_line_error(err)
    assert len(list(root.glob("host=*/run=*"))) == 1  # no run folder added


def test_the_pre_flight_refusal_creates_no_results_folder(tmp_path, capsys):
    root = tmp_path / "new" / "store"
    status, _, err = cli(capsys, "run", "-w", "no-such-workload", *FAST_RUN, "--results", str(root))
    assert status == 2 and "no workload matches" in err
    assert not (tmp_path / "new").exists()


# -- configuration and stored JSON ---------------------------------------------------------------


@pytest.mark.parametrize("number", ["nan", "inf", "-inf", "-1.0"])
def test_config_numbers_that_are_nan_infinite_or_negative_are_one_line(number, tmp_path):
    import benchsite.plugins.workloads.max_batch  # noqa: F401 - declares [max_batch]

    path = tmp_path / "benchsite.toml"
    path.write_text(f"[max_batch]\ncpu_memory_budget_gib = {number}\n")
    with pytest.raises(ConfigError) as refused:
        config.check(path)
    assert str(refused.value) == (
        f"{path}:2: max_batch.cpu_memory_budget_gib: must be a finite number, 0 or more, "
        f"not {float(number)!r}"
    )


def test_json_columns_store_nan_and_infinity_as_null(tmp_path):
    root = tmp_path / "store"
    stored(root, {"workload": "w", "metrics": {"a": float("nan"), "b": [float("inf"), 1.0]}})
    text = store.read_results(root)["metrics"].iloc[0]
    assert json.loads(text, parse_constant=lambda name: pytest.fail(name)) == {
        "a": None,
        "b": [None, 1.0],
    }


# -- store check and serve -----------------------------------------------------------------------


def test_quarantine_on_a_read_only_store_is_one_line(tmp_path, capsys, monkeypatch):
    root = tmp_path / "store"
    stored(root, {"workload": "w", "median_s": 0.001})
    bad = store.run_dir(root, "h", "r1") / "part-bad.parquet"
    bad.write_bytes(b"PAR1 not really")

    def read_only(self, target):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(Path, "replace", read_only)  # root may write anywhere: as EROFS does
    status, _, err = cli(capsys, "store", "check", "--results", str(root), "--quarantine")
    assert status == 2 and "Read-only file system" in err and "without --quarantine" in err
    one_line_error(err)
    assert bad.exists()


def test_serve_lists_no_folder_and_serves_no_hidden_file(tmp_path):
    import threading
    import urllib.error
    import urllib.request

    from benchsite.site.serve import make_server

    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / ".git").mkdir()
    (site / ".git" / "config").write_text("secret")
    (site / ".benchsite-files").write_text("index.html\n")
    (site / "index.html").write_text("<p>home</p>")
    (site / "assets" / "a.js").write_text("1")
    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert urllib.request.urlopen(f"{base}/").read() == b"<p>home</p>"
        assert urllib.request.urlopen(f"{base}/assets/a.js").read() == b"1"
        for path in ("/assets/", "/.git/config", "/.git/", "/.benchsite-files", "/%2Egit/config"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(base + path)
            assert refused.value.code == 404, path
    finally:
        server.shutdown()
        server.server_close()


def test_a_path_the_system_refuses_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # found by the fuzzing: a name longer than the system allows
    for command in (["build", "--out", str(tmp_path / "site")], ["results"], ["store", "check"]):
        status, _, err = cli(capsys, *command, "--results", "a" * 300)
        assert status == 2 and "File name too long" in err, (command, err)
        one_line_error(err)
