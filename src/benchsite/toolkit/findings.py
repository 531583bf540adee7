"""Shared helpers of the built-in analyses: reading values out of rows, building
:class:`benchsite.Finding` records (answers that cite their rows, or say plainly that the store
cannot answer and what to run), and wording numbers.

Which rows count and every derived number (speedups, crossovers, scaling curves) are defined
once, in :mod:`benchsite.tables`; what is here only reads rows and words findings.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import operator
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Finding
from benchsite.records import (
    precision_of,
    without,
)
from benchsite.stats import HOST_BOUND_SHARE, host_bound
from benchsite.units import (  # noqa: F401 - short_answer: the analyses' import place
    SHORT_BULLETS,
    faster_or_slower,
    format_bytes,
    format_count,
    format_items_rate,
    format_percent,
    format_ratio,
    format_seconds,
    format_value,
    plural,
    short_answer,
)

if TYPE_CHECKING:
    from benchsite.tables import Tables

__all__ = [
    "ACCELERATOR_KINDS",
    "BOOLEAN_WORDS",
    "HOST_BOUND_SHARE",
    "PEAK_METRIC",
    "RUN_GPU",
    "TECHNIQUES",
    "UNCLEAR",
    "UNIT_SUFFIXES",
    "answered",
    "by_host",
    "bytes_text",
    "case_text",
    "case_words",
    "column_groups",
    "crossover_case",
    "declared_models",
    "decoded",
    "describe_crossover",
    "device_label",
    "device_labels",
    "device_words",
    "faster",
    "finding",
    "host_bound",
    "host_order",
    "info_value",
    "is_accelerator",
    "kind_of_workload",
    "left_out_text",
    "median_of",
    "memory_change",
    "memory_saved",
    "metric",
    "metric_value",
    "model_line",
    "model_words",
    "models_sentence",
    "not_measured",
    "number_text",
    "parameter_words",
    "percent",
    "plain",
    "precision_of",
    "rates_against",
    "ratio",
    "ratio_ci",
    "reasons_text",
    "rows_of",
    "scope",
    "seconds_text",
    "short_answer",
    "side_of",
    "slug",
    "speedup_summary",
    "speedups_of",
    "strength_of_ratio",
    "suspect_lines",
    "technique_label",
    "technique_table",
    "transfer_text",
    "transfers_sentence",
    "unanswered",
    "with_case",
    "without",
]

ACCELERATOR_KINDS = ("cuda", "mps")
# the memory collector's peak metric of each device kind
PEAK_METRIC = {"cpu": "memory.cpu_peak_rss_bytes", "cuda": "memory.gpu_peak_allocated_bytes"}
# technique parameter → (baseline value, what the technique is called)
TECHNIQUES = {
    "precision": ("fp32", "lower precision"),
    "pinned": (False, "pinned (page-locked) host memory"),
    "channels_last": (False, "channels_last memory format"),
    "checkpointing": (False, "gradient checkpointing"),
    "sparsity": (0.0, "magnitude pruning"),
    "compile": (False, "torch.compile"),
}


# -- reading rows --------------------------------------------------------------------------------


def decoded(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its JSON columns decoded into dict columns ``p`` (params), ``m``
    (metrics) and ``dev`` (device_info); a frame that has them (the rows of
    :class:`benchsite.tables.Tables`) is returned as it is."""
    if {"p", "m", "dev"} <= set(frame.columns):
        return frame
    out = frame.copy(deep=False)  # new columns only: the frame's own data is shared
    for column, target in (("params", "p"), ("metrics", "m"), ("device_info", "dev")):
        values = frame[column] if column in frame else pd.Series([None] * len(frame))
        out[target] = _load_each(values)
    return out


def _load_each(texts: Iterable[Any]) -> list[dict[str, Any]]:
    """:func:`_load` of every value; each distinct text is decoded once (a store repeats the
    same parameters and device info across runs), so rows with equal text share one dict."""
    from benchsite.tables import each_once  # the tables load with the analyses, not the run

    return each_once(texts, _load)


