"""``nvml``: what an NVIDIA GPU's board reports while a case runs: power, energy, utilization,
clocks, temperature and throttling, from NVML (package ``nvidia-ml-py``, module ``pynvml``).

A background thread samples every 20 ms during the timed samples (NVML calls release the GIL
and take microseconds, so the case is not disturbed; ``benchmarks/nvml_disturbance.py``
checks that). Energy is the difference of the board's total-energy counter (millijoules), not
an integral of sampled power, so short spikes count. Metrics (``nvml.<name>``): ``power_mean_w``,
``power_max_w``, ``energy_j``, ``gpu_util_mean``, ``mem_util_mean``, ``sm_clock_mean_mhz``,
``sm_clock_max_mhz``, ``temperature_max_c``, ``throttle_reasons`` (the OR of every sample's
clock-event bitmask: power cap, thermal, ...), ``samples``. Energy per item follows as
``energy_j / (measured_calls · items)``; a throttled clock explains a slow result.

Without NVML (no NVIDIA driver, no package) or on a device that is not a CUDA GPU, ``start``
raises :class:`CollectorUnavailable`: the run says so once and records nothing for it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from statistics import fmean
from typing import Any

from benchsite import Collector, CollectorUnavailable, Device, hookimpl

INTERVAL_S = 0.02
_initialized: list[Any] = []


@hookimpl
def register_collectors() -> list[Collector]:
    return [
        Collector(
            name="nvml",
            description="GPU power, energy, utilization, SM clock, temperature and throttling.",
            start=start_nvml,
            # over the ranks of a distributed case: the total of the group's GPUs, any rank's
            # throttling
            merge={
                "energy_j": "device_sum",
                "power_mean_w": "device_sum",
                "power_max_w": "device_sum",
                "throttle_reasons": "or",
            },
        )
    ]


def nvml() -> Any:
    """The ``pynvml`` module, initialized once per process; raises CollectorUnavailable."""
    if _initialized:
        return _initialized[0]
    try:
        import pynvml
    except ImportError as exc:
        raise CollectorUnavailable("pynvml is not installed (pip install nvidia-ml-py)") from exc
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise CollectorUnavailable(f"NVML cannot start here ({exc}): no NVIDIA driver") from exc
    _initialized.append(pynvml)
    return pynvml


def device_handle(pynvml: Any, device: Device) -> Any:
    """The NVML handle of ``device``: by PCI bus id (immune to CUDA_VISIBLE_DEVICES
    renumbering) where the device plugin captured it, else by index."""
    bus_id = device.info.get("pci_bus_id")
    if bus_id:
        return pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
    return pynvml.nvmlDeviceGetHandleByIndex(int(device.info.get("index", 0)))


def start_nvml(device: Device) -> Callable[[], Mapping[str, float | None]]:
    if device.kind != "cuda":
        raise CollectorUnavailable(f"NVML measures NVIDIA GPUs, not {device.kind} devices")
    pynvml = nvml()
    try:
        handle = device_handle(pynvml, device)
    except pynvml.NVMLError as exc:
        raise CollectorUnavailable(f"NVML does not know {device.name} ({exc})") from exc
    sampler = Sampler(pynvml, handle)
    energy_before = _energy_mj(pynvml, handle)
    sampler.start()

    def stop() -> dict[str, float | None]:
        sampler.finish()
        energy_after = _energy_mj(pynvml, handle)
        energy = None
        if energy_before is not None and energy_after is not None:
            energy = (energy_after - energy_before) / 1000.0
        # a counter that did not move over the samples was not updated (seen on H200s for
        # some cases): no energy is known then, and 0 J would be a false one
        return {**sampler.summary(), "energy_j": energy if energy and energy > 0 else None}

    return stop


def _energy_mj(pynvml: Any, handle: Any) -> int | None:
    try:
        return int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle))
    except pynvml.NVMLError:
        return None


class Sampler(threading.Thread):
    """Reads the board every :data:`INTERVAL_S` until :meth:`finish` (once more at the end)."""

    FIELDS = ("power_w", "gpu_util", "mem_util", "sm_clock_mhz", "temperature_c", "reasons")

    def __init__(self, pynvml: Any, handle: Any, interval_s: float = INTERVAL_S) -> None:
        super().__init__(name="benchsite-nvml", daemon=True)
        self.pynvml, self.handle, self.interval_s = pynvml, handle, interval_s
        self.readings: dict[str, list[float]] = {name: [] for name in self.FIELDS}
        self._done = threading.Event()

    def run(self) -> None:
        self.read()
        while not self._done.wait(self.interval_s):
            self.read()

    def finish(self) -> None:
        self._done.set()
        self.join()
        self.read()

    def read(self) -> None:
        """One reading of every field; a field the board does not support is left out."""
        nv, handle = self.pynvml, self.handle
        readers: dict[str, Callable[[], float]] = {
            "power_w": lambda: nv.nvmlDeviceGetPowerUsage(handle) / 1000.0,
            "gpu_util": lambda: self._utilization().gpu,
            "mem_util": lambda: self._utilization(fresh=False).memory,
            "sm_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM),
            "temperature_c": lambda: nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU),
            "reasons": lambda: _event_reasons(nv, handle),
        }
        for name, reader in readers.items():
            with contextlib.suppress(nv.NVMLError):
                self.readings[name].append(float(reader()))

    def _utilization(self, fresh: bool = True) -> Any:
        """GPU and memory utilization come from one NVML call; read it once per sample."""
        if fresh or getattr(self, "_last_utilization", None) is None:
            self._last_utilization = self.pynvml.nvmlDeviceGetUtilizationRates(self.handle)
        return self._last_utilization

    def summary(self) -> dict[str, float | None]:
        r = self.readings
        reasons = 0
        for value in r["reasons"]:
            reasons |= int(value)
        return {
            "power_mean_w": _mean(r["power_w"]),
            "power_max_w": max(r["power_w"], default=None),
            "gpu_util_mean": _mean(r["gpu_util"]),
            "mem_util_mean": _mean(r["mem_util"]),
            "sm_clock_mean_mhz": _mean(r["sm_clock_mhz"]),
            "sm_clock_max_mhz": max(r["sm_clock_mhz"], default=None),
            "temperature_max_c": max(r["temperature_c"], default=None),
            "throttle_reasons": float(reasons) if r["reasons"] else None,
            "samples": float(len(r["power_w"])),
        }


def _event_reasons(nv: Any, handle: Any) -> int:
    """The clock-event (formerly throttle) reasons bitmask, under either name pynvml has."""
    reader = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
    reader = reader or nv.nvmlDeviceGetCurrentClocksThrottleReasons
    return int(reader(handle))


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None
