"""The chart functions are pure: data frame in, Vega-Lite spec out. These tests read the specs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from benchsite.site import charts, describe
from benchsite.tables import curves, inventory
from benchsite.tables.rows import prepare
from benchsite.units import (
    format_number,
    format_rate_of,
    format_seconds,
    number_texts,
    rate_texts,
    seconds_texts,
)


def sweep(series: str, xs: list[float], medians: list[float], variant: str = "all") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "axis_value": xs,
            "median_s": medians,
            "ci_low_s": [m * 0.9 for m in medians],
            "ci_high_s": [m * 1.1 for m in medians],
            "series": series,
            "variant": variant,
        }
    )


def layer_marks(spec: dict) -> list[str]:
    inner = spec.get("spec", spec)
    return [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in inner["layer"]
    ]


def test_time_chart_is_log_log_when_values_span_decades_and_inlines_one_point_per_case():
    data = sweep("cpu", [64, 512, 4096], [1e-5, 1e-3, 0.5])
    spec = charts.time_chart(data, "size").to_dict()
    assert layer_marks(spec) == ["area", "line", "point"]
    assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
    assert spec["layer"][1]["encoding"]["y"]["scale"]["type"] == "log"
    (values,) = spec["datasets"].values()
    assert len(values) == 3 and values[0]["median_s"] == 1e-5


def test_time_chart_stays_linear_for_a_narrow_range_and_facets_by_variant():
    """Variants that differ in one parameter are lines of one chart; where another parameter
    differs too, one panel per value of it."""
    data = pd.concat(
        [
            sweep("cpu", [64, 128], [1.0, 2.0], "layout=nchw, dtype=fp32"),
            sweep("cpu", [64, 128], [2.0, 4.0], "layout=nhwc, dtype=bf16"),
            sweep("cpu", [64, 128], [3.0, 4.0], "layout=nchw, dtype=bf16"),
        ]
    )
    spec = charts.time_chart(data, "size").to_dict()
    assert spec["facet"]["field"] == "variant"
    assert spec["spec"]["layer"][0]["encoding"]["x"]["scale"]["type"] == "linear"
    (values,) = spec["datasets"].values()
    assert {(v["variant"], v["drawn"]) for v in values} == {
        ("layout=nchw", "fp32"),
        ("layout=nhwc", "bf16"),
        ("layout=nchw", "bf16"),
    }


@pytest.mark.parametrize("parameter", ["pinned", "include_transfer", "precision"])
def test_variants_answering_one_question_are_lines_of_one_chart_on_a_named_axis(parameter):
    """Pinned against pageable, with against without the copies, one precision against another:
    one chart (no panels), one colour per device and one dash per value, the legend and the
    axis titled in words."""
    data = pd.concat(
        [
            sweep(device, [1, 16], [1.0, 2.0], f"{parameter}={value}, world_size=1")
            for device in ("cpu", "cuda:0")
            for value in ("a", "b")
        ]
    )
    spec = charts.time_chart(data, "world_size").to_dict()
    assert "facet" not in spec
    line = spec["layer"][1]["encoding"]
    assert line["color"]["field"] == "series" and line["strokeDash"]["field"] == "drawn"
    assert line["strokeDash"]["title"] == parameter.replace("_", " ")
    assert line["x"]["title"] == "devices (world size)"
    assert "strokeDash" not in spec["layer"][0]["encoding"]  # the band: an area has no dashes
    assert line["strokeDash"]["legend"]["symbolStrokeColor"] == "gray"  # the samples drawn


def speed_frame() -> pd.DataFrame:
    """Three pairs of one series, as :attr:`benchsite.tables.Tables.speedups` has them."""
    return pd.DataFrame(
        {
            "axis_value": [1.0, 100.0, 10_000.0],
            "speedup": [0.1, 10.0, 40.0],
            "low": [0.08, 8.0, 30.0],
            "high": [0.12, 12.0, 50.0],
            "series": "cuda:0",
            "variant": "all",
            "workload": "w",
            "host": "h",
            "device": "cuda:0",
            "gpu_label": "GPU (cuda:0)",
            "cpu_label": "CPU",
            "axis": "size",
            "params": [{"size": 1}, {"size": 100}, {"size": 10_000}],
            "include_transfer": False,
            "cpu_row": ["c1", "c2", "c3"],
            "gpu_row": ["g1", "g2", "g3"],
            "suspect": False,
            "reasons": [(), (), ()],
        }
    )


def test_crossover_is_interpolated_geometrically_between_the_points_around_break_even():
    (row,) = curves.crossovers(speed_frame()).itertuples()
    assert row.where == "between" and math.isclose(row.crossover, 10.0)


@pytest.mark.parametrize(("ratios", "where"), [([2, 3, 4], "below"), ([0.5, 2, 0.9], "never")])
def test_crossover_outside_the_range_is_named(ratios, where):
    assert curves.crossovers(speed_frame().assign(speedup=ratios))["where"].tolist() == [where]


def test_speedup_chart_marks_break_even_and_the_crossover():
    speed = speed_frame()
    spec = charts.speedup_chart(speed, curves.crossovers(speed), "size").to_dict()
    assert layer_marks(spec) == ["area", "line", "rule", "rule", "point"]
    assert spec["layer"][2]["encoding"]["y"] == {"datum": 1}
    assert spec["layer"][3]["encoding"]["x"]["field"] == "crossover"
    (values,) = spec["datasets"].values()
    assert values[0]["crossover"] == pytest.approx(10.0)
    assert "overtakes the CPU from size ≈ 10" in describe.speedup_text(
        speed, curves.crossovers(speed), "size"
    )


def test_the_chart_text_flags_a_crossing_that_rests_on_a_flagged_pair():
    speed = speed_frame().assign(
        speedup=[2.0, 3.0, 4.0],
        suspect=True,
        reasons=[("noisy",), ("noisy",), ("noisy", "unstable")],
    )
    text = describe.speedup_text(speed, curves.crossovers(speed), "size")
    # the GPU wins from the smallest size: that pair (flagged noisy) decides the crossing
    assert text.endswith("is faster at every measured size (flagged noisy).")
    clean = speed_frame().assign(speedup=[2.0, 3.0, 4.0])
    assert describe.speedup_text(clean, curves.crossovers(clean), "size").endswith(
        "is faster at every measured size."
    )


def test_headline_chart_shows_each_workload_with_its_interval():
    top = pd.DataFrame(
        {
            "workload": ["a", "b"],
            "variant": "all",
            "series": "cuda:0",
            "speedup": [3.0, 200.0],
            "low": [2.0, 150.0],
            "high": [4.0, 260.0],
        }
    )
    spec = charts.headline_chart(top).to_dict()
    assert layer_marks(spec) == ["rule", "point", "rule"]
    assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
    assert "b (all) on cuda:0: 200×" in describe.headline_text(top)


def test_runs_chart_has_one_point_per_run():
    runs = pd.DataFrame(
        {
            "host": ["a", "b"],
            "run_id": ["r1", "r2"],
            "cases": [3, 4],
            "failed": [0, 1],
            "started": pd.to_datetime(["2026-01-01", "2026-01-02"], utc=True),
        }
    )
    spec = charts.runs_chart(runs).to_dict()
    (values,) = spec["datasets"].values()
    assert spec["mark"]["type"] == "circle" and len(values) == 2
    x = spec["encoding"]["x"]  # UTC, on a 24-hour clock, whatever the reader's time zone
    assert x["scale"]["type"] == "utc" and "%H:%M" in x["axis"]["format"]
    assert values[1]["started"].endswith("+00:00") and values[1]["when"] == "2026-01-02 00:00 UTC"
    assert "b: 1 run on 2026-01-02, 1 with failed cases" in describe.runs_text(runs)


def test_headline_takes_the_largest_size_and_the_variant_with_the_median_speedup():
    speed = pd.DataFrame(
        {
            "series": "cuda:0",
            "workload": "w",
            "axis_value": [1.0, 8.0, 8.0, 8.0, 8.0, 8.0],
            "variant": ["a", "a", "b", "c", "d", "e"],
            "speedup": [0.5, 30.0, 10.0, 20.0, 90, 80],
            "suspect": [False, False, False, False, True, False],
            "include_transfer": [False, False, False, False, False, True],
        }
    )
    # d is suspect and e includes copies: neither is a headline, nor shifts the median
    (row,) = curves.headline(speed).itertuples()
    assert (row.variant, row.speedup) == ("c", 20.0)


def test_a_world_size_axis_joins_the_device_groups_of_one_kind_into_one_line_of_whole_ticks():
    rows = pd.DataFrame(
        {
            "host": "h",
            "device": ["cuda:0", "cuda:0-1", "cuda:0-3"],
            "device_kind": "cuda",
            "axis": "world_size",
            "params": [f'{{"world_size": {n}}}' for n in (1, 2, 4)],
            "status": "ok",
            "median_s": 1.0,
        }
    )
    prepared = prepare(rows)
    assert prepared["series"].unique().tolist() == ["cuda"]
    data = prepared.assign(
        axis_value=[1.0, 2.0, 4.0], median_s=[1.0, 0.6, 0.4], ci_low_s=0.0, ci_high_s=2.0
    )
    x = charts.time_chart(data, "world_size").to_dict()["layer"][1]["encoding"]["x"]
    assert x["axis"]["values"] == [1.0, 2.0, 4.0]


def test_finding_numbers_read_as_words_with_units():
    from benchsite.site import views

    assert views._key_text("best_share") == "best share"
    assert views._value_text(0.7023, "best_share") == "70%"
    assert views._value_text({"DDP": 2.2e10}, "peak_bytes") == "DDP: 20.5 GiB"  # binary units
    assert views._value_text({"cuda:0": {"usd_per_hour": None}}) == "cuda:0: usd per hour: –"


def test_a_peak_measured_out_of_a_cache_gives_way_to_a_real_one():
    rows = pd.DataFrame(
        {
            "host": "h",
            "device": "cpu",
            "device_kind": "cpu",
            "workload": "copy",
            "status": "ok",
            "axis": "size",
            "params": ['{"size": 1}', '{"size": 2}'],
            "row_id": ["cache", "dram"],
            "tflops": None,
            "gbps": [192.0, 70.0],
            "items_per_s": None,
            "median_s": 1e-3,
            "flags": [("in-cache",), ()],
        }
    )
    (best,) = inventory.peaks(prepare(rows)).itertuples()
    assert best.row_id == "dram" and best.rate == 70.0


def test_a_run_starts_at_the_time_in_its_id_and_lists_only_devices_that_ran():
    rows = pd.DataFrame(
        {
            "host": "h",
            "run_id": ["20261130T173143Z-f2281b", "20261130T173143Z-f2281b", "other"],
            "timestamp": pd.to_datetime(
                ["2026-11-30 17:32:25"] * 2 + ["2026-11-30 18:00:00"], utc=True
            ),
            "row_id": ["a", "b", "c"],
            "status": ["ok", "skipped", "ok"],
            "profile": "full",
            "benchsite_version": "0",
            "device": ["cuda:0", "cuda×4", "cpu"],
            "workload": "w",
        }
    )
    one, other = inventory.runs(rows).sort_values("run_id").itertuples()
    assert one.started == pd.Timestamp("2026-11-30 17:31:43", tz="UTC")
    assert one.devices == "cuda:0" and other.started == pd.Timestamp("2026-11-30 18:00", tz="UTC")


def test_a_finding_chart_of_one_line_has_no_legend_and_of_several_one_colour_each():
    from benchsite.toolkit.charts import ratio_chart

    one = pd.DataFrame(
        {
            "size": [1.0, 2.0],
            "value": [2.0, 3.0],
            "low": [1.5, 2.5],
            "high": [2.5, 3.5],
            "case": ["", ""],
        }
    )
    encodings = [
        layer.get("encoding", {})
        for layer in ratio_chart(one, "size", "t", "case").to_dict()["layer"]
    ]
    assert not any("color" in encoding for encoding in encodings)
    two = one.assign(case=["fp32", "bf16"])
    layers = ratio_chart(two, "size", "t", "case").to_dict()["layer"]
    assert layers[0]["encoding"]["color"]["field"] == "case"


def test_numbers_formatted_a_column_at_a_time_read_as_one_at_a_time():
    """Case tables format whole columns (units.seconds_texts, units.rate_texts); each text
    must be what units.format_seconds / format_number write for the value alone."""
    seconds = [
        0.0,
        -2e-3,
        1.0,
        0.9995,
        999.5e-6,
        1e-6,
        9.99e-7,
        1.5e-12,
        3600.0,
        math.nan,
        math.inf,
        -math.inf,
        123.456e-9,
    ]
    expected = [format_seconds(value) for value in seconds]
    assert seconds_texts(np.array(seconds)).tolist() == expected
    for value in [*seconds, 1.5e12, 999.5e6, 123.4, 2e15, -3e9, 0.5]:
        expected = "–" if not math.isfinite(value) else format_number(value, "B/s")
        assert number_texts(np.array([value]), "B/s").tolist() == [expected], value
    rates = [
        (1.5, 2.0, 3.0),
        (math.nan, 250.0, 7.0),
        (math.nan, math.nan, 12345.0),
        (math.nan, math.nan, math.nan),
        (0.0, math.nan, math.nan),
        (math.inf, 1.0, 1.0),
    ]
    columns = [np.array(column) for column in zip(*rates, strict=True)]
    assert rate_texts(*columns).tolist() == [
        "1.5 TFLOP/s",
        "250 GB/s",
        "12,345 items/s",
        "",
        "0 FLOP/s",
        "1 GB/s",
    ]
    assert format_rate_of(None, 250.0, 7) == "250 GB/s"  # a row's values, one at a time


def test_a_fleet_of_hosts_is_drawn_as_one_line_per_device_with_the_hosts_spread_as_a_band():
    hosts = charts.MAX_SERIES + 1
    data = pd.concat(
        [
            sweep(f"host-{h} · cuda:0", [64, 512], [1e-3 * (1 + h), 2e-3 * (1 + h)])
            for h in range(hosts)
        ]
    ).assign(device_model="NVIDIA H200")
    spec = charts.time_chart(data, "size").to_dict()
    (values,) = spec["datasets"].values()
    assert len(values) == 2  # one point per size, not one per host and size
    first = values[0]
    assert first["series"] == f"NVIDIA H200 · median of {hosts} hosts"
    assert first["median_s"] == pytest.approx(1e-3 * (1 + hosts // 2), rel=1e-3)
    assert first["ci_low_s"] == pytest.approx(1e-3)  # the band: fastest to slowest host
    assert first["ci_high_s"] == pytest.approx(1e-3 * hosts)
    two = data["series"].isin(["host-0 · cuda:0", "host-1 · cuda:0"])
    few = charts.time_chart(data[two], "size").to_dict()
    assert len(next(iter(few["datasets"].values()))) == 4  # few hosts: each its own line


def test_a_fleet_headline_shows_one_speedup_per_workload_and_model_with_the_hosts_range():
    hosts = charts.MAX_SERIES + 1
    top = pd.DataFrame(
        {
            "workload": "mm",
            "variant": "all",
            "series": [f"h{h} · cuda:0" for h in range(hosts)],
            "gpu_label": "H200 (cuda:0)",
            "speedup": [10.0 + h for h in range(hosts)],
            "low": 1.0,
            "high": 99.0,
        }
    )
    (values,) = charts.headline_chart(top).to_dict()["datasets"].values()
    assert [(v["series"], v["speedup"], v["low"], v["high"]) for v in values] == [
        (f"H200 (cuda:0) · median of {hosts} hosts", 16.0, 10.0, 22.0)
    ]
    assert "hosts from 10×–22×" in describe.headline_text(top)


def test_folding_hosts_is_a_sorted_group_by_median_min_and_max_that_skips_what_is_missing():
    rng = np.random.default_rng(7)
    n = 400
    data = pd.DataFrame(
        {
            "series": [f"host-{h} · cuda:{h % 2}" for h in rng.integers(0, 14, n)],
            "variant": rng.choice(["dtype=bf16", "dtype=fp32", None], n, p=[0.45, 0.45, 0.1]),
            "axis_value": rng.choice([64.0, 512.0, 4096.0, math.nan], n, p=[0.3, 0.3, 0.3, 0.1]),
            "median_s": np.where(rng.random(n) < 0.1, math.nan, rng.random(n)),
        }
    )
    folded = charts.folded(data, "median_s")
    device = data["series"].str.rsplit(" · ", n=1).str[-1]
    grouped = data.assign(device=device).groupby(["device", "variant", "axis_value"])["median_s"]
    expected = pd.DataFrame(
        {"median_s": grouped.median(), "low": grouped.min(), "high": grouped.max()}
    ).reset_index()
    hosts = data["series"].str.rsplit(" · ", n=1).str[0].groupby(device).nunique()
    expected["series"] = [f"{d} · median of {hosts[d]} hosts" for d in expected["device"]]
    pd.testing.assert_frame_equal(folded, expected.drop(columns=["device"]), check_dtype=False)
