"""benchsite.units: the one place a number becomes text (docs/writing.md, "Human units")."""

from __future__ import annotations

import math

import pytest

from benchsite.units import (
    faster_or_slower,
    format_bytes,
    format_count,
    format_items_rate,
    format_number,
    format_per_item,
    format_percent,
    format_rate,
    format_rate_in,
    format_ratio,
    format_seconds,
    format_value,
    is_item_noun,
    items_unit,
    metric_words,
    plural,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (4096, "4 KiB"),
        (65536, "64 KiB"),
        (1.5 * 2**20, "1.5 MiB"),
        (2**30, "1 GiB"),
        (512, "512 B"),
        (1017 * 2**20, "0.993 GiB"),
        (1e9, "954 MiB"),
        (None, "–"),
    ],
)
def test_byte_sizes_are_binary(value, text):
    assert format_bytes(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1024, "1,024"),
        (8192.0, "8,192"),
        (1160.4, "1,160"),
        (5.4, "5.4"),
        (0.5, "0.5"),
        (1.2e-5, "0.000012"),
        (3.4e9, "3.4 billion"),
        (12e6, "12 million"),
        (math.nan, "–"),
    ],
)
def test_counts_are_whole_and_never_scientific(value, text):
    assert format_count(value) == text


def test_rates_take_si_prefixes():
    assert format_number(5.12e12, "B/s") == "5.12 TB/s"
    assert format_rate_in(4200.0, "GB/s") == "4.2 TB/s"
    assert format_rate_in(0.00211, "TFLOP/s") == "2.11 GFLOP/s"
    assert format_rate_in(58850.3, "items/s") == "58,900 items/s"


def test_throughput_counts_what_the_workload_declared_one_item_to_be():
    assert format_items_rate(1160.4, "image") == "1,160 images/s"
    assert format_items_rate(46.04, "token") == "46 tokens/s"
    assert format_items_rate(12.0, None) == "12 items/s"  # declared nothing, or an older row
    assert [items_unit(noun) for noun in ("sequence", "query", "patch", "day", "text sample")] == [
        "sequences/s",
        "queries/s",
        "patches/s",
        "days/s",
        "text samples/s",
    ]
    assert format_per_item(0.0217, "token") == "21.7 ms per token"
    row = type("Row", (), {"tflops": None, "gbps": None, "items_per_s": 8.0, "item_unit": "image"})
    assert format_rate(row) == "8 images/s"
    assert is_item_noun("image") and is_item_noun("text sample")
    assert not any(map(is_item_noun, ("Images", "images/s", "", "x", None, 3)))


def test_times_write_their_unit():
    assert (format_seconds(0.00175), format_seconds(1.0), format_seconds(2e-5)) == (
        "1.75 ms",
        "1 s",
        "20 µs",
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (64.3, "64× faster"),
        (1.7, "1.7× faster"),
        (0.59, "1.7× slower"),
        (1.02, "about as fast"),
        (0.98, "about as fast"),
    ],
)
def test_speed_ratios_in_words(value, text):
    assert faster_or_slower(value) == text


def test_shares_ratios_and_plurals():
    assert [format_percent(v) for v in (-1.2e-7, 0.0049, 0.42, -0.2)] == [
        "0%",
        "0.49%",
        "42%",
        "-20%",
    ]
    assert [format_ratio(v) for v in (2.48, 39.75, 0.59)] == ["2.5×", "40×", "0.59×"]
    assert [format_ratio(v) for v in (1.02, 0.981, 1.0)] == ["1.02×", "0.98×", "1×"]
    assert (plural(1, "thread"), plural(2, "case"), plural(1200, "row")) == (
        "1 thread",
        "2 cases",
        "1,200 rows",
    )
    assert (format_value(2**30, in_bytes=True), format_value(8192), format_value("bf16")) == (
        "1 GiB",
        "8,192",
        "bf16",
    )


def test_a_metric_name_reads_as_words_with_its_unit():
    assert metric_words("nvml.sm_clock_max_mhz") == "NVML: SM clock max (MHz)"
    assert metric_words("memory.gpu_peak_reserved_bytes") == "memory: GPU peak reserved (bytes)"
    assert metric_words("cost.usd_per_hour") == "cost: USD per hour"
    assert metric_words("compile_s") == "compile"  # the value carries the unit: 12.3 s
    assert metric_words("ttft_s") == "time to first token"
    assert metric_words("token_p50_s") == "time per token p50"
    assert metric_words("samples") == "samples"  # a lone word is not a unit
