"""The one-screen answer: per workload and accelerator, its default variant, where the GPU
starts to win (kernel only and with host↔device copies) and the speedup at a realistic size.

The **default variant** of a workload is the one a reader means when they name it: plain
(every technique parameter at its baseline, :data:`PLAIN`: fp32, no pruning, no
``torch.compile``, no checkpointing, no channels_last, kernel only), and among those the
main sweep (the most measured sizes, then the largest). Only where a workload has no plain
variant does another stand in, and its name says which (``bf16``). A median over variants or a
pruned variant never answers for the workload.

The **realistic size** is the largest measured size of the default variant. A pair flagged
uncertain stands there with its widened interval and its ``uncertain`` codes (the page says
so); only a suspect pair (a number that cannot be right: a flag registered as suspect)
is passed over for the largest usable size, and ``largest_reasons`` says why (where every size
is suspect, ``speedup`` is NaN). A crossover resting on a suspect pair is kept with its
``…_reasons``: the page flags it. ``cpu_median_s`` and ``gpu_median_s`` are the two times at
the realistic size, ``cpu_items_per_s`` and ``gpu_items_per_s`` the two throughputs there, in
what ``item_unit`` says one item is (null: items). Hosts of :func:`benchsite.tables.inventory.small_hosts`
(a 2-core CI runner) answer only where no other host does.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from benchsite.tables.speedups import without

# technique parameters and their baseline: a variant with all of them there (or absent) is plain
PLAIN: dict[str, Any] = {
    "precision": "fp32",
    "dtype": "fp32",
    "sparsity": 0.0,
    "compile": False,
    "checkpointing": False,
    "channels_last": False,
    "include_transfer": False,
    "pinned": False,
}
COLUMNS = [
    "host",
    "device",
    "series",
    "gpu_label",
    "workload",
    "variant",
    "plain",
    "params",
    "axis",
    "at_size",
    "speedup",
    "low",
    "high",
    "cpu_row",
    "gpu_row",
    "cpu_label",
    "cpu_median_s",
    "gpu_median_s",
    "uncertain",
    "largest",
    "largest_reasons",
    "kernel_outcome",
    "kernel_from",
    "kernel_below",
    "kernel_reasons",
    "copies_outcome",
    "copies_from",
    "copies_below",
    "copies_reasons",
    "evidence",
    "item_unit",
    "cpu_items_per_s",
    "gpu_items_per_s",
]


def is_plain(params: dict[str, Any]) -> bool:
    """Every technique parameter of ``params`` at its baseline (or absent)."""
    return all(params.get(name, base) == base for name, base in PLAIN.items())


def answers(
    speedups: pd.DataFrame, crossovers: pd.DataFrame, small: frozenset[str] = frozenset()
) -> pd.DataFrame:
    """One row per (host, accelerator, workload) of the hosts that answer (see the module
    docstring), sorted by workload. Each is worked out on the pairs as records: as a data frame
    apiece, the 100 of ``benchmarks/site_build.py``'s store took ~0.7 s, as records ~0.1 s."""
    pairs = speedups[~speedups["include_transfer"].astype(bool) & speedups["speedup"].notna()]
    if pairs.empty:
        return pd.DataFrame(columns=COLUMNS)
    hosts = set(pairs["host"])
    pairs = pairs[~pairs["host"].isin(small)] if hosts - small else pairs
    keys = ["host", "device", "workload"]
    crossings: dict[Any, list[Any]] = {}
    for crossing in crossovers.itertuples(index=False):
        crossings.setdefault(tuple(getattr(crossing, key) for key in keys), []).append(crossing)
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for pair in pairs.itertuples(index=False):
        groups.setdefault((pair.host, pair.device, pair.workload), []).append(pair)
    out = [_answer(groups[key], crossings.get(key, [])) for key in sorted(groups)]
    table = pd.DataFrame(out, columns=COLUMNS)
    return table.sort_values(["workload", "host", "device"], kind="stable").reset_index(drop=True)


