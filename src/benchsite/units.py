"""Human-readable numbers, shared by the terminal tables, every analysis and every page: the one
place a number becomes text (``docs/writing.md`` has the rules). Byte sizes are binary (``64 KiB``,
``1 GiB``), rates SI (``4.2 TB/s``, ``12 TFLOP/s``), counts whole with separators
(``1,160 items/s``), times with their unit written (``1.75 ms``); never scientific notation,
never ``-0%``, never ``1× faster``. A count per second is of what the workload declared one item
to be (:attr:`benchsite.records.Workload.item`, the column ``item_unit``): ``1,160 images/s``,
``46 tokens/s``, ``21.7 ms per token``; ``items/s`` where it declared nothing."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "BINARY_UNITS",
    "ITEM",
    "RATE_COLUMNS",
    "RATE_TEXTS",
    "SECONDS_SUFFIX",
    "SECOND_UNITS",
    "SHORT_BULLETS",
    "SI_PREFIXES",
    "SI_RATES",
    "faster_or_slower",
    "format_bytes",
    "format_count",
    "format_items_rate",
    "format_number",
    "format_per_item",
    "format_percent",
    "format_rate",
    "format_rate_in",
    "format_rate_of",
    "format_ratio",
    "format_seconds",
    "format_value",
    "is_item_noun",
    "item_of",
    "items_texts",
    "items_unit",
    "items_word",
    "metric_words",
    "natural_key",
    "number_texts",
    "param_words",
    "plain",
    "plain_texts",
    "plural",
    "rate_texts",
    "seconds_texts",
    "short_answer",
]

# (smallest size, scale, unit) of format_seconds, largest first
SECOND_UNITS = ((1.0, 1.0, "s"), (1e-3, 1e-3, "ms"), (1e-6, 1e-6, "µs"), (0.0, 1e-9, "ns"))
RATE_COLUMNS = ("tflops", "gbps", "items_per_s")  # format_rate_of's order: the first present


def format_seconds(seconds: float | None) -> str:
    """``0.000123`` → ``123 µs``; three significant digits."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    size = abs(seconds)
    _, scale, unit = next(entry for entry in SECOND_UNITS if size >= entry[0])
    return f"{plain(seconds / scale)} {unit}"


def seconds_texts(values: np.ndarray) -> np.ndarray:
    """:func:`format_seconds` of every value of a float array, the unit chosen a column at a
    time (a big store's case tables format 400,000 of them)."""
    out = np.full(len(values), "–", dtype=object)
    size, left = np.abs(values), np.isfinite(values)
    for threshold, scale, unit in SECOND_UNITS:
        here = left & (size >= threshold)
        out[here] = [f"{text} {unit}" for text in plain_texts(values[here] / scale)]
        left &= ~here
    return out


def plain_texts(values: np.ndarray, digits: int = 3) -> list[str]:
    """:func:`plain` of every value of a float array, each exponent found a column at a time
    (a big store's case tables hold hundreds of thousands of numbers)."""
    values = np.asarray(values, dtype=float)
    out = np.full(len(values), "0", dtype=object)
    out[~np.isfinite(values)] = "–"
    shown = np.flatnonzero(np.isfinite(values) & (np.abs(values) >= 1e-6))
    kept = values[shown]
    decimals = np.maximum(0, digits - 1 - _exponents(np.abs(kept)))
    for places in np.unique(decimals).tolist():
        at = decimals == places
        texts = [f"{value:.{places}f}" for value in kept[at].tolist()]
        if places:
            texts = [text.rstrip("0").rstrip(".") for text in texts]
        out[shown[at]] = [_no_minus_zero(text) for text in texts]
    return out.tolist()


def _exponents(sizes: np.ndarray) -> np.ndarray:
    """``math.floor(math.log10(size))`` of every (positive) size: numpy's log10, with the values
    next to a power of ten worked out by ``math`` (the two may differ in the last bit)."""
    logs = np.log10(sizes)
    exponents = np.floor(logs).astype(int)
    near = np.flatnonzero(np.abs(logs - np.round(logs)) < 1e-9)
    exponents[near] = [math.floor(math.log10(size)) for size in sizes[near].tolist()]
    return exponents


def _no_minus_zero(text: str) -> str:
    return "0" if text == "-0" else text


def format_number(value: float | None, unit: str = "") -> str:
    """``1.23e9, "B/s"`` → ``1.23 GB/s``; three significant digits, SI prefixes on a unit (a
    number without a unit is written whole: :func:`format_count`)."""
    if value is None or not math.isfinite(value):
        return "–"
    if not unit:
        return format_count(value)
    for prefix, scale in SI_PREFIXES:
        if abs(value) >= scale:
            return f"{plain(value / scale)} {prefix}{unit}"
    return f"{plain(value)} {unit}"