def _load(text: Any) -> dict[str, Any]:
    if isinstance(text, Mapping):
        return dict(text)
    if isinstance(text, str) and text:
        try:
            loaded = json.loads(text)
        except ValueError:
            return {}
        return loaded if isinstance(loaded, dict) else {}
    return {}


def column_groups(
    rows: pd.DataFrame, keys: list[str], columns: Iterable[str], order_by: str | None = None
) -> Iterator[dict[str, list[Any]]]:
    """The rows of each group of ``keys`` (in key order) as lists, one per column; sorted by
    ``order_by`` within the group (as ``sort_values`` sorts) or else in frame order. Slicing a
    frame per group costs about a millisecond: thousands of series or cases, seconds."""
    values = {name: rows[name].tolist() for name in columns}
    order = rows[order_by].to_numpy() if order_by else None
    for index in rows.groupby(keys, observed=True, sort=True).indices.values():
        if order is not None:
            index = index[order[index].argsort(kind="quicksort")]
        # itemgetter picks a group's values in C: a comprehension per column and group was
        # half a second over the 10,000 cases × 9 columns of the history analysis
        pick = operator.itemgetter(*index.tolist())
        if len(index) == 1:
            yield {name: [pick(column)] for name, column in values.items()}
        else:
            yield {name: list(pick(column)) for name, column in values.items()}


def is_accelerator(kind: Any) -> bool:
    """Whether a device kind is an accelerator (:data:`ACCELERATOR_KINDS`), not the CPU."""
    return str(kind) in ACCELERATOR_KINDS


def info_value(row: Any, key: str) -> Any:
    """A value from the row's device_info (``None`` when absent)."""
    return (row.dev or {}).get(key)


def metric(row: Any, key: str) -> float | None:
    """A numeric metric of the row, or ``None`` when missing or not a finite number."""
    return metric_value(row.m, key)


def metric_value(metrics: Mapping[str, Any] | None, key: str) -> float | None:
    """:func:`metric` of a row's decoded metrics dict."""
    value = (metrics or {}).get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def device_label(row: Any) -> str:
    """``NVIDIA H200 (cuda:0)``: the model when known, and the device name."""
    return device_words(getattr(row, "device_model", ""), row.device)


def device_labels(rows: pd.DataFrame) -> list[str]:
    """:func:`device_label` of every row of ``rows``, each model and device worded once (rows
    repeat a few devices)."""
    from benchsite.tables import each_once

    models = rows["device_model"] if "device_model" in rows else itertools.repeat("")
    pairs = zip(models, rows["device"], strict=False)  # models may repeat "" without end
    return each_once(pairs, lambda pair: device_words(*pair), tuple)


def device_words(model: Any, device: Any) -> str:
    """:func:`device_label` of a model (empty or missing when unknown) and device name."""
    model, name = str(model or ""), str(device)
    return f"{model} ({name})" if model and model != name else name


# -- building findings ---------------------------------------------------------------------------


def slug(*parts: Any) -> str:
    """A readable, stable id from parts: ``speedup-host-a-cuda-0-matmul``."""
    text = "-".join(str(part) for part in parts if part not in (None, ""))
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def finding(kind: str, key: Iterable[Any], title: str, answer: str, **fields: Any) -> Finding:
    """A :class:`Finding` of ``kind`` with an id built from ``kind`` and ``key``; evidence is
    turned into a sorted, de-duplicated tuple of row ids."""
    evidence = fields.pop("evidence", ())
    fields["evidence"] = tuple(sorted({str(row_id) for row_id in evidence}))
    fields["numbers"] = plain(fields.get("numbers", {}))
    return Finding(id=slug(kind, *key), kind=kind, title=title, answer=answer, **fields)


def plain(value: Any) -> Any:
    """``value`` with numpy scalars turned into Python numbers (findings are JSON-friendly)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def not_measured(kind: str, key: Iterable[Any], title: str, answer: str, **fields: Any) -> Finding:
    """A finding that cannot be backed by data: strength ``none``, no evidence, no numbers."""
    return finding(kind, key, title, answer, strength="none", **fields)


def strength_of_ratio(low: float, high: float, n_cases: int = 1) -> str:
    """How strong a ratio's evidence is: its CI clear of 1 (no difference) and several cases."""
    clear = low > 1.05 or high < 0.95
    if clear and n_cases >= 3:
        return "strong"
    return "moderate" if clear else "weak"


