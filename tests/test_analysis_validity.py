"""Validity flags: each flag fires on a constructed row that deserves it, and only there."""

from __future__ import annotations

from analysis_frames import CPU_INFO, GPU_INFO, frame, row, spread_samples
from benchsite.plugins.analyses.validity import validity_findings

from benchsite.host.manager import load_plugins
from benchsite.site.analyse import prepare_results


def _flags(rows: list[dict], tmp_path) -> dict[str, tuple[str, ...]]:
    """Flags by workload (the GPU row's where a workload has a CPU and a GPU row)."""
    results = prepare_results(load_plugins(), frame(rows, tmp_path))  # real hook chain
    results = results.sort_values("device_kind", key=lambda kind: kind != "cpu", kind="stable")
    return dict(zip(results["workload"], results["flags"], strict=True))


def test_each_flag_fires_where_it_should(tmp_path):
    rows = [
        row("clean", "cuda:0", 1e-3, {"precision": "bf16"}, bytes=2**31, tflops=600.0),
        row("above-peak", "cuda:0", 1e-3, {"precision": "bf16"}, tflops=2000.0),
        row("in-cache", "cuda:0", 1e-3, {}, bytes=2**20),
        row("launch-bound", "cuda:0", 5e-6, {}),
        row("noisy", "cpu", 1e-3, {}, samples=spread_samples(1e-3, spread=0.5)),
        row("clock-throttled", "cuda:0", 1e-3, {}, metrics={"nvml.throttle_reasons": 0x20}),
        row("slow-clock", "cuda:0", 1e-3, {}, metrics={"nvml.sm_clock_mean_mhz": 1200}),
        row("idle-only", "cuda:0", 1e-3, {}, metrics={"nvml.throttle_reasons": 0x1}),
        row("cpu-not-all-cores", "cpu", 1e-3, {}, threads=4),
        row("pinned-threads", "cpu", 1e-3, {"threads": 4}, threads=4),
        row("mixed", "cpu", 1e-3, {"size": 64, "precision": "fp32"}),
        row("mixed", "cuda:0", 1e-3, {"size": 64, "precision": "fp16"}),
    ]
    flags = _flags(rows, tmp_path)
    assert flags["clean"] == ()
    for code in (
        "above-peak",
        "in-cache",
        "launch-bound",
        "noisy",
        "clock-throttled",
        "cpu-not-all-cores",
    ):
        assert code in flags[code], code
    assert flags["slow-clock"] == ("clock-throttled",)
    assert flags["idle-only"] == () and flags["pinned-threads"] == ()
    assert flags["mixed"] == ("precision-mismatch",)  # on the GPU row
    assert GPU_INFO["l2_cache_bytes"] > 2**20 and CPU_INFO["usable_cpus"] == 16


def test_a_copy_faster_than_hbm_is_in_cache_when_it_fits_the_cache_and_above_peak_otherwise(
    tmp_path,
):
    fits, hbm = 32 * 2**20, 2**31  # bytes read + written; the H200 row's L2 is 60 MiB
    small = _flags(
        [row("copy", "cuda:0", 1e-3, {"size": fits // 2}, bytes=fits, gbps=5100.0)],
        tmp_path / "small",
    )
    large = _flags(
        [row("copy", "cuda:0", 1e-3, {"size": hbm // 2}, bytes=hbm, gbps=5100.0)],
        tmp_path / "large",
    )
    assert small["copy"] == ("in-cache",)
    assert large["copy"] == ("above-peak",)


def test_validity_summary_counts_flags_with_their_rows(tmp_path):
    rows = [row("a", "cuda:0", 5e-6, {}), row("b", "cuda:0", 1e-3, {})]
    results = prepare_results(load_plugins(), frame(rows, tmp_path))
    overall, launch = validity_findings(results)
    assert overall.numbers["clean_rows"] == 1 and overall.numbers["launch-bound"] == 1
    assert launch.evidence == (results["row_id"].iloc[0],)
