"""Drawing a chart's static SVG with vl-convert: :func:`draw`, which a build runs in a pool
of worker processes (:func:`benchsite.site.assets.draw_missing`), and
``python -m benchsite.site.chart_svg --bundle FILE``, the process that writes the Vega bundle there.

vl-convert draws in one JavaScript runtime per process and holds the GIL while it does, hence
processes. The module imports vl-convert and nothing heavy (pandas, Altair).

Charts that differ only in their data are compiled from Vega-Lite to Vega once
(:func:`vega_spec`): a build's charts come in a few shapes (the benchmark store's 144 in 8),
and compiling took a fifth of the drawing time.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import vl_convert

from benchsite._infra import atomic

DATA_KEYS = ("data", "datasets", "values")
# each shape of chart compiled to Vega (see vega_spec): at most a few dozen in a build
_COMPILED: dict[str, dict[str, Any]] = {}


def static(spec: Any) -> dict[str, Any]:
    """The chart as a picture: without its tooltips (nothing to hover in an image) and without
    Vega's ARIA labels (a page shows the SVG through ``<img>``, which exposes only its ``alt``
    text, the chart's description). The same pixels (compared on the 144 charts of
    ``benchmarks/site_build.py``'s site), ~28% smaller files, a little less drawing."""
    _drop_tooltips(spec)
    spec.setdefault("config", {})["aria"] = False
    return spec


def _drop_tooltips(part: Any) -> None:
    if isinstance(part, dict):
        part.pop("tooltip", None)  # on a mark ({"tooltip": true}) or in an encoding
        for key, value in part.items():
            if key not in DATA_KEYS:  # a data column may be called "tooltip"
                _drop_tooltips(value)
    elif isinstance(part, list):
        for value in part:
            _drop_tooltips(value)


def vega_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The Vega-Lite ``spec`` compiled to Vega, the compiled form reused for charts that
    differ only in their data: Vega-Lite's compiler copies named datasets into the Vega spec as
    they are, without reading them, so a chart's Vega spec is the compiled one of the first
    chart of its shape with its own datasets put in (the same SVG as compiling each, checked on
    every chart of the benchmark's and the example's sites). Datasets are renamed by their order
    first: their names hash their data, and charts of one shape must match."""
    spec = _renamed(spec, {name: f"data-{n}" for n, name in enumerate(spec.get("datasets", {}))})
    datasets = spec.pop("datasets", {})
    shape = json.dumps(spec, sort_keys=True)
    compiled = _COMPILED.get(shape)
    if compiled is None:
        compiled = _COMPILED[shape] = vl_convert.vegalite_to_vega({**spec, "datasets": datasets})
    data = [
        {**entry, "values": datasets[entry["name"]]} if entry.get("name") in datasets else entry
        for entry in compiled.get("data", [])
    ]
    return {**compiled, "data": data}


def _renamed(part: Any, names: dict[str, str]) -> Any:
    """``part`` with each dataset renamed as ``names`` says: the keys of ``datasets`` and every
    ``"data": {"name": …}`` that refers to one (a layer's data, a lookup's ``from``)."""
    if isinstance(part, list):
        return [_renamed(value, names) for value in part]
    if not isinstance(part, dict):
        return part
    renamed = {}
    for key, value in part.items():
        if key == "datasets":
            renamed[key] = {names.get(name, name): values for name, values in value.items()}
        elif key == "values":  # inline data (or an axis' values): nothing to rename in there
            renamed[key] = value
        elif key == "data" and isinstance(value, dict) and value.get("name") in names:
            renamed[key] = {**value, "name": names[value["name"]]}
        else:
            renamed[key] = _renamed(value, names)
    return renamed


def draw(target: Path, spec_json: str) -> float | str:
    """Draw one chart into ``target``: the seconds it took, or why it could not be drawn."""
    started = time.perf_counter()
    try:
        svg = vl_convert.vega_to_svg(vega_spec(static(json.loads(spec_json))))
        atomic.write_text(target, svg)
    except Exception as exc:  # noqa: BLE001 - a chart that cannot be drawn is reported, not fatal here
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return " ".join(lines[:2])  # what failed and why, not the JavaScript stack
    return time.perf_counter() - started


def main() -> None:
    """``--bundle FILE``: write the Vega bundle there (Ctrl-C ends it with the build)."""
    if sys.argv[1:2] != ["--bundle"] or len(sys.argv) != 3:
        sys.exit("usage: python -m benchsite.site.chart_svg --bundle FILE")
    atomic.write_text(Path(sys.argv[2]), vl_convert.javascript_bundle())


if __name__ == "__main__":
    main()