def scope(rows: Iterable[Any]) -> dict[str, list[str]]:
    """Which hosts, devices and workloads a set of rows covers."""
    rows = list(rows)
    return {
        "hosts": sorted({str(row.host) for row in rows}),
        "devices": sorted({device_label(row) for row in rows}),
        "workloads": sorted({str(row.workload) for row in rows}),
    }


# -- formatting ----------------------------------------------------------------------------------


def ratio(value: float) -> str:
    """``12×``, ``2.4×``: :func:`benchsite.units.format_ratio`."""
    return format_ratio(value)


def ratio_ci(value: float, low: float, high: float) -> str:
    """``80× (95% CI 75–85×)``."""
    return f"{ratio(value)} (95% CI {ratio(low).rstrip('×')}–{ratio(high)})"


def faster(value: float) -> str:
    """A speedup in words: ``64× faster``, below 1 ``2× slower``, ``about as fast`` at 1×."""
    return faster_or_slower(value)


def side_of(low: float, high: float) -> str:
    """Which side of 1× a ratio's 95% interval lies on: ``faster`` (all above), ``slower``
    (all below) or ``unclear`` (it includes 1×, or is not known). The one rule by which a
    faster-or-slower verdict leaves a pair out: its uncertainty makes it uninformative there."""
    if low == low and low > 1:
        return "faster"
    if high == high and high < 1:
        return "slower"
    return "unclear"


UNCLEAR = "their 95% interval includes 1×, so they say neither faster nor slower"


def left_out_text(count: int, total: int) -> str:
    """``Left out: 2 of 10 cases, their 95% interval includes 1× …`` (empty where none is)."""
    if not count:
        return ""
    return f"Left out: {count} of {plural(total, 'case')}, {UNCLEAR}."


def median_of(values: Iterable[float]) -> float:
    """The median (the mean of the middle two of an even count), NaN of none."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def suspect_lines(pairs: pd.DataFrame, in_bytes: bool = False) -> list[str]:
    """One line per suspect pair of a speedup table (:attr:`benchsite.tables.Tables.speedups`):
    its case (a ``size`` in bytes where ``in_bytes``), its speedup and why it is not
    headlined."""
    suspect = pairs["suspect"].to_numpy(bool)
    if not suspect.any():  # most pairs: no frame taken apart (~4 ms a workload's pairs)
        return []
    return [
        f"- Suspect, not used above — {case_text(row.params, in_bytes=in_bytes)}: "
        f"{ratio_ci(row.speedup, row.low, row.high)} ({reasons_text(row.reasons)})."
        for row in pairs[suspect].itertuples()
    ]


def reasons_text(reasons: Iterable[str]) -> str:
    """``flagged noisy, unstable``: why a row or pair is suspect."""
    return "flagged " + ", ".join(reasons)


def crossover_case(c: Any, in_bytes: bool = False) -> str:
    """A crossover's case in words, without the swept value and the copies: ``bf16``."""
    return case_text(c.case_params, skip=[str(c.axis), "include_transfer"], in_bytes=in_bytes)


def describe_crossover(c: Any, in_bytes: bool = False) -> str:
    """One sentence: where the GPU wins in one series (a row of
    :attr:`benchsite.tables.Tables.crossovers`), in measured sizes (an interpolated
    "size ≈ 27" is no size anyone ran); ``in_bytes``: its size counts bytes."""
    copies = " including host↔device copies" if c.include_transfer else ""
    where = f"{with_case(c.workload, crossover_case(c, in_bytes))} on the {c.gpu_label}{copies}"
    value = functools.partial(number_text, in_bytes=in_bytes and c.axis == "size")
    if c.outcome == "gpu-always":
        return (
            f"{where}: the GPU wins at every measured {c.axis}, from the smallest "
            f"({value(c.first[0])}: {ratio(c.first[1])})."
        )
    if c.outcome == "cpu-always":
        return (
            f"{where}: the CPU wins at every measured {c.axis}, up to the largest "
            f"({value(c.last[0])}: the GPU is {faster(c.last[1])})."
        )
    return (
        f"{where}: the GPU wins from {c.axis} {value(c.above[0])} on ({ratio(c.above[1])}); "
        f"at {value(c.below[0])} the CPU is as fast or faster."
    )


