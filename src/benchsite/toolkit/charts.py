"""Small aggregated Altair charts for findings (a few dozen points each, data inlined).

Charts are pure functions from a data frame to an Altair chart; a finding works without one,
so when Altair is not installed (it is in the ``site`` extra) they return ``None``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pandas as pd

__all__ = [
    "MAX_POINTS",
    "SIZE",
    "VERDICT_COLORS",
    "bar_chart",
    "history_chart",
    "line_chart",
    "ratio_chart",
    "stacked",
]

MAX_POINTS = 400
# given to the chart's constructor: .properties() validates each one against the schema, which
# cost a third of a finding chart's build time
SIZE = {"width": 360, "height": 220}


def _altair() -> Any:
    try:
        import altair as alt
    except ImportError:
        return None
    return alt


def _unvalidated(chart: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`benchsite.site.charts.unvalidated` (Altair's checks of each part as it is made
    skipped), once Altair is known to be installed."""

    @functools.wraps(chart)
    def build(*args: Any, **kwargs: Any) -> Any:
        if _altair() is None:
            return chart(*args, **kwargs)
        from benchsite.site.charts import unvalidated

        return unvalidated(chart)(*args, **kwargs)

    return build


def _drawn(data: pd.DataFrame, *columns: str | None) -> pd.DataFrame:
    """Only the columns a chart draws: the rest would be inlined into the page for nothing (and
    a text column with a missing value is not valid chart JSON)."""
    return data[[column for column in data.columns if column in columns]]


def _telling(data: pd.DataFrame, color: str | None) -> str | None:
    """``color`` when its values tell lines apart; ``None`` for a single line (its legend would
    be one dot, with an empty label when the line's name is empty)."""
    return color if color and data[color].nunique(dropna=False) > 1 else None


def _tooltips(alt: Any, *fields: str) -> list[Any]:
    """Tooltip channels of ``fields`` (``name:Q``): as objects, since Altair takes ~15 ms to
    turn each bare field name into one (it matches the name against its whole schema), and
    typed, so that the chart serializes without Altair inferring types from its data."""
    return [alt.Tooltip(field) for field in fields]


@_unvalidated
def ratio_chart(
    data: pd.DataFrame, x: str, title: str, color: str | None = None, in_bytes: bool = False
) -> Any:
    """A ratio (``value`` with ``low``/``high``) against ``x`` on log axes, a line at 1×; ``x``
    ticked as :func:`benchsite.site.charts.value_ticks` ticks a parameter (``in_bytes``: it
    counts bytes)."""
    alt = _altair()
    if alt is None or data.empty or len(data) > MAX_POINTS:
        return None
    color = _telling(data, color)
    encode_color = {"color": alt.Color(f"{color}:N", title=None)} if color else {}
    # the data goes on the layer, not on each part: Altair compares parts' data by printing it
    from benchsite.site.charts import axis_title, value_ticks

    x_axis = alt.X(
        f"{x}:Q",
        scale=alt.Scale(type="log"),
        title=axis_title(x),
        axis=value_ticks(data[x], in_bytes),
    )
    base = alt.Chart().encode(x=x_axis)
    band = base.mark_errorbar().encode(
        y=alt.Y("low:Q", scale=alt.Scale(type="log"), title="ratio (×)"),
        y2=alt.Y2("high:Q"),
        **encode_color,
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y("value:Q"),
        tooltip=_tooltips(alt, f"{x}:Q", "value:Q", "low:Q", "high:Q"),
        **encode_color,
    )
    one = (
        alt.Chart(pd.DataFrame({"one": [1.0]}))
        .mark_rule(strokeDash=[4, 4])
        .encode(y=alt.Y("one:Q"))
    )
    drawn = _drawn(data, x, "value", "low", "high", color)
    from benchsite.site.charts import layer  # imports Altair: only once it is known to be there

    return layer(band, line, one, data=drawn, title=title, **SIZE)