def default_variant(pairs: list[Any]) -> str:
    """The default variant of one workload's pairs on one accelerator (module docstring): among
    the plain pairs (all of them where none is), the variant measured at the most sizes, then
    at the largest; ties go to the first by name."""
    pool = [pair for pair in pairs if is_plain(pair.params)] or pairs
    sizes: dict[str, list[float]] = {}
    for pair in pool:
        sizes.setdefault(pair.variant, []).append(pair.axis_value)
    largest = {
        variant: max((v for v in values if v == v), default=math.nan)
        for variant, values in sizes.items()
    }
    return str(min(sorted(sizes), key=lambda v: (-len(sizes[v]), _nan_last(-largest[v]))))


def _answer(pairs: list[Any], crossovers: list[Any]) -> dict[str, Any]:
    """The answer of one (host, accelerator, workload)'s pairs (records of the speedups
    table); ``crossovers``: theirs."""
    variant = default_variant(pairs)
    mine = sorted(
        (pair for pair in pairs if pair.variant == variant),
        key=lambda pair: _nan_last(pair.axis_value),
    )
    usable = [pair for pair in mine if not pair.suspect]
    largest = mine[-1]
    chosen = usable[-1] if usable else largest
    passed_over = largest.row_id != chosen.row_id or not usable
    kernel, copies = _crossings(crossovers, chosen)
    return {
        "host": chosen.host,
        "device": chosen.device,
        "series": chosen.series,
        "gpu_label": chosen.gpu_label,
        "workload": chosen.workload,
        "variant": variant,
        "plain": is_plain(chosen.params),
        "params": chosen.params,
        "axis": chosen.axis,
        "at_size": chosen.axis_value,
        "speedup": chosen.speedup if usable else math.nan,
        "low": chosen.low,
        "high": chosen.high,
        "cpu_row": chosen.cpu_row,
        "gpu_row": chosen.gpu_row,
        "cpu_label": chosen.cpu_label,
        "cpu_median_s": chosen.cpu_median_s,
        "gpu_median_s": chosen.gpu_median_s,
        "uncertain": tuple(chosen.uncertain),
        "largest": largest.axis_value if passed_over else math.nan,
        "largest_reasons": tuple(largest.reasons) if passed_over else (),
        **_where(kernel, "kernel"),
        **_where(copies, "copies"),
        "evidence": tuple(pair.cpu_row for pair in mine) + tuple(pair.gpu_row for pair in mine),
        "item_unit": chosen.item_unit,
        "cpu_items_per_s": chosen.cpu_items_per_s,
        "gpu_items_per_s": chosen.gpu_items_per_s,
    }


def _nan_last(value: float) -> tuple[bool, float]:
    """A sort key putting smaller values first and NaN last (of ``-value``: larger first)."""
    return (value != value, value if value == value else 0.0)


def _crossings(crossovers: list[Any], pair: Any) -> tuple[Any, Any]:
    """The crossovers of ``pair``'s series without and with copies (``None`` where absent), among
    those of its host, device and workload."""
    key = without(pair.params, str(pair.axis), "include_transfer")
    found: dict[bool, Any] = {}
    for c in crossovers:
        if without(c.case_params, "include_transfer") == key:
            found[bool(c.include_transfer)] = c
    return found.get(False), found.get(True)


def _where(crossing: Any, prefix: str) -> dict[str, Any]:
    """``outcome``, ``from`` (the smallest measured size where the GPU wins from there on) and
    ``below`` (the largest where it does not) of one crossover."""
    if crossing is None:
        return {
            f"{prefix}_outcome": None,
            f"{prefix}_from": math.nan,
            f"{prefix}_below": math.nan,
            f"{prefix}_reasons": (),
        }
    start = {"crosses": crossing.above, "gpu-always": crossing.first}.get(crossing.outcome)
    return {
        f"{prefix}_outcome": crossing.outcome,
        f"{prefix}_from": start[0] if start else math.nan,
        f"{prefix}_below": crossing.below[0] if crossing.below else math.nan,
        f"{prefix}_reasons": tuple(crossing.reasons) if crossing.suspect else (),
    }