SI_PREFIXES = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))


def number_texts(values: np.ndarray, unit: str) -> np.ndarray:
    """:func:`format_number` of every value of a float array with a ``unit``, a prefix at a
    time."""
    out = np.full(len(values), "–", dtype=object)
    size, left = np.abs(values), np.isfinite(values)
    for prefix, scale in (*SI_PREFIXES, ("", 0.0)):
        here = left & (size >= scale)
        scaled = values[here] / scale if scale else values[here]
        out[here] = [f"{text} {prefix}{unit}" for text in plain_texts(scaled)]
        left &= ~here
    return out


def plain(value: float, digits: int = 3) -> str:
    """``digits`` significant digits in positional notation, never ``1e-05`` or ``-0``:
    ``0.00123``, ``12.3``, ``1230``; below a millionth, ``0``."""
    if not math.isfinite(value):
        return "–"
    if value == 0 or abs(value) < 1e-6:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"  # the same text as round(value, decimals) would give
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return _no_minus_zero(text)


def format_count(value: float | None) -> str:
    """A count or a unitless number: ``420``, ``1,160``, ``58,900``, ``5.4``; from ten million
    on in words (``12 million``, ``3.4 billion``); three significant digits."""
    if value is None or not math.isfinite(value):
        return "–"
    for word, scale in (("trillion", 1e12), ("billion", 1e9), ("million", 1e6)):
        if abs(value) >= 10 * scale or (abs(value) >= scale and scale > 1e6):
            return f"{plain(value / scale)} {word}"
    if float(value).is_integer() and abs(value) < 1e7:  # a size or a count: exact (1,024)
        return f"{int(value):,}"
    if abs(value) < 1000:
        return plain(value)
    return f"{round(value, 3 - len(str(int(abs(value))))):,.0f}"


BINARY_UNITS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def format_bytes(value: float | None) -> str:
    """A size in bytes, binary units: ``64 KiB``, ``1 GiB``, ``1.5 MiB``, ``512 B``."""
    if value is None or not math.isfinite(value):
        return "–"
    for unit, scale in BINARY_UNITS:  # from 1000 of a unit on, the next: 0.99 GiB, not 1017 MiB
        if abs(value) >= scale * 1000 / 1024:
            return f"{plain(value / scale)} {unit}"
    return f"{plain(value)} B"


def format_percent(share: float | None) -> str:
    """A share as a percentage: ``42%``, ``0.3%``, ``0%`` (never ``-0%``)."""
    if share is None or not math.isfinite(share):
        return "–"
    value = share * 100
    if abs(value) < 0.05:
        return "0%"
    return f"{plain(value, 2)}%" if abs(value) < 10 else f"{value:.0f}%"


def format_ratio(value: float | None) -> str:
    """``12×``, ``2.4×``, ``0.59×``: two significant digits below 10, whole above; a third
    where two would round a ratio that is not 1 to ``1×`` (``1.02×``: "the GPU wins … 1×"
    reads as a contradiction)."""
    if value is None or not math.isfinite(value):
        return "–"
    if value >= 10:
        return f"{value:.0f}×"
    text = plain(value, 2)
    return f"{plain(value, 3) if text == '1' else text}×"


def faster_or_slower(value: float | None) -> str:
    """A speed ratio (above 1 faster) in words: ``64× faster``, ``1.7× slower`` (never
    ``0.59× faster``), ``about as fast`` where two digits round it to 1×."""
    if value is None or not math.isfinite(value) or value <= 0:
        return "–"
    if plain(value, 2) == "1" or plain(1 / value, 2) == "1":  # within ~5%
        return "about as fast"
    return f"{format_ratio(value)} faster" if value > 1 else f"{format_ratio(1 / value)} slower"


def plural(count: float, word: str, many: str | None = None) -> str:
    """``1 thread``, ``2 threads``, ``1,200 cases``: a count with its noun in agreement."""
    return f"{format_count(count)} {word if count == 1 else many or word + 's'}"


