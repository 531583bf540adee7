"""Human-readable numbers, shared by the terminal tables and the site."""

from __future__ import annotations

import math
from typing import Any


def format_seconds(seconds: float | None) -> str:
    """``0.000123`` → ``123 µs``; three significant digits."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    size = abs(seconds)  # unrolled: a site shows this four times for every result row
    if size >= 1.0:
        return f"{seconds:.3g} s"
    if size >= 1e-3:
        return f"{seconds / 1e-3:.3g} ms"
    if size >= 1e-6:
        return f"{seconds / 1e-6:.3g} µs"
    return f"{seconds / 1e-9:.3g} ns"


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
    return format_rate_of(*(getattr(row, name, None) for name in ("tflops", "gbps", "items_per_s")))


def format_rate_of(tflops: Any, gbps: Any, items: Any) -> str:
    """:func:`format_rate` of a row's three throughput values."""
    if _present(tflops):
        return f"{tflops:.3g} TFLOP/s"
    if _present(gbps):
        return f"{gbps:.3g} GB/s"
    if _present(items):
        return f"{format_number(items)} items/s"
    return ""


def _present(value: Any) -> bool:
    return value is not None and isinstance(value, float | int) and math.isfinite(value)
