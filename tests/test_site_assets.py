"""Chart SVG fallbacks: drawn in worker processes, once per spec, not again when on disk, and a
chart vl-convert cannot draw is reported by name; chart specs show labels whole."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest

from benchsite.errors import PluginError
from benchsite.site.assets import SvgRenderer
from benchsite.specs import ChartSpec, chart_spec


def bars(values: list[float]) -> ChartSpec:
    frame = pd.DataFrame({"name": [f"case {n}" for n in range(len(values))], "value": values})
    chart = alt.Chart(frame).mark_bar().encode(x=alt.X("value:Q"), y=alt.Y("name:N"))
    return chart_spec(chart)


def test_each_chart_is_drawn_once_and_not_again_when_on_disk(tmp_path):
    first, second = bars([1.0, 2.0]), bars([3.0])
    with SvgRenderer(tmp_path, workers=2) as svgs:
        svgs.draw([first, second, first])
        assert svgs.finish() == 2
    assert svgs.paths == {first.svg, second.svg}
    for chart in (first, second):
        assert (tmp_path / chart.svg).read_text().startswith("<svg")
    with SvgRenderer(tmp_path) as again:
        again.draw([first, second])
        assert again.finish() == 0 and again.paths == {first.svg, second.svg}


def test_a_chart_that_cannot_be_drawn_is_named_and_the_others_are_drawn(tmp_path):
    good = bars([1.0])
    broken = ChartSpec({"mark": "no-such-mark"}, '{"mark": "no-such-mark"}')
    with SvgRenderer(tmp_path, workers=1) as svgs:
        svgs.draw([broken, good])
        with pytest.raises(PluginError, match=rf"{broken.svg.rsplit('/', 1)[1]}: .*failed"):
            svgs.finish()
    assert (tmp_path / good.svg).exists() and not (tmp_path / broken.svg).exists()


def test_a_failed_build_does_not_wait_for_its_charts(tmp_path):
    with pytest.raises(RuntimeError), SvgRenderer(tmp_path, workers=1) as svgs:
        svgs.draw([bars([float(n)]) for n in range(50)])
        raise RuntimeError("the build broke")
    assert len(list((tmp_path / "assets/charts").glob("*.svg"))) < 50


def test_specs_show_labels_whole_unless_the_chart_sets_a_limit():
    spec = bars([1.0]).spec
    assert spec["config"]["axis"]["labelLimit"] == 0 and spec["config"]["legend"]["labelLimit"] == 0
    limited = alt.Chart(pd.DataFrame({"v": [1]})).mark_point().configure_axis(labelLimit=90)
    assert chart_spec(limited).spec["config"]["axis"] == {"labelLimit": 90, "titleLimit": 0}