def format_value(value: float | None, in_bytes: bool = False) -> str:
    """A parameter's value (a batch, a size): whole where it is whole, binary units where it
    counts bytes: ``256``, ``0.5``, ``8,192``, ``1 GiB``."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return format_bytes(value) if in_bytes else format_count(value)


def format_rate(row: Any) -> str:
    """The most telling throughput of a result row: TFLOP/s, else GB/s, else its items/s (in
    what its ``item_unit`` says one is: ``images/s``)."""
    values = (getattr(row, name, None) for name in RATE_COLUMNS)
    return format_rate_of(*values, item=getattr(row, "item_unit", None))


def format_rate_of(tflops: Any, gbps: Any, items: Any, item: Any = None) -> str:
    """:func:`format_rate` of a row's three throughput values and its ``item`` (:func:`rate_texts`
    of one row)."""
    columns = (
        np.array([float(value) if _present(value) else math.nan]) for value in (tflops, gbps, items)
    )
    return str(rate_texts(*columns, item=np.array([item], dtype=object))[0])


def rate_texts(
    tflops: np.ndarray, gbps: np.ndarray, items: np.ndarray, item: np.ndarray | None = None
) -> np.ndarray:
    """:func:`format_rate_of` of every row's three throughputs (float arrays, NaN where
    missing) and ``item`` (each row's stored item; ``None``: items), a column at a time."""
    out = np.full(len(tflops), "", dtype=object)
    left = np.ones(len(tflops), dtype=bool)
    nouns = np.full(len(tflops), None, dtype=object) if item is None else np.asarray(item, object)
    for values, texts in zip((tflops, gbps, items), RATE_TEXTS, strict=True):
        here = left & np.isfinite(values)
        out[here] = texts(values[here], nouns[here])
        left &= ~here
    return out


def items_texts(values: np.ndarray, item: np.ndarray) -> list[str]:
    """``1,160 images/s`` of every finite count per second of ``values``, each in its row's
    ``item`` (``None``: ``items/s``)."""
    return [
        f"{format_count(value)} {items_unit(noun)}"
        for value, noun in zip(values.tolist(), item.tolist(), strict=True)
    ]


# each throughput's texts, of a float array of finite values at once (and each row's item),
# with SI prefixes fitted to each value (``10.1 MFLOP/s``, never ``1.01e-05 TFLOP/s``)
RATE_TEXTS = (
    lambda values, item: number_texts(values * 1e12, "FLOP/s"),
    lambda values, item: number_texts(values * 1e9, "B/s"),
    items_texts,
)


# a stored rate's unit → (its scale to the SI unit, the SI unit): 5120 GB/s is 5.12 TB/s
SI_RATES = {"TFLOP/s": (1e12, "FLOP/s"), "GB/s": (1e9, "B/s"), "items/s": (1.0, "")}


def format_rate_in(value: float | None, unit: str) -> str:
    """A rate stored in ``unit`` (``TFLOP/s``, ``GB/s``, ``items/s``, ``images/s``) with the SI
    prefix that fits: ``4.2 TB/s``, ``50.7 TFLOP/s``, ``58,900 items/s``."""
    scale, si = SI_RATES.get(unit, (1.0, ""))
    if value is None or not math.isfinite(value):
        return "–"
    return format_number(value * scale, si) if si else f"{format_count(value)} {unit}"


# -- what one item is: a workload's declaration (Workload.item), stored in each row's ``item_unit``--

ITEM = "item"  # what a row counts whose workload declared nothing (and a row of schema 1 or 2)
_ITEM_NOUN = re.compile(r"^[a-z][a-z -]{0,38}[a-z]$")


def is_item_noun(text: object) -> bool:
    """Whether ``text`` can name one item: a singular noun in lower case (``image``,
    ``text sample``), 2 to 40 letters, spaces or hyphens."""
    return isinstance(text, str) and bool(_ITEM_NOUN.match(text))


def item_of(item: object) -> str:
    """A stored ``item`` as its noun: ``image``; ``item`` where none was declared (null)."""
    return item if isinstance(item, str) and item else ITEM


def items_word(item: object) -> str:
    """The plural of an item's noun: ``images``, ``sequences``, ``queries``, ``patches``;
    ``items`` where none was declared."""
    noun = item_of(item)
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def items_unit(item: object) -> str:
    """The unit of a count per second of ``item``: ``images/s``, ``tokens/s``, ``items/s``."""
    return f"{items_word(item)}/s"


def format_items_rate(value: float | None, item: object) -> str:
    """A count per second in its item's unit: ``1,160 images/s``, ``46 tokens/s``."""
    return format_rate_in(value, items_unit(item))


def format_per_item(seconds: float | None, item: object) -> str:
    """A time per item: ``21.7 ms per token``, ``1.2 s per image``."""
    return f"{format_seconds(seconds)} per {item_of(item)}"


# -- chart ticks: the same units, as Vega expressions of a tick's ``datum.value`` -------------------

COUNT_WORDS = (("billion", 1e9), ("million", 1e6))


def _ticks(steps: Iterable[tuple[str, float]], last: str, suffix: str = "") -> str:
    """A Vega expression: the first step whose scale the tick reaches, as ``12 unit``, else
    ``last``; ``suffix`` (a unit) after every one."""
    tail = f" + ' {suffix}'" if suffix else ""
    expression = last + tail
    for unit, scale in reversed(list(steps)):
        expression = (
            f"abs(datum.value) >= {scale!r} ? format(datum.value / {scale!r}, '.3~g') + "
            f"' {unit}'{tail} : {expression}"
        )
    return expression


def tick_label(kind: str) -> str:
    """A Vega ``labelExpr`` writing an axis tick in words with its unit, as the pages write the
    same numbers: ``seconds`` (``12 ms``), ``bytes`` (binary: ``1 GiB``), ``count``
    (``8,192``, ``100 million``), a stored rate's unit with SI prefixes (``GB/s`` →
    ``4.2 TB/s``) or any other unit after a count (``items/s`` → ``2 million items/s``)."""
    if kind == "seconds":
        steps = [(unit, scale) for scale, _, unit in SECOND_UNITS[:-1]]
        return _ticks(steps, "format(datum.value * 1e9, '.3~g') + ' ns'")
    if kind == "bytes":
        return _ticks(BINARY_UNITS, "format(datum.value, ',~r') + ' B'")
    scale, unit = SI_RATES.get(kind, (1.0, ""))
    if unit:
        steps = [(prefix + unit, size / scale) for prefix, size in SI_PREFIXES]
        return _ticks(steps, f"format(datum.value * {scale!r}, '.3~g') + ' {unit}'")
    return _ticks(COUNT_WORDS, "format(datum.value, ',~r')", "" if kind == "count" else kind)


def _present(value: Any) -> bool:
    return value is not None and isinstance(value, float | int) and math.isfinite(value)


# words for the tokens of a metric's name (`nvml.sm_clock_max_mhz`): acronyms and units
_METRIC_WORDS = {
    "gpu": "GPU",
    "cpu": "CPU",
    "rss": "RSS",
    "sm": "SM",
    "nvml": "NVML",
    "fsdp": "FSDP",
    "util": "utilisation",
    "algbw": "algorithm bandwidth",
    "busbw": "bus bandwidth",
    "usd": "USD",
    "kv": "KV",
    "ttft": "time to first token",
    "token": "time per token",
}
_METRIC_UNITS = {
    "j": "J",
    "w": "W",
    "c": "°C",
    "mhz": "MHz",
    "gbps": "GB/s",
    "bytes": "bytes",
}
SECONDS_SUFFIX = "_s"  # a metric in seconds: its value is written with its unit (124 ms)


def natural_key(text: object) -> tuple[tuple[int, int | str], ...]:
    """Sorts names as people count: ``host-2`` before ``host-10``, ``cuda:9`` before
    ``cuda:10`` (text parts as text, digit runs as numbers)."""
    parts = re.split(r"(\d+)", str(text))
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in parts if part)


