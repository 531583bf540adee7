"""A chart made ready to embed: its Vega-Lite spec with the inline data rounded, that spec as
JSON text, and the file its static SVG goes to (named by a hash of the text, so an unchanged
chart keeps its name and is not drawn again).

Analyses turn their findings' Altair charts into :class:`ChartSpec` in their worker process
(:func:`benchsite.analysis.analyse`), so the build can start drawing their SVGs while pages
render, and pages that show the same finding do not rebuild its spec.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import altair as alt

CHART_FOLDER = "assets/charts"
# Vega measures every label to see whether it must be cut at its limit, then again to lay it
# out; measuring text is the costliest step of drawing a chart's SVG with vl-convert (~0.1 ms
# a character), so site charts show their labels and titles whole unless a chart sets a limit.
WHOLE_TEXT = {
    "axis": {"labelLimit": 0, "titleLimit": 0},
    "legend": {"labelLimit": 0, "titleLimit": 0},
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
    """The embeddable spec of an Altair chart (a :class:`ChartSpec` is returned as it is)."""
    if isinstance(chart, ChartSpec):
        return chart
    spec = _with_whole_text(_rounded(chart.to_dict(validate=False)))
    return ChartSpec(spec, json.dumps(spec, sort_keys=True, default=str))


def _rounded(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with its inline data rounded to 4 significant digits (more than a chart can
    show; it keeps pages small)."""
    for name, values in spec.get("datasets", {}).items():
        spec["datasets"][name] = [
            {key: float(f"{v:.4g}") if isinstance(v, float) else v for key, v in record.items()}
            if isinstance(record, dict)
            else record
            for record in values
        ]
    return spec


def _with_whole_text(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with :data:`WHOLE_TEXT` in its config, where the chart sets no other limit."""
    config = spec.setdefault("config", {})
    for part, limits in WHOLE_TEXT.items():
        for name, value in limits.items():
            config.setdefault(part, {}).setdefault(name, value)
    return spec
