"""What ``benchsite workloads``, ``devices`` and ``plugins`` print: one line per item that fits
the terminal (and stays one line when piped), the details of one item on request, and plain
data for ``--json``.

Each ``*_rows`` function gives the items as dicts (the ``--json`` output); :func:`summary_lines`
lays such rows out as aligned columns, cutting only the last column (a description) to the
width; :func:`detail_lines` shows one row as ``key: value`` lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from benchsite.errors import SelectionError
from benchsite.host import registry
from benchsite.host.manager import Plugins
from benchsite.measure.runner import DEFAULT_TIMEOUT_S
from benchsite.records import Workload


def workload_rows(plugins: Plugins) -> list[dict[str, Any]]:
    """Every workload: name, plugin, description, devices, axis, tags, timeout, both grids."""
    return [
        _workload_row(name, registered.plugin, registered.item)
        for name, registered in sorted(registry.workloads(plugins).items())
    ]


def _workload_row(name: str, plugin: str, item: Workload) -> dict[str, Any]:
    return {
        "name": name,
        "plugin": plugin,
        "description": item.description,
        "devices": list(item.devices),
        "axis": item.axis,
        "tags": list(item.tags),
        "timeout_s": item.timeout_s or DEFAULT_TIMEOUT_S,
        "distributed": item.distributed,
        "quick_cases": len(item.grid("quick")),
        "full_cases": len(item.grid("full")),
        "quick": _grid(item.quick if item.quick is not None else item.params),
        "full": _grid(item.params),
    }


def _grid(grid: object) -> list[dict[str, list[Any]]]:
    parts = [grid] if isinstance(grid, Mapping) else grid
    return [{key: list(values) for key, values in part.items()} for part in parts]  # type: ignore[union-attr]


def device_rows(plugins: Plugins) -> list[dict[str, Any]]:
    """Every device found: name, kind, model, fingerprint and everything captured."""
    return [
        {
            "name": name,
            "kind": registered.item.kind,
            "model": str(registered.item.info.get("model", "")),
            "fingerprint": registered.item.fingerprint,
            "plugin": registered.plugin,
            "info": dict(registered.item.info),
        }
        for name, registered in registry.devices(plugins).items()
    ]


def plugin_rows(plugins: Plugins) -> list[dict[str, Any]]:
    """Every plugin found: name, where from, version, hooks and its ``error`` (``None`` when it
    loaded and registered cleanly: :attr:`PluginInfo.error`, loading it or any record it
    registers; every ``register_*`` hook is called here)."""
    registry.register_all(plugins)
    return [
        {
            "name": info.name,
            "source": info.source,
            "version": info.version,
            "hooks": list(info.hooks),
            "error": info.error,
        }
        for info in plugins.infos.values()
    ]


SUMMARY_COLUMNS = {
    "workloads": lambda row: [
        row["name"],
        f"{row['quick_cases']}/{row['full_cases']} cases",
        ",".join(row["devices"]),
        row["description"],
    ],
    "devices": lambda row: [row["name"], row["kind"], row["model"]],
    "plugins": lambda row: [
        row["name"],
        row["version"],
        row["source"],
        f"error: {row['error']}" if row["error"] else ", ".join(row["hooks"]) or "no hooks",
    ],
}


def summary_lines(kind: str, rows: Sequence[dict[str, Any]], width: int | None) -> list[str]:
    """One line per row of ``kind``: aligned columns, the last one cut to ``width`` (with …)
    when ``width`` is given (a terminal), whole otherwise (a pipe)."""
    lines = aligned([[str(cell) for cell in SUMMARY_COLUMNS[kind](row)] for row in rows])
    return [_cut(line, width) for line in lines] if width else lines


def aligned(cells: Sequence[Sequence[str]]) -> list[str]:
    """Lines of cells, every column but the last padded to its widest cell, two spaces apart."""
    if not cells:
        return []
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]) - 1)]
    return [
        "  ".join(
            [*(cell.ljust(w) for cell, w in zip(line, widths, strict=False)), line[-1]]
        ).rstrip()
        for line in cells
    ]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def detail_lines(row: Mapping[str, Any]) -> list[str]:
    """One item in full, a ``key: value`` line each (grids one part a line)."""
    lines = []
    for key, value in row.items():
        if key in ("quick", "full"):
            count = row[f"{key}_cases"]
            lines.append(f"{key} grid ({count} cases):")
            lines += [f"  {_params(part)}" for part in value]
        elif key == "error" and value is None:  # a plugin that loaded cleanly
            continue
        elif key == "info":
            lines += [f"{name}: {_plain(item)}" for name, item in value.items()]
        elif not key.endswith("_cases"):
            lines.append(f"{key}: {_plain(value)}")
    return lines


def _params(part: Mapping[str, list[Any]]) -> str:
    return "  ".join(f"{key}={', '.join(map(str, values))}" for key, values in part.items())


def _plain(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value)) or "–"
    if isinstance(value, Mapping):
        return json.dumps(value, default=str)
    return "–" if value is None else str(value)


def pick(kind: str, rows: Sequence[dict[str, Any]], name: str) -> dict[str, Any]:
    """The row named ``name``, or a :class:`SelectionError` listing what there is."""
    for row in rows:
        if row["name"] == name:
            return row
    names = ", ".join(row["name"] for row in rows)
    raise SelectionError(f"no {kind[:-1]} named {name!r}; there are: {names}")


def as_json(rows: Any) -> str:
    return json.dumps(rows, indent=2, default=str)