def percent(value: float) -> str:
    """A share in words (:func:`benchsite.units.format_percent`): ``0.25`` → ``25%``."""
    return format_percent(value)


BOOLEAN_WORDS = {
    "include_transfer": ("with copies", "without copies"),
    "pinned": ("pinned", "pageable"),
    "channels_last": ("channels_last", "contiguous"),
    "checkpointing": ("checkpointing", "no checkpointing"),
    "compile": ("compiled", "eager"),
}


def case_text(params: Mapping[str, Any], skip: Iterable[str] = (), in_bytes: bool = False) -> str:
    """``batch 64, fp32`` — a case's parameters in words, for titles and answers; with
    ``in_bytes`` its ``size`` counts bytes (``size 64 KiB``)."""
    parts = []
    skip = set(skip)
    for name, value in sorted(params.items()):
        if name in skip:
            continue
        if isinstance(value, bool):
            yes, no = BOOLEAN_WORDS.get(name, (name.replace("_", " "), f"no {name}"))
            parts.append(yes if value else no)
        elif name in ("precision", "dtype", "op", "direction", "model", "scaling"):
            parts.append(str(value))
        else:
            parts.append(parameter_words(name, value, in_bytes and name == "size"))
    return ", ".join(parts)


# a parameter's unit named by its suffix: cpu_memory_budget_gib=8 reads "cpu memory budget 8 GiB"
UNIT_SUFFIXES = {"_gib": "GiB", "_mib": "MiB", "_kib": "KiB"}


def parameter_words(name: str, value: Any, in_bytes: bool = False) -> str:
    """``image size 224``, ``size 1 GiB``, ``cpu memory budget 8 GiB``."""
    suffix = next((s for s in UNIT_SUFFIXES if name.endswith(s)), "")
    words = name.removesuffix(suffix).replace("_", " ")
    unit = f" {UNIT_SUFFIXES[suffix]}" if suffix else ""
    return f"{words} {number_text(value, in_bytes)}{unit}"


def number_text(value: Any, in_bytes: bool = False) -> str:
    """A parameter value for prose: ``27``, ``0.5``, ``8,192``; a size that counts bytes in
    binary units (``1 GiB``): :func:`benchsite.units.format_value`."""
    return format_value(value, in_bytes)


def with_case(workload: str, case: str) -> str:
    """``mlp-train (fp32)``, or just ``mlp-train`` when the case has nothing else to say."""
    return f"{workload} ({case})" if case else workload


def transfer_text(params: Mapping[str, Any]) -> str:
    """Whether a GPU time includes host↔device copies, in words."""
    if params.get("include_transfer"):
        return "GPU time includes copying inputs to the GPU and the result back"
    return "host↔device transfers not included (data already on the device)"


def bytes_text(value: float | None) -> str:
    """A byte count in words (:func:`benchsite.units.format_bytes`): ``1.5 GiB``."""
    return format_bytes(value)


def model_words(parameters: float) -> str:
    """A model's size in words, with its unit: ``a model of 1.2 billion parameters``."""
    return f"a model of {format_count(parameters)} parameters"


def seconds_text(value: float | None) -> str:
    """A duration in words (:func:`benchsite.units.format_seconds`): ``12.3 ms``."""
    return format_seconds(value)


# -- techniques ----------------------------------------------------------------------------------


def technique_table(tables: Tables, technique: str) -> pd.DataFrame:
    """The effects of ``technique`` (a key of :data:`TECHNIQUES`) against its baseline; a
    lower precision's also held against the device's peak rates (``beyond-peak-ratio``)."""
    if technique == "precision":
        return tables.precision_gains
    return tables.effects(technique, TECHNIQUES[technique][0])


