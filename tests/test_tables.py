"""benchsite.tables on constructed stores with known answers: pairs, the block-bootstrap
interval, suspect rows and implausible results, and how analyses are given the tables."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from analysis_frames import CPU_INFO, frame, row
from benchsite.plugins.analyses.speedup import speedup_findings

from benchsite import Analysis, Flag
from benchsite.site.analyse import Analysed, arguments_for, run_analysis
from benchsite.tables import Tables
from benchsite.tables.speedups import block_picks, ratio_intervals


def _flagged(results, row_ids, code):
    """``results`` with the validity flag ``code`` on the rows ``row_ids`` (as the validity
    plugin's ``prepare_results`` would set it)."""
    return results.assign(flags=[[code] if r in row_ids else [] for r in results["row_id"]])


def test_a_pair_is_one_host_and_one_case_with_copies_apart(tmp_path):
    rows = [
        row("matmul", "cpu", 1e-2, {"size": 64}),
        row("matmul", "cuda:0", 1e-3, {"size": 64}),
        row("matmul", "cuda:0", 4e-3, {"size": 64, "include_transfer": True}),
        row("matmul", "cuda:0", 1e-4, {"size": 64}, host="host-b"),
    ]
    pairs = Tables.of(frame(rows, tmp_path)).speedups
    assert sorted(pairs["speedup"].round(6)) == [2.5, 10.0]
    assert set(pairs["host"]) == {"host-a"}  # the other host has no CPU row: no pair
    assert pairs.set_index("include_transfer")["cpu_row"].nunique() == 1
    for pair in pairs.itertuples():
        assert pair.low < pair.speedup < pair.high


def test_the_interval_is_deterministic_and_widens_for_samples_that_drift_together():
    drifting = list(np.linspace(1.0, 1.3, 21) * 1e-3)  # a slow drift, ordered in time
    shuffled = list(np.random.default_rng(1).permutation(drifting))
    gpu = list(np.full(21, 1e-4))
    (_, low, high), (_, low_iid, high_iid) = ratio_intervals([(drifting, gpu), (shuffled, gpu)])
    assert high - low > 1.1 * (high_iid - low_iid)  # blocks keep the drift in each resample
    assert ratio_intervals([(drifting, gpu)]) == ratio_intervals([(drifting, gpu)])
    assert np.isnan(ratio_intervals([([], gpu)])[0][1])


def test_blocks_are_consecutive_samples_wrapping_around():
    picks = block_picks(8, 50, np.random.default_rng(0))
    assert picks.shape == (50, 8)
    steps = np.diff(picks, axis=1) % 8
    assert (steps[:, 0] == 1).all()  # block length 2: each resample starts with a pair


def test_a_noisy_pair_stays_the_headline_with_its_wider_interval(tmp_path):
    rows = [
        row("mlp-train", device, median, {"batch": b})
        for b in (1, 16, 256)
        for device, median in (("cpu", 1e-3 * b), ("cuda:0", 1e-3))
    ]
    results = frame(rows, tmp_path)
    noisy = set(results[(results["device"] == "cuda:0") & (results["axis_value"] == 256)]["row_id"])
    tables = Tables.of(_flagged(results, noisy, "noisy"))
    pairs = tables.speedups.set_index("axis_value")
    assert not pairs["suspect"].any() and pairs.loc[256.0, "uncertain"] == ("noisy",)
    plain, flagged = pairs.loc[16.0], pairs.loc[256.0]
    # the noisy row's samples spread ±5% (10th to 90th percentile ±4%): the interval says so
    assert flagged["high"] / flagged["low"] > 1.05 > plain["high"] / plain["low"]
    assert tables.headline["axis_value"].tolist() == [256.0] and tables.suspect_headlines.empty
    (found,) = speedup_findings(tables)
    assert found.numbers["best_speedup"] == pytest.approx(256.0)
    assert list(tables.suspect["row_id"]) == []


def test_an_above_peak_pair_is_never_the_best_case_nor_the_headline(tmp_path):
    rows = [
        row("mlp-train", device, median, {"batch": b})
        for b in (1, 16, 256)
        for device, median in (("cpu", 1e-3 * b), ("cuda:0", 1e-3))
    ]
    results = frame(rows, tmp_path)
    wrong = set(results[(results["device"] == "cuda:0") & (results["axis_value"] == 256)]["row_id"])
    tables = Tables.of(_flagged(results, wrong, "above-peak"))
    suspect = tables.speedups[tables.speedups["suspect"]]
    assert suspect["reasons"].tolist() == [("above-peak",)]
    # no smaller size stands in for the wrong largest one: no headline, shown as suspect
    assert tables.headline.empty
    assert tables.suspect_headlines["axis_value"].tolist() == [256.0]
    (found,) = speedup_findings(tables)
    assert found.numbers["best_speedup"] == pytest.approx(16.0)
    assert "Suspect, not used above — batch 256: 256×" in found.explanation
    assert list(tables.suspect["row_id"]) == list(wrong)
    assert not set(tables.usable["row_id"]) & wrong


def test_superlinear_thread_scaling_is_suspect(tmp_path):
    rows = [
        row("cpu-threads", "cpu", t, {"threads": n, "op": "matmul"}, info=CPU_INFO)
        for n, t in ((1, 1.0), (2, 0.5), (4, 0.1))
    ]
    curve = Tables.of(frame(rows, tmp_path)).scaling("threads")
    assert curve["efficiency"].round(3).tolist() == [1.0, 1.0, 2.5]
    assert curve["reasons"].tolist() == [(), (), ("superlinear",)]


def test_a_precision_gain_beyond_the_ratio_of_peak_rates_is_suspect(tmp_path):
    rows = [
        row("matmul", "cuda:0", median, {"size": 4096, "precision": precision})
        for precision, median in (("fp32", 1.0), ("bf16", 0.05), ("tf32", 0.2))
    ]
    results = frame(rows, tmp_path)
    peaks = {"fp32": 67.0, "bf16": 989.0, "tf32": 495.0}  # an H200's dense peaks
    results["peak_tflops"] = [peaks[json.loads(p)["precision"]] for p in results["params"]]
    gains = Tables.of(results).precision_gains.set_index("precision")
    assert gains.loc["bf16", "speedup"] == pytest.approx(20.0)  # above 989 / 67 = 14.8
    assert gains.loc["bf16", "reasons"] == ("beyond-peak-ratio",)
    assert gains.loc["tf32", "reasons"] == ()  # 5× is within 495 / 67


def test_an_analysis_gets_the_arguments_it_names_and_the_old_form_still_works(tmp_path):
    given = {"results": "R", "tables": "T", "findings": ["F"]}
    assert arguments_for(lambda results: [], given) == {"results": "R"}
    assert arguments_for(lambda frame: [], given) == {"frame": "R"}  # any one-argument form
    assert arguments_for(lambda tables, findings: [], given) == {"tables": "T", "findings": ["F"]}
    assert arguments_for(lambda tables, results=None: [], given) == {"tables": "T", "results": "R"}


def test_an_analysis_that_names_a_group_is_warned_and_still_runs(tmp_path):
    analysed = Analysed(frame([row("matmul", "cpu", 1e-3, {"size": 64})], tmp_path), [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        item = Analysis(name="old", description="", analyze=lambda results: [], group="shared")
        assert run_analysis(item, analysed, []) == ([], None)
    assert any(
        issubclass(w.category, DeprecationWarning) and "group" in str(w.message) for w in caught
    )


def test_an_answer_stands_on_a_noisy_largest_size_and_passes_over_a_wrong_one(tmp_path):
    rows = [
        row("mlp-train", device, median, {"batch": batch})
        for batch in (16, 256, 4096)
        for device, median in (("cpu", 1e-5 * batch), ("cuda:0", 1e-3))
    ]
    gpu = {r["params"]["batch"]: r["row_id"] for r in rows if r["device"] == "cuda:0"}
    results = frame(rows, tmp_path)
    (answer,) = Tables.of(_flagged(results, {gpu[4096]}, "noisy")).answers.itertuples()
    assert (answer.at_size, answer.uncertain, answer.largest_reasons) == (4096.0, ("noisy",), ())
    assert answer.speedup == pytest.approx(40.96, rel=0.05)
    assert answer.cpu_median_s == pytest.approx(0.04096) and answer.gpu_median_s == 1e-3
    (answer,) = Tables.of(_flagged(results, {gpu[4096]}, "above-peak")).answers.itertuples()
    assert (answer.at_size, answer.largest, answer.largest_reasons) == (
        256.0,
        4096.0,
        ("above-peak",),
    )
    (answer,) = Tables.of(_flagged(results, set(gpu.values()), "above-peak")).answers.itertuples()
    assert answer.largest_reasons == ("above-peak",) and np.isnan(answer.speedup)  # none stands


def test_tables_worked_out_side_by_side_are_those_worked_out_one_after_another():
    """A build works the tables out in forked processes (analysis.computed_tables); what comes
    back must be every table, equal to what this process works out itself."""
    from conftest import EXAMPLE_RESULTS
    from pandas.testing import assert_frame_equal

    from benchsite.host.manager import load_plugins
    from benchsite.site.analyse import computed_tables, prepare_results
    from benchsite.store import parts as store
    from benchsite.tables import EVERY_TABLE

    results = prepare_results(load_plugins(), store.read_results(EXAMPLE_RESULTS))
    apart, here = computed_tables(results, workers=2), Tables.of(results)
    assert set(EVERY_TABLE) <= set(vars(apart))  # each one made before anyone asks for it
    for name in EVERY_TABLE:
        mine, theirs = getattr(here, name), getattr(apart, name)
        for field in ("runs", "cases", "matched") if name == "run_comparison" else (None,):
            assert_frame_equal(
                getattr(theirs, field) if field else theirs, getattr(mine, field) if field else mine
            )
    with pytest.raises(ValueError, match="not tables"):
        apart.adopt({"speedup": here.speedups})


def test_a_flag_means_what_the_plugin_that_registers_it_says(tmp_path):
    """The tables name no flag: ``above-peak`` is suspect and ``noisy`` uncertain because the
    validity plugin registers them so (the default, the installed plugins' flags); given other
    flags, other codes count."""
    results = frame([row("matmul", "cpu", 1e-3, {"size": 64})], tmp_path)
    wrong = _flagged(results, set(results["row_id"]), "above-peak")
    assert Tables.of(wrong).suspect["reasons"].tolist() == [("above-peak",)]
    assert "above-peak" in Tables.of(wrong).suspect_flags
    noisy = _flagged(results, set(results["row_id"]), "noisy")
    assert Tables.of(noisy).suspect.empty and Tables.of(noisy).ok["uncertain"].tolist() == [
        ("noisy",)
    ]
    mine = [Flag("noisy", "only a remark here"), Flag("odd", "odd", suspect=True)]
    assert Tables.of(noisy, mine).ok["uncertain"].tolist() == [()]  # no longer widened
    odd = _flagged(results, set(results["row_id"]), "odd")
    assert Tables.of(odd, mine).usable.empty and Tables.of(odd).suspect.empty
    with pytest.warns(DeprecationWarning, match="SUSPECT_FLAGS"):
        from benchsite.tables import SUSPECT_FLAGS  # the 0.2 snapshots' name still reads
    assert "above-peak" in SUSPECT_FLAGS and "noisy" not in SUSPECT_FLAGS  # noisy: uncertain


def test_a_rate_flagged_not_a_peak_stands_only_where_nothing_else_was_measured(tmp_path):
    rows = [row("copy", "cpu", 1e-3, {"size": s}) for s in (2**20, 2**28)]
    results = frame(rows, tmp_path)
    results = results.assign(gbps=[200.0, 20.0])
    small = {results["row_id"].iloc[0]}
    cached = _flagged(results, small, "in-cache")
    peak = Tables.of(cached).peaks.query("unit == 'GB/s'")
    assert peak["rate"].tolist() == [20.0]  # the cache's 200 GB/s is no peak of the memory
    remark = Tables.of(cached, [Flag("in-cache", "a remark")]).peaks.query("unit == 'GB/s'")
    assert remark["rate"].tolist() == [200.0]
