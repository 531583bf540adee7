"""Chart specs and their SVG fallbacks: a spec holds the chart's data as Altair would write it
(rounded), shows labels whole; SVGs are drawn in a process pool, once per spec, not again when
the published site has them, and a chart vl-convert cannot draw is reported by name."""

from __future__ import annotations

import json
import math

import altair as alt
import pandas as pd
import pytest
import vl_convert

from benchsite.errors import PluginError
from benchsite.site import assets
from benchsite.site.chart_svg import _COMPILED, static, vega_spec
from benchsite.site.publish import Staging
from benchsite.site.specs import ChartSpec, chart_spec


def bars(values: list[float]) -> ChartSpec:
    frame = pd.DataFrame({"name": [f"case {n}" for n in range(len(values))], "value": values})
    chart = alt.Chart(frame).mark_bar().encode(x=alt.X("value:Q"), y=alt.Y("name:N"))
    return chart_spec(chart)


def staging(tmp_path, published: str = "published") -> Staging:
    folder = tmp_path / f"staging-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    return Staging(out=tmp_path / published, folder=folder)


def test_missing_charts_are_drawn_once_and_those_of_the_published_site_linked(tmp_path):
    first, second = bars([1.0, 2.0]), bars([3.0])
    drawn = assets.draw_missing([first, second, first], staging(tmp_path))
    assert drawn.count == 2 and drawn.seconds > 0
    for chart in (first, second):
        assert (tmp_path / "staging-0" / chart.svg).read_text().startswith("<svg")
    (tmp_path / "staging-0").rename(tmp_path / "published")  # as the build publishes it
    again = staging(tmp_path)
    assert assets.draw_missing([first, second], again).count == 0
    linked = again.folder / first.svg
    assert linked.stat().st_ino == (tmp_path / "published" / first.svg).stat().st_ino


DRAW_AFTER_USING_VL_CONVERT = """
import sys, vl_convert
from pathlib import Path
from tests.test_site_assets import bars, staging
from benchsite.site import assets
vl_convert.vegalite_to_vega({"mark": "point"})  # vl-convert's engine started in this process
print(assets.draw_missing([bars([1.0]), bars([2.0, 3.0])], staging(Path(sys.argv[1]))).count)
"""