def technique_label(technique: str, value: Any) -> str:
    """``bf16 instead of fp32``, ``torch.compile``."""
    baseline, name = TECHNIQUES[technique]
    if technique == "precision":
        return f"{value} instead of {baseline}"
    if technique == "sparsity":
        return f"{name} to {float(value) * 100:.0f}% sparsity"
    return name


def memory_saved(item: Any) -> float | None:
    """The share of the baseline's peak memory an effect (a row of the effects table) saves."""
    key = PEAK_METRIC.get(str(item.device_kind), "")
    before, after = metric_value(item.baseline_m, key), metric_value(item.m, key)
    return 1 - after / before if before and after is not None else None


def memory_change(saved: float) -> str:
    """A share of peak memory saved, in words: ``falls by 46%``, ``grows by 6%``, ``stays the
    same`` (never ``changes by -0%``)."""
    if percent(saved) == "0%":
        return "stays the same"
    return f"falls by {percent(saved)}" if saved > 0 else f"grows by {percent(-saved)}"


def case_words(key: str, in_bytes: bool = False) -> str:
    """An effect's ``case`` key (JSON of the other parameters) in words."""
    return case_text(json.loads(key), in_bytes=in_bytes) or "default"


# -- answers: FAQ, recommendations, claims ------------------------------------------------------

RUN_GPU = (
    "Run `benchsite run` on a machine with a CUDA GPU (or Apple MPS) into this store and "
    "rebuild the site."
)


def answered(
    kind: str, key: str, title: str, answer: str, evidence: Iterable[str], **fields: Any
) -> Any:
    """A FAQ/recommendation/claim finding backed by rows (evidence must not be empty)."""
    evidence = list(evidence)
    assert evidence, f"{kind} {key} states a measured answer without evidence"
    return finding(kind, [key], title, answer, evidence=evidence, **fields)


def unanswered(kind: str, key: str, title: str, why: str, what_to_run: str, **fields: Any) -> Any:
    """A finding the store cannot back: says why and what to run; rendered "not measured"."""
    return not_measured(kind, [key], title, f"{why} {what_to_run}".strip(), **fields)


def speedups_of(tables: Tables, kind: str | None = None) -> pd.DataFrame:
    """The usable pairs of the speedup table (every measured pair but a suspect one, whose
    number cannot be right; a pair flagged uncertain is in, with its widened interval),
    optionally only ``training`` or ``inference`` workloads."""
    table = tables.speedups
    table = table[~table["suspect"].astype(bool)]
    if kind is None or table.empty:
        return table
    return table[table["workload"].map(kind_of_workload) == kind]


def kind_of_workload(name: str) -> str:
    """``training``, ``inference`` or ``other`` from the workload name's suffix (``-generate``,
    a language model's generation, is inference)."""
    if name.endswith("-train") or name.startswith("ddp-"):
        return "training"
    if name.endswith(("-infer", "-generate")):
        return "inference"
    return "other"


def speedup_summary(table: pd.DataFrame) -> tuple[str, list[str]]:
    """(one sentence, bullet lines) summarising speedups per GPU: range, median, best case."""
    sentences, lines = [], []
    for label, group in table.groupby("gpu_label", sort=True):
        best = group.loc[group["speedup"].idxmax()]
        worst = group.loc[group["speedup"].idxmin()]
        median = median_of(group["speedup"])
        sentences.append(
            f"the {label} is {ratio(worst.speedup)} to {ratio(best.speedup)} as fast as the "
            f"CPU (median {ratio(median)} over {len(group)} cases)"
        )
        lines.append(
            f"- {label}: best {best.workload} ({case_text(best.params)}) at "
            f"{ratio_ci(best.speedup, best.low, best.high)}; worst {worst.workload} "
            f"({case_text(worst.params)}) at {ratio_ci(worst.speedup, worst.low, worst.high)}."
        )
    lines.append(
        f"- Precisions compared: {', '.join(sorted(set(table['precision'])))} (the same "
        "on both devices in each pair); " + transfers_sentence(table) + "."
    )
    return "; ".join(sentences), lines


