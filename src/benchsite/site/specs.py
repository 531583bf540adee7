"""A chart made ready to embed: its Vega-Lite spec with the inline data rounded, that spec as
JSON text, and the file its static SVG goes to (named by a hash of the text, so an unchanged
chart keeps its name and is not drawn again).

Analyses turn their findings' Altair charts into :class:`ChartSpec` in their worker process
(:func:`benchsite.site.analyse.analyse`), so the build can start drawing their SVGs while pages
render, and pages that show the same finding do not rebuild its spec.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

CHART_FOLDER = "assets/charts"
SUBCHARTS = ("layer", "concat", "hconcat", "vconcat", "spec")  # where a chart holds others
# Site charts show axis labels and titles whole unless a chart sets a limit: nothing is cut
# short, and Vega need not measure each label against its limit (that was 15% of drawing an
# SVG with vl-convert 1.9; 2.0 draws as fast either way). Legends keep their limit: a long
# legend label would shrink the chart.
WHOLE_TEXT = {
    "axis": {"labelLimit": 0, "titleLimit": 0},
    "header": {"labelLimit": 0, "titleLimit": 0},
    "title": {"limit": 0},
}


@dataclass(frozen=True)
class ChartSpec:
    """``spec`` (the Vega-Lite dict) and ``text``, the same as JSON with sorted keys."""

    spec: dict[str, Any]
    text: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def svg(self) -> str:
        """Where its static SVG lives, relative to the site root."""
        return f"{CHART_FOLDER}/{self.digest[:16]}.svg"


def chart_spec(chart: alt.TopLevelMixin | ChartSpec) -> ChartSpec:
    """The embeddable spec of an Altair chart (a :class:`ChartSpec` is returned as it is).

    Altair's ``to_dict`` sanitizes and deep-copies every inline data frame, ~20 ms for a small
    chart; here each frame becomes records once (:func:`records`) and the chart is serialized
    with named datasets in their place (the frames are put back afterwards).
    """
    if isinstance(chart, ChartSpec):
        return chart
    try:
        spec, named = _with_named_data(chart)
    except (ValueError, TypeError):  # an encoding with no type, which Altair infers from the
        # frame itself (and finds a dataset's name instead); any other error recurs here
        spec, named = chart.to_dict(validate=False), {}
    datasets = {**_rounded(spec.pop("datasets", {})), **named}
    if datasets:
        spec["datasets"] = datasets
    spec = _with_whole_text(spec)
    return ChartSpec(spec, json.dumps(spec, sort_keys=True, default=str))


def _with_named_data(chart: alt.TopLevelMixin) -> tuple[dict[str, Any], dict[str, Any]]:
    """The chart's spec, serialized with every data frame swapped for a named dataset, and
    those datasets (name: records)."""
    datasets: dict[str, list[dict[str, Any]]] = {}
    swapped: list[tuple[Any, pd.DataFrame]] = []
    try:
        _name_frames(chart, datasets, swapped)
        spec = chart.to_dict(validate=False)
    finally:
        for part, frame in swapped:
            part.data = frame
    return spec, datasets


def _name_frames(part: Any, datasets: dict[str, Any], swapped: list[tuple[Any, Any]]) -> None:
    """Replace every data frame in the chart tree by a named dataset in ``datasets``."""
    data = getattr(part, "data", None)
    if isinstance(data, pd.DataFrame):
        values = records(data)
        digest = hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode())
        name = f"data-{digest.hexdigest()[:32]}"
        datasets[name] = values
        swapped.append((part, data))
        # a plain dict, as Altair writes it: an ``alt.NamedData`` would be checked against the
        # schema when made and probed as a data frame by ``to_dict`` (with it, the speedup
        # analysis' 100 charts made 8% more Python calls)
        part.data = {"name": name}
    for attribute in SUBCHARTS:
        children = getattr(part, attribute, None)
        for child in children if isinstance(children, list) else [children]:
            if hasattr(child, "to_dict"):
                _name_frames(child, datasets, swapped)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A data frame as JSON-ready records, as Altair writes them (NaN and infinities as null,
    times as ISO text), floats to 4 significant digits (more than a chart can show; it keeps
    pages small)."""
    columns = {str(name): _json_values(frame[name]) for name in frame.columns}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def _json_values(column: pd.Series) -> list[Any]:
    if pd.api.types.is_datetime64_any_dtype(column):
        return ["" if pd.isna(value) else value.isoformat() for value in column]
    if pd.api.types.is_float_dtype(column):  # most columns: :func:`_json_value` of each float
        values = column.to_numpy(dtype=float, na_value=np.nan)
        finite = np.isfinite(values).tolist()
        return [
            float(f"{v:.4g}") if ok else None for v, ok in zip(values.tolist(), finite, strict=True)
        ]
    return [_json_value(value) for value in column.astype(object).tolist()]


def _json_value(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.4g}") if math.isfinite(value) else None
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    return value


def _rounded(datasets: dict[str, Any]) -> dict[str, Any]:
    """Datasets a chart gave as records itself, their floats rounded as in :func:`records`."""
    return {
        name: [
            {key: _json_value(v) for key, v in record.items()}
            if isinstance(record, dict)
            else record
            for record in values
        ]
        for name, values in datasets.items()
    }


def _with_whole_text(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with :data:`WHOLE_TEXT` in its config, where the chart sets no other limit."""
    config = spec.setdefault("config", {})
    for part, limits in WHOLE_TEXT.items():
        for name, value in limits.items():
            config.setdefault(part, {}).setdefault(name, value)
    return spec
