"""The built-in collectors: real readings on this machine, the unavailable paths, and the engine
recording an unavailable collector as nothing while the case stays ok."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from benchsite.plugins.collectors import cost as collector_cost
from benchsite.plugins.collectors import cpu as collector_cpu
from benchsite.plugins.collectors import memory as collector_memory
from benchsite.plugins.collectors import nvml as collector_nvml
from benchsite.plugins.devices.cpu import register_devices

from benchsite import CollectorUnavailable
from benchsite.errors import ConfigError
from benchsite.host import registry
from benchsite.host.config import section, value
from benchsite.host.manager import load_plugins
from benchsite.measure.baseline import start_case
from benchsite.measure.runner import RunOptions, run_benchmarks
from benchsite.records import Device
from benchsite.store import parts as store
from benchsite.toolkit import memory as _memory

REPO = Path(__file__).parents[1]
MIB = 2**20


@pytest.fixture(scope="module")
def cpu() -> Device:
    return register_devices()[0]


def _hold(megabytes: int, seconds: float = 0.1) -> None:
    block = np.ones(megabytes * MIB, dtype=np.uint8)
    time.sleep(seconds)
    del block


def test_all_four_collectors_are_registered() -> None:
    names = set(registry.collectors(load_plugins()))
    assert {"memory", "nvml", "cpu", "cost"} <= names


def test_memory_records_the_peak_rss_of_the_case_and_no_gpu_numbers_on_a_cpu(cpu) -> None:
    start_case()  # what the worker does before each case's setup: the case's baseline
    stop = collector_memory.start_memory(cpu)
    _hold(200)
    found = stop()
    assert set(found) == {"cpu_peak_rss_bytes", "per_case"}
    assert found["cpu_peak_rss_bytes"] >= 190 * MIB


def test_peak_rss_falls_back_to_sampling_where_the_kernel_peak_cannot_be_reset(
    monkeypatch,
) -> None:
    monkeypatch.setattr(_memory, "reset_kernel_peak", lambda: False)
    tracker = _memory.PeakRss(interval_s=0.005).start()
    _hold(120, seconds=0.1)
    assert tracker.stop() >= 100 * MIB


def test_cpu_utilization_sees_a_busy_thread(cpu) -> None:
    cpu_before, started = time.process_time(), time.perf_counter()
    stop = collector_cpu.start_cpu(cpu)
    deadline = time.perf_counter() + 0.5
    while time.perf_counter() < deadline:
        pass
    found = stop()
    # the process's own CPU clock over the same interval (on a loaded machine it is < 100%,
    # by how much depends on the machine's other work: no bound on it here)
    expected = 100 * (time.process_time() - cpu_before) / (time.perf_counter() - started)
    assert found["process_util_mean"] == pytest.approx(expected, abs=10)
    assert 0 < found["system_util_mean"] <= 100
    if not collector_cpu.rapl_packages():
        assert found["energy_j"] is None  # no RAPL here: unknown, not zero


def test_rapl_reads_package_domains_and_survives_the_counter_wrapping(tmp_path) -> None:
    for name, energy in [("intel-rapl:0", "100"), ("intel-rapl:0:0", "5"), ("intel-rapl:1", "x")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "energy_uj").write_text(energy)
    assert [p.name for p in collector_cpu.rapl_packages(tmp_path)] == ["intel-rapl:0"]
    assert collector_cpu.energy_delta_uj(900, 100, max_range=1000) == 200
    assert collector_cpu.energy_delta_uj(100, 900, max_range=1000) == 800


def test_nvml_is_unavailable_for_a_cpu_and_without_a_driver(cpu, monkeypatch) -> None:
    with pytest.raises(CollectorUnavailable, match="NVIDIA GPUs"):
        collector_nvml.start_nvml(cpu)
    monkeypatch.setattr(collector_nvml, "_initialized", [])
    gpu = Device("cuda:0", "cuda", {"index": 0}, "x", timer=object)
    try:
        import pynvml

        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        pytest.skip("this machine has an NVIDIA driver")
    except pynvml.NVMLError:
        pass
    with pytest.raises(CollectorUnavailable, match="NVML cannot start"):
        collector_nvml.start_nvml(gpu)


class FakeNvml:
    """Just enough of pynvml to drive the sampler: a board whose power rises with each read."""

    NVML_CLOCK_SM, NVML_TEMPERATURE_GPU = 1, 0

    class NVMLError(Exception):
        pass

    def __init__(self) -> None:
        self.reads, self.energy_mj = 0, 1_000_000

    def nvmlDeviceGetPowerUsage(self, handle):
        self.reads += 1
        return 100_000 + 1000 * self.reads  # milliwatts

    def nvmlDeviceGetUtilizationRates(self, handle):
        return SimpleNamespace(gpu=90, memory=40)

    def nvmlDeviceGetClockInfo(self, handle, kind):
        return 1980

    def nvmlDeviceGetTemperature(self, handle, kind):
        return 50 + self.reads

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        return 0x4 if self.reads % 2 else 0x20

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        self.energy_mj += 2500
        return self.energy_mj

    def nvmlDeviceGetHandleByIndex(self, index):
        return index


def test_nvml_samples_in_the_background_and_takes_energy_from_the_counter(monkeypatch) -> None:
    fake = FakeNvml()
    monkeypatch.setattr(collector_nvml, "_initialized", [fake])
    stop = collector_nvml.start_nvml(Device("cuda:0", "cuda", {"index": 0}, "x", timer=object))
    time.sleep(0.1)
    found = stop()
    assert found["samples"] == fake.reads >= 3
    assert found["power_max_w"] == 100 + fake.reads
    assert 100 < found["power_mean_w"] < found["power_max_w"]
    assert found["energy_j"] == 2.5  # counter difference, mJ → J
    assert found["throttle_reasons"] == 0x4 | 0x20
    assert found["gpu_util_mean"] == 90 and found["sm_clock_max_mhz"] == 1980


def _config(tmp_path: Path, monkeypatch, text: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    monkeypatch.setenv("BENCHSITE_CONFIG", str(path))


def test_cost_is_unavailable_without_a_price(cpu, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("BENCHSITE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert collector_cost.start_cost(cpu)() == {}  # no benchsite.toml: nothing asked, no note
    _config(tmp_path, monkeypatch, "[cost.usd_per_hour]\ncuda = 2.0\n")
    with pytest.raises(CollectorUnavailable, match="no price for cpu"):
        collector_cost.start_cost(cpu)
    _config(tmp_path, monkeypatch, '[cost.usd_per_hour]\ncpu = "cheap"\n')
    with pytest.raises(CollectorUnavailable, match="give a number"):
        collector_cost.start_cost(cpu)


def test_cost_takes_the_most_specific_price(cpu, tmp_path, monkeypatch) -> None:
    _config(tmp_path, monkeypatch, '[cost.usd_per_hour]\ncpu = 0.5\n"NVIDIA H200" = 4.0\n')
    assert collector_cost.start_cost(cpu)() == {"usd_per_hour": 0.5}
    h200 = Device("cuda:0", "cuda", {"model": "NVIDIA H200"}, "x", timer=object)
    assert collector_cost.start_cost(h200)() == {"usd_per_hour": 4.0}
    assert collector_cost.usd_per_million_items(3.6, median_s=0.01, items=100) == 0.1


def test_the_example_config_parses_and_prices_cpu_and_gpu(cpu, monkeypatch) -> None:
    monkeypatch.setenv("BENCHSITE_CONFIG", str(REPO / "benchsite.toml.example"))
    prices = section("cost")["usd_per_hour"]
    assert prices["cpu"] > 0 and prices["cuda"] > 0
    assert "ASSUMPTION" in (REPO / "benchsite.toml.example").read_text()
    assert value("max_batch.cpu_memory_budget_gib") is None  # commented out: the default applies


def test_config_errors_are_one_line_and_say_what_to_do(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BENCHSITE_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        section("cost")
    _config(tmp_path, monkeypatch, "[cost\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        section("cost")


def test_engine_records_available_collectors_and_nothing_for_unavailable_ones(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no benchsite.toml: cost is unavailable too
    monkeypatch.delenv("BENCHSITE_CONFIG", raising=False)
    options = RunOptions(
        results=tmp_path / "store", workloads=("copy",), devices=("cpu",), rounds=1
    )
    report = run_benchmarks(options)
    assert report.statuses == {"ok": 3}
    frame = store.read_results(tmp_path / "store")
    metrics = store.decode_json(frame, "metrics")
    for found in metrics:
        assert found["memory.cpu_peak_rss_bytes"] >= 0
        assert found["cpu.process_util_mean"] > 0
        assert not any(key.startswith(("nvml.", "cost.")) for key in found)