def declared_models(table: pd.DataFrame) -> pd.DataFrame:
    """The pairs of a speedups or answers table whose workload declared what one item is
    (:attr:`benchsite.records.Workload.item`: the well-known architectures, LLM generation, a
    user's ``--model``, any plugin's that says): the models whose answers read in their own
    units. Pairs of an unusable speedup (NaN) are left out."""
    if "item_unit" not in table or table.empty:
        return table.iloc[0:0]
    return table[table["item_unit"].notna() & table["speedup"].notna()]


def model_line(row: Any) -> str:
    """``resnet50-train (batch 128, fp32): 1,230 images/s on the NVIDIA H200 (cuda:0) against
    21.5 images/s on the AMD EPYC (cpu), 57× (95% CI 50–61×) as fast``: one pair of a
    :func:`declared_models` table in its item's unit."""
    return (
        f"{row.workload} ({case_text(row.params)}): "
        f"{format_items_rate(row.gpu_items_per_s, row.item_unit)} on the {row.gpu_label} against "
        f"{format_items_rate(row.cpu_items_per_s, row.item_unit)} on the {row.cpu_label}, "
        f"{ratio_ci(row.speedup, row.low, row.high)} as fast"
    )


def rates_against(row: Any) -> str:
    """``1,230 images/s against 21.5 images/s``: a pair's accelerator and CPU throughput (of a
    speedups or answers table) in its item's unit; "" where its workload counts no items."""
    gpu, cpu = row.gpu_items_per_s, row.cpu_items_per_s
    if not (gpu == gpu and cpu == cpu) or gpu is None or cpu is None:
        return ""
    return (
        f"{format_items_rate(gpu, row.item_unit)} against {format_items_rate(cpu, row.item_unit)}"
    )


def models_sentence(table: pd.DataFrame) -> str:
    """``the GPU is 3.1× (bert-base-infer) to 57× (resnet50-train) as fast as the CPU on the
    models measured in their own units (bert-base-infer, resnet50-train)``: the span of a
    :func:`declared_models` table ("" where it is empty)."""
    if table.empty:
        return ""
    low, high = table.loc[table["speedup"].idxmin()], table.loc[table["speedup"].idxmax()]
    names = ", ".join(sorted(set(table["workload"].astype(str))))
    span = (
        f"{ratio(high.speedup)} ({high.workload})"
        if len(table) == 1
        else f"{ratio(high.speedup)} in each"
        if ratio(low.speedup) == ratio(high.speedup)
        else f"{ratio(low.speedup)} ({low.workload}) to {ratio(high.speedup)} ({high.workload})"
    )
    return (
        f"the GPU is {span} as fast as the CPU on the models measured in their own units ({names})"
    )


def transfers_sentence(table: pd.DataFrame) -> str:
    """Whether the GPU times of ``table`` (its ``include_transfer`` column) include the
    host↔device copies, in one sentence."""
    values = set(table["include_transfer"])
    if values == {False}:
        return "GPU times exclude host↔device copies (data already on the GPU)"
    if values == {True}:
        return "GPU times include host↔device copies"
    return "cases with host↔device copies in the GPU time are counted separately"


def rows_of(table: pd.DataFrame) -> list[str]:
    """The CPU and GPU row ids of a speedup table."""
    return list(table["cpu_row"]) + list(table["gpu_row"])


def host_order(tables: Tables) -> dict[str, int]:
    """Each host's place when answers list hosts: the main hosts first, small or CI hosts
    (:attr:`benchsite.tables.Tables.small_hosts`) last."""
    hosts = sorted(tables.ok["host"].astype(str).unique()) if not tables.ok.empty else []
    small = tables.small_hosts
    return {host: index + (len(hosts) if host in small else 0) for index, host in enumerate(hosts)}


def by_host(findings: list[Finding], order: Mapping[str, int]) -> list[Finding]:
    """``findings`` with those of the main hosts first (stable otherwise)."""

    def place(f: Finding) -> int:
        return min((order.get(h, len(order)) for h in f.scope.get("hosts", [])), default=0)

    return sorted(findings, key=place)