@_unvalidated
def line_chart(
    data: pd.DataFrame,
    x: str,
    y: str,
    title: str,
    color: str | None = None,
    log_x: bool = True,
    x_title: str | None = None,
    y_title: str | None = None,
) -> Any:
    """``y`` against ``x`` (one line per ``color``), log x axis by default, log y axis where
    ``y`` spans decades (a GPU's throughput would flatten a CPU's to zero on a linear one);
    axes titled ``x_title``/``y_title`` (the column names in words by default), ``x`` ticked as
    :func:`benchsite.site.charts.value_ticks` ticks a parameter. ``None`` for fewer than two
    points: a single dot is no curve."""
    alt = _altair()
    if alt is None or len(data) < 2 or len(data) > MAX_POINTS:
        return None
    from benchsite.site.charts import axis_title, log_or_linear, value_ticks

    scale = alt.Scale(type="log") if log_x else alt.Scale()
    color = _telling(data, color)
    encode_color = {"color": alt.Color(f"{color}:N", title=None)} if color else {}
    x_axis = alt.X(f"{x}:Q", scale=scale, title=x_title or axis_title(x), axis=value_ticks(data[x]))
    return (
        alt.Chart(_drawn(data, x, y, color), title=title, **SIZE)
        .mark_line(point=True)
        .encode(
            x=x_axis,
            y=alt.Y(f"{y}:Q", title=y_title or axis_title(y), scale=log_or_linear(data[y])),
            tooltip=_tooltips(alt, f"{x}:Q", f"{y}:Q"),
            **encode_color,
        )
    )


@_unvalidated
def bar_chart(data: pd.DataFrame, x: str, y: str, group: str, title: str) -> Any:
    """Bars of ``y`` per ``x`` category, side by side per ``group`` (one colour each)."""
    alt = _altair()
    if alt is None or data.empty or len(data) > MAX_POINTS:
        return None
    return (
        alt.Chart(_drawn(data, x, y, group), title=title, **SIZE)
        .mark_bar()
        .encode(
            x=alt.X(f"{x}:N", title=None),
            xOffset=alt.XOffset(f"{group}:N"),
            y=alt.Y(f"{y}:Q", title=None, axis=alt.Axis(format="~s")),
            color=alt.Color(f"{group}:N", title=group),
            tooltip=[*_tooltips(alt, f"{x}:N", f"{group}:N"), alt.Tooltip(f"{y}:Q", format=".3~s")],
        )
    )


def stacked(*charts: Any) -> Any:
    """The charts that could be drawn, one above the other (a finding's card is narrow);
    ``None`` when none could."""
    drawn = [chart for chart in charts if chart is not None]
    if len(drawn) < 2:
        return drawn[0] if drawn else None
    return _altair().vconcat(*drawn)


VERDICT_COLORS = {"regression": "#c0392b", "improvement": "#1e8449"}  # history_chart's


def history_chart(case: pd.DataFrame) -> Any:
    """One case's history (rows of :attr:`benchsite.tables.Tables.case_history`): the median
    per run (x: the run's start) per series, each run's interval as a bar, and every flagged
    change (``verdict``) as a large triangle coloured by it (:data:`VERDICT_COLORS`)."""
    alt = _altair()
    if alt is None:
        return None
    from benchsite.site.charts import log_or_linear
    from benchsite.units import tick_label

    data = case.assign(
        started=pd.to_datetime(case["started"], utc=True).dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        change=case["verdict"].replace("", None),
    )[["started", "series", "median_s", "ci_low_s", "ci_high_s", "run_id", "change"]]
    x = alt.X("started:T", title="run started (UTC)")
    y = alt.Y(
        "median_s:Q",
        title="median time",
        scale=log_or_linear(data["median_s"]),
        axis=alt.Axis(labelExpr=tick_label("seconds")),  # 23 µs, not 0.000023
    )
    color = alt.Color("series:N", title=None)
    tooltip = [
        alt.Tooltip("series:N"),
        alt.Tooltip("run_id:N", title="run"),
        alt.Tooltip("median_s:Q", title="median (s)", format=".3~g"),
    ]
    base = alt.Chart(data)
    line = base.mark_line(point=True).encode(x=x, y=y, color=color, tooltip=tooltip)
    bars = base.mark_rule().encode(x=x, y="ci_low_s:Q", y2="ci_high_s:Q", color=color)
    if data["change"].isna().all():  # a layer of no points would leave its scale empty
        return alt.layer(line, bars).properties(**SIZE)
    marks = (
        base.transform_filter("datum.change != null")
        .mark_point(shape="triangle-up", size=220, filled=True, opacity=0.9)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "change:N",
                title="flagged",
                scale=alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values())),
            ),
            tooltip=[*tooltip, alt.Tooltip("change:N", title="flagged")],
        )
    )
    return alt.layer(line, bars, marks).resolve_scale(color="independent").properties(**SIZE)