def param_words(name: object) -> str:
    """A parameter's name as a reader says it: ``world_size`` → ``world size``."""
    return str(name).replace("_", " ")


def metric_words(name: str) -> str:
    """A collector metric's stored name as a reader reads it: ``nvml.sm_clock_max_mhz`` →
    ``NVML: SM clock max (MHz)``, ``memory.gpu_peak_reserved_bytes`` → ``memory: GPU peak
    reserved (bytes)``; a trailing unit goes in parentheses, except seconds, which the value
    carries (``ttft_s`` → ``time to first token``, its value ``124 ms``). Names are
    plugins' own, so the rule is generic: the collector before the dot, the words after it."""
    collector, _, rest = name.rpartition(".")
    tokens = [token for token in rest.split("_") if token]
    if len(tokens) > 1 and rest.endswith(SECONDS_SUFFIX):
        tokens = tokens[:-1]
    unit = _METRIC_UNITS.get(tokens[-1]) if len(tokens) > 1 else None
    words = " ".join(_METRIC_WORDS.get(token, token) for token in tokens[: -1 if unit else None])
    text = f"{words} ({unit})" if unit else words
    return f"{_METRIC_WORDS.get(collector, collector)}: {text}" if collector else text


SHORT_BULLETS = 8  # an answer shows this many bullets; the rest sit behind its "More"


def short_answer(lead: str, bullets: Iterable[str], more: str = "") -> tuple[str, str]:
    """(answer, explanation) of a finding, FAQ or claim (``docs/writing.md``): one leading sentence
    and at most :data:`SHORT_BULLETS` distinct bullets; the other bullets and ``more`` (how it was
    worked out) go to the explanation, which pages show behind a "More" disclosure."""
    lines = list(
        dict.fromkeys(
            line if line.startswith("- ") else f"- {line}" for line in bullets if line.strip()
        )
    )
    shown, rest = lines[:SHORT_BULLETS], lines[SHORT_BULLETS:]
    answer = lead + ("\n\n" + "\n".join(shown) if shown else "")
    extra = [*(["\n".join(rest)] if rest else []), *([more] if more else [])]
    return answer, "\n\n".join(extra)
