"""Every visible CUDA GPU as a device ``cuda:N``.

Captures the model, memory, compute capability, multiprocessor count, L2 size, driver and CUDA
versions, power limit and maximum clocks (through NVML where it works). Blocks of calls are
timed with CUDA events recorded on the device's stream, so the time is the GPU's, launch gaps
included; the engine synchronizes before each block, never timing an unsynchronized launch.
"""

from __future__ import annotations

from typing import Any

from benchsite import Device, Timer, hookimpl
from benchsite.toolkit.fingerprint import fingerprint


class CudaEventTimer(Timer):
    """Times a block of GPU work with a pair of CUDA events."""

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self._start = torch.cuda.Event(enable_timing=True)
        self._stop = torch.cuda.Event(enable_timing=True)

    def start(self) -> None:
        self._start.record()

    def stop(self) -> None:
        self._stop.record()

    def elapsed(self) -> float:
        self._stop.synchronize()
        return self._start.elapsed_time(self._stop) / 1000.0


@hookimpl
def register_devices() -> list[Device]:
    import torch

    if not torch.cuda.is_available():
        return []
    return [_device(index) for index in range(torch.cuda.device_count())]


def _device(index: int) -> Device:
    import torch

    info = gpu_info(index)
    keys = ("model", "driver_version", "cuda_version", "torch_version", "compute_capability")
    flush_buffer: list[Any] = []

    def prepare() -> None:
        torch.cuda.set_device(index)

    def flush_cache() -> None:
        if not flush_buffer:  # twice the L2, so every cached line is evicted
            size = max(2 * int(info.get("l2_cache_bytes") or 0), 256 * 2**20)
            flush_buffer.append(torch.empty(size, dtype=torch.uint8, device=f"cuda:{index}"))
        flush_buffer[0].zero_()

    return Device(
        name=f"cuda:{index}",
        kind="cuda",
        info=info,
        fingerprint=fingerprint(info, keys),
        timer=CudaEventTimer,
        prepare=prepare,
        synchronize=lambda: torch.cuda.synchronize(index),
        flush_cache=flush_cache,
        hold=hold_gpu,
    )


_CYCLES_PER_S: list[float] = []


def hold_gpu(seconds: float) -> Any:
    """Queue a spin kernel of about ``seconds`` on the current stream (``torch.cuda._sleep``);
    return a function that says whether it is still running (an event recorded after it has
    not completed). Calls launched meanwhile queue behind it and then run back to back."""
    import torch

    if not _CYCLES_PER_S:  # the spin kernel counts SM cycles: measure their rate once
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(10_000_000)
        stop.record()
        stop.synchronize()
        _CYCLES_PER_S.append(10_000_000 / (start.elapsed_time(stop) / 1000.0))
    torch.cuda._sleep(max(1, int(seconds * _CYCLES_PER_S[0])))
    done = torch.cuda.Event()
    done.record()
    return lambda: not done.query()


def gpu_info(index: int) -> dict[str, Any]:
    """What PyTorch and NVML say about GPU ``index``."""
    import torch

    props = torch.cuda.get_device_properties(index)
    info: dict[str, Any] = {
        "model": props.name,
        "index": index,
        "memory_bytes": props.total_memory,
        "compute_capability": f"{props.major}.{props.minor}",
        "multiprocessors": props.multi_processor_count,
        "l2_cache_bytes": getattr(props, "L2_cache_size", None),
        "cuda_version": torch.version.cuda,
        "cudnn_version": torch.backends.cudnn.version(),
        "torch_version": torch.__version__,
    }
    info.update(nvml_info(index))
    return info


def nvml_info(index: int) -> dict[str, Any]:
    """Driver, power limit and clocks from NVML; empty when NVML is not usable here."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - ImportError or NVMLError: no NVML on this machine
        return {}
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        return {
            "driver_version": _text(pynvml.nvmlSystemGetDriverVersion()),
            "power_limit_w": pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000,
            "max_sm_clock_mhz": pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM),
            "max_memory_clock_mhz": pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM),
            "pci_bus_id": _text(pynvml.nvmlDeviceGetPciInfo(handle).busId),
        }
    except pynvml.NVMLError:
        return {}
    finally:
        pynvml.nvmlShutdown()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
