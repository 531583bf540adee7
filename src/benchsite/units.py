"""Human-readable numbers, shared by the terminal tables and the site."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# (smallest size, scale, unit) of format_seconds, largest first
SECOND_UNITS = ((1.0, 1.0, "s"), (1e-3, 1e-3, "ms"), (1e-6, 1e-6, "µs"), (0.0, 1e-9, "ns"))
RATE_COLUMNS = ("tflops", "gbps", "items_per_s")  # format_rate_of's order: the first present


def format_seconds(seconds: float | None) -> str:
    """``0.000123`` → ``123 µs``; three significant digits."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    size = abs(seconds)
    _, scale, unit = next(entry for entry in SECOND_UNITS if size >= entry[0])
    return f"{seconds / scale:.3g} {unit}"


def seconds_texts(values: np.ndarray) -> np.ndarray:
    """:func:`format_seconds` of every value of a float array, the unit chosen a column at a
    time (a big store's case tables format 400,000 of them)."""
    out = np.full(len(values), "–", dtype=object)
    size, left = np.abs(values), np.isfinite(values)
    for threshold, scale, unit in SECOND_UNITS:
        here = left & (size >= threshold)
        out[here] = [f"{value / scale:.3g} {unit}" for value in values[here].tolist()]
        left &= ~here
    return out


def format_number(value: float | None, unit: str = "") -> str:
    """``1.23e9`` → ``1.23 G``; three significant digits, SI prefixes."""
    if value is None or not math.isfinite(value):
        return "–"
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}".rstrip()


def format_rate(row: Any) -> str:
    """The most telling throughput of a result row: TFLOP/s, else GB/s, else items/s."""
    return format_rate_of(*(getattr(row, name, None) for name in RATE_COLUMNS))


def format_rate_of(tflops: Any, gbps: Any, items: Any) -> str:
    """:func:`format_rate` of a row's three throughput values."""
    for value, text in zip((tflops, gbps, items), RATE_TEXTS, strict=True):
        if _present(value):
            return text(value)
    return ""


def rate_texts(tflops: np.ndarray, gbps: np.ndarray, items: np.ndarray) -> np.ndarray:
    """:func:`format_rate_of` of every row's three throughputs (float arrays, NaN where
    missing), a column at a time."""
    out = np.full(len(tflops), "", dtype=object)
    left = np.ones(len(tflops), dtype=bool)
    for values, text in zip((tflops, gbps, items), RATE_TEXTS, strict=True):
        here = left & np.isfinite(values)
        out[here] = [text(value) for value in values[here].tolist()]
        left &= ~here
    return out


# SI prefixes fitted to the value (``10.1 MFLOP/s``, never ``1.01e-05 TFLOP/s``)
RATE_TEXTS = (
    lambda value: format_number(value * 1e12, "FLOP/s"),
    lambda value: format_number(value * 1e9, "B/s"),
    lambda value: f"{format_number(value)} items/s",
)


def _present(value: Any) -> bool:
    return value is not None and isinstance(value, float | int) and math.isfinite(value)
