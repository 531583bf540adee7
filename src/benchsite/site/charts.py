"""The site's charts: pure functions from an aggregated data frame to an Altair chart.

Each takes the small frames of :mod:`benchsite.tables` (one point per case, never raw
samples) and returns a chart whose data is inline, so it renders from ``file://`` too. Scales
turn logarithmic when values span 1.5 decades or more. Tests check the specs, not pixels.

Every encoding is given as a channel object (``alt.Y("low:Q")``, ``alt.Tooltip(...)``), never as
a bare ``"low:Q"`` string or ``alt.datum``: Altair turns those into channels by matching against
its whole schema, ~15 ms each, which made chart building a large part of a site build.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import altair as alt
import numpy as np
import pandas as pd
from altair.utils.schemapi import debug_mode

from benchsite.units import tick_label

P = ParamSpec("P")
R = TypeVar("R")
WIDTH, HEIGHT = 640, 300
FACET_COLUMNS = 2
MAX_LISTED_TICKS = 12
# more lines or points than these on one chart (many hosts): the hosts' lines of one device are
# drawn as one (:func:`folded`); a page then stays small (<300 KB) and a legend readable
MAX_SERIES, MAX_POINTS = 12, 200


def log_or_linear(values: pd.Series) -> alt.Scale:
    """A log scale when positive values span 1.5 decades or more (×30), else a linear one."""
    positive = values[values > 0]
    if len(positive) and (values <= 0).sum() == 0 and positive.max() / positive.min() >= 30:
        return alt.Scale(type="log")
    return alt.Scale(type="linear", zero=False)


def axis_x(data: pd.DataFrame, axis: str, in_bytes: bool = False) -> alt.X:
    """The parameter axis: log or linear (:func:`log_or_linear`), ticks in words
    (:func:`benchsite.units.tick_label`: ``8,192``, ``1 GiB`` where ``in_bytes``). A linear axis
    of a few whole numbers (world sizes 1, 2, 4, 8; thread counts) is ticked at exactly those
    values: no tick falls between two of them (Vega's ``tickMinStep`` alone still drew 1.5)."""
    values = data["axis_value"].dropna()
    return alt.X(
        "axis_value:Q",
        title=axis_title(axis),
        scale=log_or_linear(values),
        axis=value_ticks(values, in_bytes),
    )


def value_ticks(values: pd.Series, in_bytes: bool = False) -> alt.Axis:
    """The ticks of a parameter's axis: in words (``8,192``, ``1 GiB`` where ``in_bytes``), and
    where a few whole values were measured, exactly those (a decimal tick of bytes reads
    "2.93 KiB", of batches "40 50 70 90"; one measured point is ticked at itself, not between
    Vega's round numbers)."""
    distinct = sorted(set(values.dropna()))
    whole = bool(distinct) and all(value % 1 == 0 for value in distinct)
    words = tick_label("bytes" if in_bytes else "count")
    if whole and len(distinct) <= MAX_LISTED_TICKS:
        return alt.Axis(values=distinct, labelExpr=words)
    return alt.Axis(labelExpr=words)


# parameters whose values answer one question (is pinned memory worth it, what does the copy
# cost, which precision) and so are drawn as lines of one chart, in this order of preference
TOGETHER = ("include_transfer", "pinned", "precision", "compile", "channels_last")
AXIS_TITLES = {
    "world_size": "devices (world size)",
    "items_per_s": "items per second",
    "median_ms": "median time per call (ms)",
    "batch": "batch size",
}


def axis_title(name: str) -> str:
    """A parameter or column name as an axis says it: ``world_size`` → devices (world size)."""
    return AXIS_TITLES.get(name, name.replace("_", " ").replace(".", " "))


def _parameters(variant: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in variant.split(", ") if "=" in part)


def _without(parameters: dict[str, str], name: str) -> str:
    return ", ".join(f"{key}={value}" for key, value in parameters.items() if key != name)


def _together_name(variants: list[dict[str, str]]) -> str | None:
    """The varying parameter to draw as lines of one chart: the one that leaves the fewest
    panels, a parameter of :data:`TOGETHER` first when two leave as many."""
    varying = sorted(
        {key for one in variants for key in one if len({other.get(key) for other in variants}) > 1}
    )
    if not varying:
        return None

    def rank(name: str) -> tuple[int, int, str]:
        panels = len({_without(one, name) for one in variants})
        return panels, TOGETHER.index(name) if name in TOGETHER else len(TOGETHER), name

    return min(varying, key=rank)


def together(frame: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """``frame`` with the variants that answer one question drawn together: ``drawn`` holds
    the value of one varying parameter (its name returned; ``None`` where nothing varies),
    ``variant`` the other parameters (the facet, when they still differ) and ``case`` the
    whole variant, which keeps each line apart."""
    out = frame.assign(case=frame["variant"].astype(str), drawn="")
    names = list(dict.fromkeys(out["case"]))
    parameters = {name: _parameters(name) for name in names}
    name = _together_name(list(parameters.values())) if len(names) > 1 else None
    if name is None:
        return out, None
    rest = {case: _without(one, name) for case, one in parameters.items()}
    drawn = {case: one.get(name, "(default)") for case, one in parameters.items()}
    return out.assign(variant=out["case"].map(rest), drawn=out["case"].map(drawn)), name


def _lines(data: pd.DataFrame, name: str | None) -> dict[str, Any]:
    """Colour (and dashes) of the lines of a chart of :func:`together`'s frame: one colour per
    device, dashes per value of the parameter drawn together; one colour per value where
    there is one device."""
    if name is None:
        return {"color": _device_color(), "detail": alt.Detail("case:N")}
    drawn = alt.Legend(symbolOpacity=1)
    dashes = alt.Legend(symbolType="stroke", symbolStrokeColor="gray", symbolSize=400)
    if data["series"].nunique() == 1:
        return {
            "color": alt.Color("drawn:N", title=axis_title(name), legend=drawn),
            "detail": alt.Detail("case:N"),
        }
    return {
        "color": _device_color(),
        "detail": alt.Detail("case:N"),
        "strokeDash": alt.StrokeDash("drawn:N", title=axis_title(name), legend=dashes),
    }


def _band(lines: dict[str, Any]) -> alt.Chart:
    """The chart of a CI band (or of the points) of :func:`_lines`: without the dashes."""
    return alt.Chart().encode(**{key: lines[key] for key in ("color", "detail")})


def _traced(x: alt.X, y: alt.Y, lines: dict[str, Any], tooltip: list[Any]) -> list[alt.Chart]:
    """The lines of :func:`_lines` and their points, as two layers: points drawn by the line
    mark itself would leave the legend's dash samples transparent."""
    line = alt.Chart().mark_line().encode(x=x, y=y, **lines)
    dots = _band(lines).mark_point(filled=True, opacity=1).encode(x=x, y=y, tooltip=tooltip)
    return [line, dots]


def _size(frame: pd.DataFrame) -> dict[str, int]:
    """Width and height of a chart of ``frame``: smaller panels when :func:`_facet` splits it.
    Given to the chart's constructor: ``.properties()`` validates each against the schema."""
    if frame["variant"].nunique() <= 1:
        return {"width": WIDTH, "height": HEIGHT}
    return {"width": WIDTH // FACET_COLUMNS - 10, "height": HEIGHT * 3 // 4}


def _facet(chart: alt.TopLevelMixin, frame: pd.DataFrame) -> alt.TopLevelMixin:
    """Split by ``variant`` (the parameters other than the axis) when there is more than one."""
    if frame["variant"].nunique() <= 1:
        return chart
    # a panel's title reads as words: "image_size=224, precision=bf16" → "image size 224,
    # precision bf16" (the data keeps the variant as stored, which links and tooltips use)
    words = "replace(replace(datum.label, /_/g, ' '), /=/g, ' ')"
    return facet(
        chart,
        alt.Facet("variant:N", title=None, header=alt.Header(labelExpr=words)),
        columns=FACET_COLUMNS,
    )


def unvalidated(chart: Callable[P, R]) -> Callable[P, R]:
    """A chart function run with Altair's debug mode off: Altair then skips validating each
    part (scale, axis, legend...) against its JSON schema as it is made, ~0.25 ms a part.
    Vega-Lite checks the whole spec when it draws it, and the tests draw every chart."""

    @functools.wraps(chart)
    def build(*args: P.args, **kwargs: P.kwargs) -> R:
        with debug_mode(False):
            return chart(*args, **kwargs)

    return build


class _Layered(alt.LayerChart):
    """An ``alt.LayerChart`` whose constructor only keeps what it is given. Altair's
    deep-copies every layer twice to merge their parameters (selections), and runs again on
    every copy ``to_dict`` makes: ~10 ms a chart, seconds over a big store's charts. The
    charts here have no parameters, no size on a layer, and no data shared by every layer
    that Altair would lift up; for them the spec is the same (checked on every chart of the
    example site and of ``benchmarks/site_build.py``'s store)."""

    def __init__(self, data: Any = alt.Undefined, layer: Any = (), **kwargs: Any) -> None:
        with debug_mode(False):  # no validation: Vega-Lite checks the spec when it draws it
            alt.TopLevelLayerSpec.__init__(self, data=data, layer=list(layer), **kwargs)


class _Faceted(alt.FacetChart):
    """An ``alt.FacetChart`` that, like :class:`_Layered`, does not copy its chart."""

    def __init__(self, data: Any = alt.Undefined, spec: Any = alt.Undefined, **kwargs: Any) -> None:
        with debug_mode(False):
            alt.TopLevelFacetSpec.__init__(self, data=data, spec=spec, **kwargs)


def layer(*charts: alt.Chart, **properties: Any) -> alt.LayerChart:
    """``alt.layer(*charts, **properties)`` for charts such as this site's (see
    :class:`_Layered`)."""
    return _Layered(layer=charts, **properties)


def facet(chart: alt.TopLevelMixin, by: alt.Facet, columns: int) -> alt.FacetChart:
    """``chart.facet(facet=by, columns=columns)``: the chart's data moves up to the facet, as
    Altair moves it."""
    data, spec = chart.data, chart.copy(deep=False)
    spec.data = alt.Undefined
    return _Faceted(data=data, spec=spec, facet=by, columns=columns)


def folded(data: pd.DataFrame, value: str, *, keys: tuple[str, ...] = ()) -> pd.DataFrame:
    """``data`` as it is when it draws at most :data:`MAX_SERIES` lines and :data:`MAX_POINTS`
    points; otherwise one line per device over every host instead of one per host and device:
    at each point the median of the hosts' ``value`` and, as ``low``/``high``, the fastest and
    slowest host, the line labelled ``<device> · median of N hosts``. A device is its model
    where ``data`` has a ``model`` column, else its name (``cuda:0``). ``keys``: more columns
    that tell lines apart (a memory metric).

    Grouped in plain Python, as a pandas group-by with ``sort=True`` (rows with a missing key
    left out, missing values skipped): for the few hundred rows of a chart, pandas' group-by,
    reset and relabelling cost ~7 ms, and a big store's site folds a few hundred charts."""
    if data["series"].nunique() <= MAX_SERIES and len(data) <= MAX_POINTS:
        return data
    hosts = [str(series).rsplit(" · ", 1) for series in data["series"].tolist()]
    device = data["model"].astype(str).tolist() if "model" in data else [h[-1] for h in hosts]
    along = ["variant", "axis_value"] if "axis_value" in data else ["variant"]
    by = [device, *(data[name].tolist() for name in (*keys, *along))]
    groups: dict[tuple[Any, ...], list[float]] = {}
    hosts_of: dict[str, set[str]] = {}
    numbers = data[value].to_numpy(float).tolist()
    keyless = np.zeros(len(data), dtype=bool)  # a key with a missing part: checked by column
    for column in by:
        keyless |= pd.isna(np.fromiter(column, dtype=object, count=len(data)))
    rows = zip(zip(*by, strict=True), numbers, hosts, keyless.tolist(), strict=True)
    for key, number, host, skipped in rows:
        hosts_of.setdefault(key[0], set()).add(host[0])
        if not skipped:
            groups.setdefault(key, []).append(number)
    ordered = sorted(groups)
    columns = {name: [key[i] for key in ordered] for i, name in enumerate((*keys, *along), 1)}
    spread = [_spread(groups[key]) for key in ordered]
    median, low, high = ([three[i] for three in spread] for i in range(3))
    labels = [f"{key[0]} · median of {len(hosts_of[key[0]])} hosts" for key in ordered]
    return pd.DataFrame({**columns, value: median, "low": low, "high": high, "series": labels})


def is_missing(value: Any) -> bool:
    """``pd.isna`` of one value, at a tenth of its cost."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _spread(numbers: list[float]) -> tuple[float, float, float]:
    """Median, lowest and highest of ``numbers``, missing ones skipped (NaN if none is left)."""
    present = sorted(n for n in numbers if n == n)
    if not present:
        return math.nan, math.nan, math.nan
    return statistics.median(present), present[0], present[-1]


def _device_color() -> alt.Color:
    return alt.Color("series:N", title="device", legend=alt.Legend(symbolOpacity=1))


def _tooltip(*extra: alt.Tooltip) -> list[alt.Tooltip]:
    return [alt.Tooltip("series:N", title="device"), alt.Tooltip("variant:N"), *extra]


_TIME_COLUMNS = ["axis_value", "median_s", "ci_low_s", "ci_high_s", "series", "variant"]


def time_data(frame: pd.DataFrame) -> pd.DataFrame:
    """The points :func:`time_chart` draws (its text, :func:`describe.time_text`, says them)."""
    data = folded(_with_model(frame[_TIME_COLUMNS], frame), "median_s")
    return data.rename(columns={"low": "ci_low_s", "high": "ci_high_s"})[_TIME_COLUMNS]


def speedup_data(frame: pd.DataFrame) -> pd.DataFrame:
    """The points :func:`speedup_chart` draws, before its crossovers are added."""
    data = frame[["axis_value", "speedup", "low", "high", "series", "variant"]]
    if data["series"].nunique() <= MAX_SERIES and len(data) <= MAX_POINTS:
        return data
    model = frame["gpu_label"] if "gpu_label" in frame else None  # one line per accelerator
    data = folded(data.drop(columns=["low", "high"]).assign(model=model), "speedup")
    return data.drop(columns=["model"], errors="ignore")


def rate_data(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """The points :func:`rate_chart` draws: ``column`` as ``rate``."""
    data = frame[["axis_value", column, "series", "variant"]].rename(columns={column: "rate"})
    return folded(_with_model(data, frame), "rate")[["axis_value", "rate", "series", "variant"]]


def memory_data(frame: pd.DataFrame) -> pd.DataFrame:
    """The points :func:`memory_chart` draws."""
    data = frame[["axis_value", "value", "metric", "series", "variant"]]
    return folded(data, "value", keys=("metric",))[list(data.columns)]


HEADLINE_COLUMNS = ("workload", "variant", "label", "series", "speedup", "low", "high")


def headline_data(frame: pd.DataFrame) -> pd.DataFrame:
    """The speedups :func:`headline_chart` draws: one per workload and accelerator, or, with
    many hosts, per workload and accelerator model over the hosts (:func:`folded`)."""
    data = frame[[c for c in HEADLINE_COLUMNS if c in frame]]
    if data["series"].nunique() <= MAX_SERIES and len(data) <= MAX_POINTS:
        return data
    model = frame["gpu_label"] if "gpu_label" in frame else None
    data = data.drop(columns=["low", "high"]).assign(model=model)
    return folded(data, "speedup", keys=("workload",)).drop(columns=["model"], errors="ignore")


def _with_model(data: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``data`` with the ``model`` that :func:`folded` groups by, when ``frame`` (result rows)
    has ``device_model``."""
    return data.assign(model=frame["device_model"]) if "device_model" in frame else data


def _case_tooltip(*extra: alt.Tooltip) -> list[alt.Tooltip]:
    """The tooltip of a chart of :func:`together`'s frame: the whole variant."""
    return [alt.Tooltip("series:N", title="device"), alt.Tooltip("case:N", title="variant"), *extra]


@unvalidated
def time_chart(frame: pd.DataFrame, axis: str, in_bytes: bool = False) -> alt.TopLevelMixin:
    """Median time per call against the axis, one line per host and device, with the 95% CI of
    the median as a band (folded over hosts, :func:`folded`, the band spans the hosts). Columns:
    axis_value, median_s, ci_low_s, ci_high_s, series, variant; ``device_model`` if present."""
    data, name = together(time_data(frame))
    x = axis_x(data, axis, in_bytes)
    y_scale = log_or_linear(pd.concat([data["ci_low_s"], data["ci_high_s"]]))
    lines = _lines(data, name)
    band = (
        _band(lines)
        .mark_area(opacity=0.2)
        .encode(x=x, y=alt.Y("ci_low_s:Q"), y2=alt.Y2("ci_high_s:Q"))
    )
    y = alt.Y(
        "median_s:Q",
        title="median time per call",
        scale=y_scale,
        axis=alt.Axis(labelExpr=tick_label("seconds")),
    )
    tooltip = _case_tooltip(
        alt.Tooltip("axis_value:Q", title=axis_title(axis)), alt.Tooltip("median_s:Q")
    )
    line, dots = _traced(x, y, lines, tooltip)
    return _facet(layer(band, line, dots, data=data, **_size(data)), data)


@unvalidated
def speedup_chart(
    frame: pd.DataFrame, crossings: pd.DataFrame, axis: str, in_bytes: bool = False
) -> alt.TopLevelMixin:
    """Accelerator speedup over the CPU (CPU time / accelerator time) against the axis, with its
    interval, a rule at 1× (break-even) and a dashed rule at each crossover inside the range.
    ``crossings`` comes from :attr:`benchsite.tables.Tables.crossovers`."""
    data, name = together(_with_crossovers(speedup_data(frame), crossings))
    x = axis_x(data, axis, in_bytes)
    y = alt.Y(
        "speedup:Q",
        title="speedup over the CPU (×)",
        scale=log_or_linear(pd.concat([data["low"], data["high"], pd.Series([1.0])])),
    )
    lines = _lines(data, name)
    band = _band(lines).mark_area(opacity=0.2).encode(x=x, y=alt.Y("low:Q"), y2=alt.Y2("high:Q"))
    tooltip = _case_tooltip(
        alt.Tooltip("axis_value:Q", title=axis_title(axis)), alt.Tooltip("speedup:Q")
    )
    line, dots = _traced(x, y, lines, tooltip)
    even = alt.Chart().mark_rule(color="gray").encode(y=alt.YDatum(1))
    cross = (
        alt.Chart()
        .mark_rule(strokeDash=[4, 3])
        .transform_filter("isValid(datum.crossover)")
        .encode(
            x=alt.X("crossover:Q"),
            color=lines["color"],
            tooltip=[alt.Tooltip("series:N"), alt.Tooltip("crossover:Q", format=".3~s")],
        )
    )
    layers = [band, line, even] + ([cross] if data["crossover"].notna().any() else []) + [dots]
    # an empty crossover layer makes Vega warn of an infinite extent
    return _facet(layer(*layers, data=data, **_size(data)), data)


def _with_crossovers(data: pd.DataFrame, crossings: pd.DataFrame) -> pd.DataFrame:
    """Add ``crossover`` on the first row of each (series, variant) that has one inside the
    measured range (null elsewhere), so that one data set feeds every layer and facet."""
    inside = crossings[crossings["where"] == "between"][["series", "variant", "crossover"]]
    merged = data.merge(inside, on=["series", "variant"], how="left")
    repeated = merged.duplicated(["series", "variant"])
    merged.loc[repeated, "crossover"] = None
    return merged


@unvalidated
def rate_chart(
    frame: pd.DataFrame, axis: str, column: str, unit: str, in_bytes: bool = False
) -> alt.TopLevelMixin:
    """Throughput (``column`` in ``unit``: TFLOP/s, GB/s or items/s, in the workload's item:
    images/s) against the axis; the unit is in the axis title."""
    data, name = together(rate_data(frame, column))
    y = alt.Y(
        "rate:Q",
        title=f"throughput ({unit})",
        scale=log_or_linear(data["rate"]),
        axis=alt.Axis(labelExpr=tick_label(unit)),
    )
    tooltip = _case_tooltip(
        alt.Tooltip("axis_value:Q", title=axis_title(axis)), alt.Tooltip("rate:Q", title=unit)
    )
    traced = _traced(axis_x(data, axis, in_bytes), y, _lines(data, name), tooltip)
    return _facet(layer(*traced, data=data, **_size(data)), data)


def byte_ticks(values: pd.Series) -> list[float]:
    """Ticks for an axis of bytes at binary steps (``256 MiB``, ``512 MiB``, …; powers of 4 on a
    log scale), so each reads as a round binary size."""
    positive = values[values > 0]
    if positive.empty:
        return []
    low, high = float(positive.min()), float(positive.max())
    if log_or_linear(values).type == "log":
        first, last = math.floor(math.log(low, 4)), math.ceil(math.log(high, 4))
        return [float(4**k) for k in range(first, last + 1)]
    step = 2.0 ** math.floor(math.log2(max(high / 4, 1.0)))
    return [step * k for k in range(int(high // step) + 2)]


@unvalidated
def memory_chart(frame: pd.DataFrame, axis: str, in_bytes: bool = False) -> alt.TopLevelMixin:
    """Peak memory against the axis, per device and memory metric (GPU allocated/reserved, CPU
    RSS above the worker's baseline). Columns: axis_value, value, metric, series, variant."""
    data = memory_data(frame)
    base = alt.Chart().encode(
        x=axis_x(data, axis, in_bytes),
        y=alt.Y(
            "value:Q",
            title="peak memory",
            scale=log_or_linear(data["value"]),
            axis=alt.Axis(labelExpr=tick_label("bytes"), values=byte_ticks(data["value"])),
        ),
        color=alt.Color("series:N", title="device"),
        tooltip=_tooltip(alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=".3~s")),
    )
    # the lines alone carry the dash style, so its legend draws each style as a dashed line
    # (with points on the lines too, it drew three identical dots)
    lines = base.mark_line().encode(
        strokeDash=alt.StrokeDash(
            "metric:N",
            title="metric",
            legend=alt.Legend(symbolType="stroke", symbolStrokeColor="#888", labelLimit=140),
        ),
        detail="metric:N",
    )
    dots = base.mark_point(filled=True, size=30)
    chart = layer(lines, dots, data=data, **_size(data))
    return _facet(chart, data)


@unvalidated
def headline_chart(frame: pd.DataFrame) -> alt.TopLevelMixin:
    """Speedup per workload (dot) with its interval (bar), one colour per accelerator, at the
    largest size measured on both. Columns: workload, variant, series, speedup, low, high; a
    ``label`` per row where given (else ``workload (variant)``)."""
    data = headline_data(frame)
    if "label" not in data:  # a page may name each case in words (``label``)
        data = data.assign(label=data["workload"] + " (" + data["variant"] + ")")
    scale = log_or_linear(pd.concat([data["low"], data["high"], pd.Series([1.0])]))
    # labels cut at Vega's usual 180 px (site charts show them whole): "workload (parameters)"
    # can be long, and on a phone the chart is all labels otherwise
    y = alt.Y("label:N", title=None, sort=None, axis=alt.Axis(labelLimit=180))
    base = alt.Chart().encode(y=y, color=alt.Color("series:N", title="device"))
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="speedup over the CPU (×)", scale=scale), x2=alt.X2("high:Q")
    )
    dots = base.mark_point(filled=True, size=60).encode(
        x=alt.X("speedup:Q"),
        tooltip=[
            *_tooltip(),
            alt.Tooltip("workload:N"),
            alt.Tooltip("speedup:Q", format=".3~g"),
            alt.Tooltip("low:Q", format=".3~g"),
            alt.Tooltip("high:Q", format=".3~g"),
        ],
    )
    even = alt.Chart().mark_rule(color="gray", strokeDash=[2, 2]).encode(x=alt.XDatum(1))
    height = max(60, 22 * data["label"].nunique())
    return layer(bars, dots, even, data=data, width=WIDTH, height=height)


@unvalidated
def runs_chart(frame: pd.DataFrame) -> alt.TopLevelMixin:
    """Every run over time, one row per host; point size is the number of cases and colour says
    whether any case failed. Columns: host, run_id, started, cases, failed."""
    started = frame["started"].dt.tz_convert("UTC")  # kept with its zone: read as UTC
    data = frame[["host", "run_id", "cases", "failed"]].assign(
        outcome=(frame["failed"] > 0).map({True: "some cases failed", False: "all cases ok"}),
        started=started,
        when=started.dt.strftime("%Y-%m-%d %H:%M UTC"),
    )
    height = max(60, 28 * data["host"].nunique())
    return (
        alt.Chart(data, width=WIDTH, height=height)
        .mark_circle(opacity=0.8)
        .encode(
            # a UTC scale, ticked on a 24-hour clock (Vega's default ticks are 12-hour,
            # without am/pm, in the reader's own time zone)
            x=alt.X(
                "started:T",
                title="started (UTC)",
                scale=alt.Scale(type="utc"),
                axis=alt.Axis(format="%b %d %H:%M", labelOverlap=True, tickCount=6),
            ),
            y=alt.Y("host:N", title=None),
            size=alt.Size(  # whole cases: no "0.5 cases" on the legend of one small run
                "cases:Q",
                title="cases",
                legend=alt.Legend(tickMinStep=1, labelExpr=tick_label("count")),
            ),
            color=alt.Color(
                "outcome:N",
                title=None,
                scale=alt.Scale(
                    domain=["all cases ok", "some cases failed"], range=["#2a9d8f", "#e76f51"]
                ),
            ),
            tooltip=[
                alt.Tooltip("host:N"),
                alt.Tooltip("run_id:N"),
                alt.Tooltip("when:N", title="started"),
                alt.Tooltip("cases:Q"),
                alt.Tooltip("failed:Q"),
            ],
        )
    )
