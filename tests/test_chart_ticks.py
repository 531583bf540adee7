"""Charts of one measured point tick in words (``65,536``, ``64 KiB``, ``23 µs``), never in
Vega's defaults (``65.536k``, ``0.000023``, ``0.5`` cases): each is drawn to SVG as the build
draws it, and its tick labels are read."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import vl_convert

from benchsite.site import charts
from benchsite.site.chart_svg import static, vega_spec
from benchsite.toolkit.charts import history_chart, line_chart, ratio_chart


def labels(chart) -> list[str]:
    """Every text of the chart's SVG, as drawn."""
    spec = json.loads(chart.to_json())
    svg = vl_convert.vega_to_svg(vega_spec(static(spec)))
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def one_ratio(size: float) -> pd.DataFrame:
    return pd.DataFrame({"size": [size], "value": [2.0], "low": [1.8], "high": [2.2], "case": [""]})


@pytest.mark.parametrize(("in_bytes", "tick"), [(False, "65,536"), (True, "64 KiB")])
def test_a_one_point_ratio_chart_ticks_its_point_in_words(in_bytes, tick):
    shown = labels(ratio_chart(one_ratio(65536.0), "size", "GPU speedup", in_bytes=in_bytes))
    assert tick in shown
    assert not [text for text in shown if text.endswith("k") or "0000" in text], shown


def test_a_line_chart_of_one_point_per_line_ticks_in_words():
    data = pd.DataFrame({"batch": [65536.0, 65536.0], "rate": [10.0, 20.0], "device": ["a", "b"]})
    shown = labels(line_chart(data, "batch", "rate", "t", "device"))
    assert "65,536" in shown and "65.536k" not in shown, shown


def test_a_history_of_one_run_ticks_its_time_with_a_unit():
    case = pd.DataFrame(
        {
            "started": pd.to_datetime(["2026-12-01 10:00"], utc=True),
            "series": ["cpu"],
            "median_s": [2.3e-5],
            "ci_low_s": [2.2e-5],
            "ci_high_s": [2.4e-5],
            "run_id": ["r1"],
            "verdict": [""],
        }
    )
    shown = labels(history_chart(case))
    assert any(text.endswith(" µs") for text in shown), shown
    assert not [text for text in shown if "0.0000" in text], shown


def test_the_runs_chart_of_one_small_run_counts_whole_cases():
    runs = pd.DataFrame(
        {
            "host": ["a"],
            "run_id": ["r1"],
            "cases": [2],
            "failed": [0],
            "started": pd.to_datetime(["2026-12-01 15:53"], utc=True),
        }
    )
    shown = labels(charts.runs_chart(runs))
    legend = shown[shown.index("some cases failed") + 1 : shown.index("cases")]  # the sizes'
    assert legend and all(text.isdigit() for text in legend), shown