def test_charts_are_drawn_by_a_process_that_had_used_vl_convert_itself(tmp_path):
    """Workers forked from a process whose vl-convert engine had started hung forever (seen in
    a full test run): the drawing workers are fresh interpreters."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", DRAW_AFTER_USING_VL_CONVERT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.split() == ["2"], done.stderr


def test_a_chart_that_cannot_be_drawn_is_named_and_the_others_are_drawn(tmp_path):
    good = bars([1.0])
    broken = ChartSpec({"mark": "no-such-mark"}, '{"mark": "no-such-mark"}')
    into = staging(tmp_path)
    with pytest.raises(PluginError, match=rf"{broken.svg.rsplit('/', 1)[1]}: .*failed"):
        assets.draw_missing([broken, good], into)
    assert (into.folder / good.svg).exists() and not (into.folder / broken.svg).exists()


def test_specs_show_axis_labels_whole_unless_the_chart_sets_a_limit():
    spec = bars([1.0]).spec
    assert spec["config"]["axis"]["labelLimit"] == 0 and "legend" not in spec["config"]
    limited = alt.Chart(pd.DataFrame({"v": [1]})).mark_point().configure_axis(labelLimit=90)
    assert chart_spec(limited).spec["config"]["axis"] == {"labelLimit": 90, "titleLimit": 0}


def test_a_spec_holds_the_data_altair_would_write_rounded_under_a_name():
    frame = pd.DataFrame(
        {
            "size": [64, 128],
            "seconds": [1.234567e-5, math.nan],
            "series": ["cpu", None],
            "when": pd.to_datetime(["2026-01-01 12:00", None]),
        }
    )
    base = alt.Chart(frame).encode(x=alt.X("size:Q"), y=alt.Y("seconds:Q"))
    chart = alt.layer(base.mark_line(), base.mark_point().encode(color=alt.Color("series:N")))
    spec = chart_spec(chart).spec
    ((name, values),) = spec["datasets"].items()
    assert spec["data"] == {"name": name}
    assert values == [
        {"size": 64, "seconds": 1.235e-5, "series": "cpu", "when": "2026-01-01T12:00:00"},
        {"size": 128, "seconds": None, "series": None, "when": ""},
    ]
    altair_spec = chart.to_dict(validate=False)
    assert [layer["encoding"] for layer in spec["layer"]] == [
        layer["encoding"] for layer in altair_spec["layer"]
    ]
    assert isinstance(chart.data, pd.DataFrame)  # the chart itself is left as it was


def test_an_encoding_whose_type_altair_infers_from_the_data_still_serializes():
    frame = pd.DataFrame({"size": [1.0, 2.0], "name": ["a", "b"]})
    chart = alt.Chart(frame).mark_point().encode(x="size", tooltip=[alt.Tooltip("name")])
    spec = chart_spec(chart).spec
    assert spec["encoding"]["x"] == {"field": "size", "type": "quantitative"}
    assert json.loads(json.dumps(spec))["datasets"]


def test_an_svg_is_the_chart_as_a_picture_without_tooltips_or_aria_labels(tmp_path):
    frame = pd.DataFrame({"x": [1.0, 2.0], "tooltip": ["a", "b"]})  # a column named tooltip
    chart = (
        alt.Chart(frame)
        .mark_point(tooltip=True)
        .encode(x=alt.X("x:Q"), y=alt.Y("tooltip:N"), tooltip=[alt.Tooltip("x:Q")])
    )
    spec = chart_spec(chart)
    into = staging(tmp_path)
    assets.draw_missing([spec], into)
    svg = (into.folder / spec.svg).read_text()
    assert "aria-label" not in svg  # Vega labels every axis and point otherwise
    assert ">a</text>" in svg and ">b</text>" in svg  # the data column is drawn all the same
    assert "tooltip" in spec.text  # the page's interactive chart keeps its tooltips


def test_charts_of_one_shape_are_compiled_once_and_drawn_as_on_their_own():
    def lines(values: list[float]) -> dict:
        frame = pd.DataFrame({"size": range(len(values)), "value": values})
        base = alt.Chart(frame).encode(x=alt.X("size:Q"), y=alt.Y("value:Q"))
        return static(chart_spec(alt.layer(base.mark_line(), base.mark_point())).spec)

    charts = [lines([1.0, 2.0]), lines([5.0, 4.0, 3.0]), static(bars([1.0, 2.0]).spec)]
    _COMPILED.clear()
    svgs = [vl_convert.vega_to_svg(vega_spec(chart)) for chart in charts]
    assert len(_COMPILED) == 2  # the two line charts differ in their data only
    assert svgs == [vl_convert.vegalite_to_svg(chart) for chart in charts]
    assert svgs[0] != svgs[1]


def test_the_vega_bundle_is_made_once_into_the_cache_and_says_nothing(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first, second = tmp_path / "first", tmp_path / "second"
    making = assets.start_vega_bundle(first)
    assert making is not None
    assert assets.write_vega_bundle(first, tmp_path / "none", making) == assets.VEGA_BUNDLE
    assert capfd.readouterr().err == ""  # vl-convert 2's bundler prints on stderr
    cached = tmp_path / "cache" / "benchsite" / assets.VEGA_BUNDLE.rsplit("/", 1)[1]
    assert (first / assets.VEGA_BUNDLE).read_bytes() == cached.read_bytes()
    assert b"vegaEmbed" in cached.read_bytes()
    assert assets.start_vega_bundle(second) is None  # the next site copies it from the cache
    assets.write_vega_bundle(second, tmp_path / "none")
    assert (second / assets.VEGA_BUNDLE).read_bytes() == cached.read_bytes()
    third = tmp_path / "third"  # a rebuild takes it from the published site
    assert assets.start_vega_bundle(first) is None
    assets.write_vega_bundle(third, first)
    assert (third / assets.VEGA_BUNDLE).stat().st_ino == (first / assets.VEGA_BUNDLE).stat().st_ino
