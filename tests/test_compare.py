"""`benchsite compare` and the regression gate on a real Parquet store: a planted 10% slowdown
is found and fails `--fail-on-regression 5%`; noise alone fails nothing; the Compare page
colours by the gate's rule, reruns' spread included, on the example store with its next lease."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from benchsite.cli import app as cli
from benchsite.errors import SelectionError
from benchsite.store import parts as store
from benchsite.tables import Tables
from benchsite.tables import compare as comparing
from benchsite.testing import complete_row

CASES = 20
SAMPLES = 40


def run_rows(
    host: str, run_id: str, rng: np.random.Generator, slower: dict[int, float], hours: int = 0
) -> list[dict]:
    """One run of CASES matmul sizes, 40 samples of 2% noise each; case i slowed by slower[i]."""
    rows = []
    for case in range(CASES):
        median = 1e-3 * (1 + case / 10) * slower.get(case, 1.0)
        samples = median * rng.normal(1.0, 0.02, SAMPLES)
        rows.append(
            complete_row(
                {
                    "host": host,
                    "run_id": run_id,
                    "workload": "matmul",
                    "params": {"size": 64 * case},
                    "axis": "size",
                    "axis_value": 64.0 * case,
                    "samples_s": samples.tolist(),
                    "median_s": float(np.median(samples)),
                    "n_samples": SAMPLES,
                    "timestamp": datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=hours),
                }
            )
        )
    return rows


@pytest.fixture
def fleet(tmp_path):
    """base: host lab-a; noise: lab-b (same distribution); slow: lab-c (case 7 10% slower,
    case 3 3% slower); and two runs of lab-a, the second with case 5 10% slower."""
    rng = np.random.default_rng(7)
    for host, slower in (("lab-a", {}), ("lab-b", {}), ("lab-c", {7: 1.10, 3: 1.03})):
        store.write_rows(tmp_path, host, f"run-{host}", run_rows(host, f"run-{host}", rng, slower))
    later = run_rows("lab-a", "run-lab-a-2", rng, {5: 1.10}, hours=2)
    store.write_rows(tmp_path, "lab-a", "run-lab-a-2", later)
    return tmp_path


def test_a_planted_10_percent_regression_is_found(fleet):
    rows = Tables.of(store.read_results(fleet)).rows
    table = comparing.compare(comparing.side(rows, "run-lab-a-2"), comparing.side(rows, "lab-c"))
    assert len(table) == CASES
    found = comparing.regressions(table, 0.05)
    assert list(found["params_text"]) == ["size=448"]  # case 7 only; case 3 is under 5%
    worst = found.iloc[0]
    assert worst["low"] > 1.05 and 1.07 < worst["ratio"] < 1.13 and worst["low"] < 1.10


def test_noise_alone_is_no_regression(fleet):
    rows = Tables.of(store.read_results(fleet)).rows
    table = comparing.compare(comparing.side(rows, "run-lab-a"), comparing.side(rows, "lab-b"))
    assert len(table) == CASES and comparing.regressions(table, 0.05).empty
    assert (table["change"] != "same").sum() <= 3  # a 95% interval misses now and then
    assert ((table["low"] < table["ratio"]) & (table["ratio"] < table["high"])).all()


def test_the_gate_exits_1_on_a_regression_and_0_on_noise(fleet, capsys):
    args = ["compare", "--results", str(fleet), "--fail-on-regression", "5%"]
    with pytest.raises(SystemExit) as stopped:
        cli.main([*args, "run-lab-a", "run-lab-a-2"])  # the second run of lab-a: case 5 +10%
    assert stopped.value.code == 1
    out = capsys.readouterr().out
    assert "regression: 1 case(s) significantly slower by more than 5%" in out
    assert "SLOWER" in next(line for line in out.splitlines() if "size=320" in line)
    with pytest.raises(SystemExit) as stopped:
        cli.main([*args, "run-lab-a", "lab-b"])
    assert stopped.value.code in (0, None)


def test_sides_are_hosts_runs_or_models_and_json_is_for_scripts(fleet, capsys):
    with pytest.raises(SystemExit):
        cli.main(["compare", "--results", str(fleet), "--json", "test CPU", "run-lab-a"])
    records = json.loads(capsys.readouterr().out)
    assert len(records) == CASES and {r["host_new"] for r in records} == {"lab-a"}
    with pytest.raises(SystemExit) as stopped:
        cli.main(["compare", "--results", str(fleet), "lab-a", "no-such-thing"])
    assert stopped.value.code == 2
    assert "is no host, run or device model" in capsys.readouterr().err


def test_hosts_are_grouped_by_hardware_fingerprint(fleet):
    rows = Tables.of(store.read_results(fleet)).rows
    assert comparing.hardware_groups(rows) == {"test CPU [test]": ["lab-a", "lab-b", "lab-c"]}


def test_the_compare_page_shows_the_pair_its_address_names(example_site, chromium):
    from tests.conftest import EXAMPLE_RESULTS

    site, _ = example_site
    rows = Tables.of(store.read_results(EXAMPLE_RESULTS)).rows
    table = comparing.compare(comparing.side(rows, "h200"), comparing.side(rows, "h200x2"))
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((site / "compare.html").as_uri())  # opens on two hardware models
    assert (page.locator("#compare-a").input_value(), page.locator("#compare-b").input_value()) == (
        "AMD EPYC",
        "Intel(R) Xeon(R) Processor",
    )
    for a, b in (("h200", "h200x2"), ("h200x2", "h200")):  # colours: the test below
        page.goto((site / "compare.html").as_uri() + f"?a={a}&b={b}")
        assert page.locator("#compare-a").input_value() == a
        assert page.locator("#compare-b").input_value() == b
        assert page.locator("#compare-table tbody tr").count() == len(table)
        assert f"{len(table)} cases measured on both" in page.inner_text("#compare-summary")
    page.select_option("#compare-b", "cpu-2core")
    assert "b=cpu-2core" in page.get_attribute("#compare-link", "href")
    assert page.url.endswith("compare.html?a=h200x2&b=cpu-2core")  # the address follows
    assert not errors
    page.close()


def test_run_labels_are_stored_with_every_row(run_workloads, capsys):
    from tests.conftest import CASEBOOK

    _, rows = run_workloads("case-add", plugins=(CASEBOOK,), labels=(("commit", "3f2a9c1"),))
    assert [json.loads(text) for text in rows["labels"]] == [{"commit": "3f2a9c1"}] * 2
    with pytest.raises(SystemExit) as stopped:
        cli.main(["run", "-w", "case-add", "-p", CASEBOOK, "--label", "no-equals-sign"])
    assert stopped.value.code == 2 and "--label takes KEY=VALUE" in capsys.readouterr().err


def test_the_runs_pages_mark_regressions_and_show_labels(site_from_rows):
    rng = np.random.default_rng(3)
    first = run_rows("lab-a", "run-1", rng, {})
    second = run_rows("lab-a", "run-2", rng, {5: 1.10}, hours=2)
    for row in second:
        row["labels"] = {"driver": "580.159", "commit": "3f2a9c1"}
    site, _ = site_from_rows([*first, *second])
    runs = (site / "runs.html").read_text()
    assert "commit=3f2a9c1, driver=580.159" in runs
    assert "1 regression</span>" in runs and 'href="compare.html?a=run-1&amp;b=run-2"' in runs
    run_page = next((site / "runs").glob("run-2*.html")).read_text()
    assert "1 regression</span>" in run_page and "driver=580.159" in run_page


def test_host_tilde_n_names_the_hosts_runs_newest_first(fleet):
    rows = Tables.of(store.read_results(fleet)).rows
    assert comparing.side(rows, "lab-a~0").name == "run-lab-a-2"
    assert comparing.side(rows, "lab-a~1").name == "run-lab-a"
    with pytest.raises(SelectionError, match="lab-a~2 is none"):
        comparing.side(rows, "lab-a~2")


def test_the_leaderboard_ranks_models_per_kind_on_the_most_measured_case(tmp_path):
    def row(host: str, model: str, size: int, median: float, kind: str = "cuda") -> dict:
        return complete_row(
            {
                "host": host,
                "run_id": f"r-{host}",
                "workload": "matmul",
                "device": "cuda:0" if kind == "cuda" else "cpu",
                "device_kind": kind,
                "device_model": model,
                "params": {"size": size},
                "axis": "size",
                "axis_value": float(size),
                "median_s": median,
            }
        )

    rows = [
        row("a1", "GPU-A", 512, 1.0),
        row("a1", "GPU-A", 1024, 2.0),
        row("a2", "GPU-A", 1024, 1.8),
        row("b1", "GPU-B", 1024, 4.0),
        row("c1", "GPU-C", 512, 0.1),  # only the small size: not the reference case
        row("a1", "big CPU", 1024, 90.0, "cpu"),
    ]
    for each in rows:
        store.write_rows(tmp_path, each["host"], each["run_id"], [each])
    board = Tables.of(store.read_results(tmp_path)).leaderboard
    gpus = board[board["device_kind"] == "cuda"]
    assert list(gpus["model"]) == ["GPU-A", "GPU-B"] and set(gpus["case"]) == {"size=1024"}
    assert list(gpus["host"]) == ["a2", "b1"] and list(gpus["hosts"]) == [2, 1]
    assert list(gpus["versus_best"]) == [1.0, pytest.approx(0.45)]
    assert list(board[board["device_kind"] == "cpu"]["model"]) == ["big CPU"]  # ranked apart


def test_cases_in_common_counts_what_matching_the_two_sides_finds(fleet):
    """The compare page counts each pair's cases before it makes the sides; the count must be
    what matching them gives, also where a host's newest row of a case ran at another world
    size than its older one, and for a run that shares only part of its cases."""
    rng = np.random.default_rng(11)
    partial = run_rows("lab-b", "run-lab-b-2", rng, {}, hours=3)[:5]
    partial[0]["world_size"] = 2  # newer than run-lab-b's row of the case
    other = {**partial[1], "params": {"size": 1}, "axis_value": 1.0, "world_size": 2}
    del other["row_id"], other["case_key"]
    store.write_rows(fleet, "lab-b", "run-lab-b-2", [*partial, complete_row(other)])
    rows = Tables.of(store.read_results(fleet)).rows
    names = ["lab-a", "lab-b", "lab-c", "run-lab-a", "run-lab-a-2", "run-lab-b", "run-lab-b-2"]
    sides = comparing.Sides(rows)
    counted = {(a, b): sides.cases_in_common(a, b) for a in names for b in names if a != b}
    matched = {
        (a, b): len(comparing.matched(comparing.side(rows, a), comparing.side(rows, b)))
        for a, b in counted
    }
    assert counted == matched
    assert counted["run-lab-b", "run-lab-b-2"] == 4  # the fifth case moved to world size 2
    assert counted["lab-a", "lab-b"] == CASES - 1  # lab-b's newest row of case 0: world size 2


@pytest.fixture
def busy_runs(tmp_path):
    """Two runs of lab-a, both measured on a busy machine (their environment says so, as a run
    on a loaded host stores it), the second with case 5 10% slower."""
    rng = np.random.default_rng(5)
    busy = json.dumps({"machine_busy": True})
    for run_id, slower, hours in (("run-1", {}, 0), ("run-2", {5: 1.10}, 2)):
        rows = [
            {**row, "environment": busy} for row in run_rows("lab-a", run_id, rng, slower, hours)
        ]
        store.write_rows(tmp_path, "lab-a", run_id, rows)
    return tmp_path


def test_a_slowdown_on_busy_rows_is_inconclusive_unless_strict(busy_runs, capsys):
    args = ["compare", "--results", str(busy_runs), "--fail-on-regression", "5%"]
    with pytest.raises(SystemExit) as stopped:
        cli.main([*args, "run-1", "run-2"])
    assert stopped.value.code in (0, None)
    out = capsys.readouterr().out
    assert "inconclusive: 1 case(s) slower by more than 5% rest on suspect rows (busy)" in out
    line = next(line for line in out.splitlines() if "size=320" in line)
    assert "(suspect: busy) INCONCLUSIVE" in line
    with pytest.raises(SystemExit) as stopped:
        cli.main([*args, "--strict", "run-1", "run-2"])
    assert stopped.value.code == 1
    assert "regression: 1 case(s)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main([*args, "--json", "run-1", "run-2"])
    captured = capsys.readouterr()
    records = json.loads(captured.out)  # the gate's lines go to stderr: stdout stays JSON
    assert all(r["suspect"] and r["reasons"] == ["busy"] for r in records)
    assert [r["verdict"] for r in records].count("inconclusive") == 1
    assert "inconclusive: 1 case(s)" in captured.err


def test_a_threshold_needs_a_unit_and_may_be_a_time(fleet, capsys):
    args = ["compare", "--results", str(fleet), "run-lab-a", "run-lab-a-2"]
    with pytest.raises(SystemExit) as stopped:
        cli.main([*args, "--fail-on-regression", "5"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "5 has no unit: write 5% for a slowdown of 5 percent, or 500%" in err
    # case 5 (1.5 ms) got 0.15 ms slower: beyond 0.1 ms, not beyond 1 ms
    for limit, code in (("0.1ms", 1), ("1ms", 0), ("100us", 1), ("1.05x", 1), ("1.2x", 0)):
        with pytest.raises(SystemExit) as stopped:
            cli.main([*args, "--fail-on-regression", limit])
        assert (stopped.value.code or 0) == code, limit
    assert comparing.parse_threshold("2ms") == comparing.Threshold(seconds=0.002)
    assert str(comparing.parse_threshold("5%")) == "5%"
    for bad in ("fast", "-5%", "0.5x", "5 parsecs"):
        with pytest.raises(SelectionError, match="takes a slowdown like 5%"):
            comparing.parse_threshold(bad)


def test_compare_refuses_a_missing_store_and_the_same_rows_twice(fleet, tmp_path, capsys):
    for args, message in (
        (["--results", str(tmp_path / "none"), "a", "b"], "holds no results: run `benchsite run`"),
        (["--results", str(fleet), "lab-b", "lab-b"], "select the same rows"),
    ):
        with pytest.raises(SystemExit) as stopped:
            cli.main(["compare", *args])
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def rerun_store(tmp_path_factory):
    """The example store with the H200 host's next lease (``examples/h200/rounds-2026-12-03``)
    beside it: real reruns of one GPU model on two hosts and three leases."""
    import shutil

    from tests.conftest import EXAMPLE_RESULTS

    folder = tmp_path_factory.mktemp("reruns") / "store"
    shutil.copytree(EXAMPLE_RESULTS, folder)
    shutil.copytree(
        EXAMPLE_RESULTS.parent / "rounds-2026-12-03" / "results", folder, dirs_exist_ok=True
    )
    return folder


def test_the_compare_page_colours_only_changes_beyond_the_reruns_spread(rerun_store, chromium):
    from benchsite.site import BuildOptions, build_site
    from benchsite.tables.reruns import run_medians

    site = rerun_store.parent / "site"
    build_site(BuildOptions(results=rerun_store, out=site))
    rows = Tables.of(store.read_results(rerun_store)).rows
    leases = "20261202T004043Z-b8717f", "20261203T185206Z-123ff6"  # h200's two full runs
    page = chromium.new_page()
    page.goto((site / "compare.html").as_uri())  # two device models of one kind first
    assert (page.locator("#compare-a").input_value(), page.locator("#compare-b").input_value()) == (
        "AMD EPYC",
        "Intel(R) Xeon(R) Processor",
    )
    medians = run_medians(rows)
    for a, b in (("h200", "h200x2"), leases):
        table = comparing.compare(comparing.side(rows, a), comparing.side(rows, b), medians=medians)
        # each way round: the reruns' rule asks about the NEW side, so it is not symmetric
        for x, y, shown in ((a, b, table), (b, a, comparing.reversed_comparison(table, medians))):
            verdict = comparing.verdicts(shown, comparing.REGRESSION)  # the gate's rule at 5%
            page.goto((site / "compare.html").as_uri() + f"?a={x}&b={y}")
            lines = page.locator("#compare-table tbody tr")
            assert lines.count() == len(shown)
            assert (
                page.locator("#compare-table tr.slower").count() == (verdict == "regression").sum()
            )
            assert (
                page.locator("#compare-table tr.faster").count() == (verdict == "improvement").sum()
            )
            assert lines.filter(has_text="within reruns").count() == shown["within_reruns"].sum()
    # the run pair has changes both ways; h200 -> h200x2's pipeline step is 12% faster, beyond
    # its interval, and inside what the H200's other runs gave: no change to paint
    assert page.locator("#compare-table tr.slower").count() > 0
    assert page.locator("#compare-table tr.faster").count() > 0
    plain = comparing.compare(comparing.side(rows, "h200"), comparing.side(rows, "h200x2"))
    step = plain[plain["workload"] == "pipeline-train"].iloc[0]
    assert step["high"] < 0.95 and step["change"] == "faster"
    page.goto((site / "compare.html").as_uri() + "?a=h200&b=h200x2")
    line = page.locator("#compare-table tbody tr", has_text="pipeline-train")
    assert "within reruns" in line.inner_text() and line.get_attribute("class") == ""
    page.close()
