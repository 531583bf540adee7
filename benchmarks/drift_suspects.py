"""Which suspect moves a small case's samples mid-measurement? One process, one GPU.

For each small case (the suite's own setup), runs a plain sampling loop for ``--seconds``: blocks
of >= 20 ms of calls between device synchronizes, each timed by the host clock (``wall``) and by
CUDA events (``event``), with the GPU's SM clock read through NVML *between* blocks (never inside
one). Each case is sampled under each condition, the conditions in rotating order over
``--rounds`` rounds:

- ``plain``: nothing else in the process;
- ``nvml``: the ``nvml`` collector's sampler thread running (as in ``benchsite run``);
- ``rss-thread``: a thread reading this process's RSS through psutil every 10 ms (what the
  ``memory`` collector does where the kernel's peak counter cannot be reset);
- ``after-gpu-load``: right after 2 s of a large bf16 matmul (GPU hot, clocks up);
- ``after-cpu-load``: right after 2 s of a 2048 fp32 matmul on the CPU on every core (the OpenMP
  pool just used, as when a CPU case precedes a GPU case in one worker);
- ``after-idle``: right after 3 s of sleep (clocks down).

For each run it prints the median per-call time (wall, event), the shift (median of the last
half over the median of the first fifth) and the SM clock's range and median. Then the load of
the machine and its busiest processes.

``--levels N``: instead, the first case in N windows of one second, alternately with the
measuring thread free to move between cores and pinned to one core, printing each window's
median, the cores the thread ran on and their clock (``/proc/cpuinfo``): does the host thread's
core decide the level?

    python benchmarks/drift_suspects.py --rounds 2 --seconds 2
    python benchmarks/drift_suspects.py --levels 16
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _compare import machine_devices, workload_case
from benchsite.plugins.collectors import nvml as collector_nvml

from benchsite.toolkit import memory as _memory

CASES = [
    ("matmul fp32 n=256", "matmul", {"size": 256, "precision": "fp32"}),
    ("matmul bf16 n=256", "matmul", {"size": 256, "precision": "bf16"}),
    ("matmul fp32 n=64", "matmul", {"size": 64, "precision": "fp32"}),
    ("transfer h2d pinned 64 KiB", "transfer", {"size": 65536, "pinned": True, "direction": "h2d"}),
]


def sample(run: Callable[[], None], seconds: float, clock: Callable[[], int]) -> dict:
    """Blocks of >= 20 ms of calls for ``seconds``; per block: wall, event per call, SM clock."""
    calls = calibrate(run)
    wall, event, clocks = [], [], []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        began = time.perf_counter()
        start.record()
        for _ in range(calls):
            run()
        stop.record()
        torch.cuda.synchronize()
        wall.append((time.perf_counter() - began) / calls)
        event.append(start.elapsed_time(stop) / 1e3 / calls)
        clocks.append(clock())
    return {"wall": wall, "event": event, "clock": clocks, "calls": calls}


def calibrate(run: Callable[[], None]) -> int:
    calls = 1
    while True:
        torch.cuda.synchronize()
        began = time.perf_counter()
        for _ in range(calls):
            run()
        torch.cuda.synchronize()
        if time.perf_counter() - began >= 0.02:
            return calls
        calls *= 2


def shift(values: list[float]) -> float:
    fifth = max(1, len(values) // 5)
    return statistics.median(values[len(values) // 2 :]) / statistics.median(values[:fifth])


def load_gpu(seconds: float) -> None:
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        a @ a
        torch.cuda.synchronize()


def load_cpu(seconds: float) -> None:
    a = torch.randn(2048, 2048)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        a @ a


def rss_thread() -> Callable[[], None]:
    """Start a psutil RSS sampler like PeakRss's fallback; return its stop."""
    peak = _memory.PeakRss()
    peak.baseline, peak._kernel = 0, False
    peak._thread = threading.Thread(target=peak._sample, daemon=True)
    peak._thread.start()
    return lambda: peak.stop()


def levels(case_run: Callable[[], None], windows: int, clock: Callable[[], int]) -> None:
    """Windows of one second, alternately free and pinned to one core (see the docstring)."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    everything = os.sched_getaffinity(0)
    pinned_core = sorted(everything)[len(everything) // 2]
    print(f"{'window':<8} {'thread':<10} {'median':>9} {'shift':>6}  cores (MHz)")
    for window in range(windows):
        pinned = window % 2 == 1
        os.sched_setaffinity(0, {pinned_core} if pinned else everything)
        cores: dict[int, int] = {}

        def run(cores: dict[int, int] = cores) -> None:
            case_run()
            core = libc.sched_getcpu()
            cores[core] = cores.get(core, 0) + 1

        found = sample(run, 1.0, clock)
        mhz = core_mhz()
        where = ", ".join(f"{c}×{n} ({mhz.get(c, 0):.0f})" for c, n in sorted(cores.items()))
        print(
            f"{window:<8} {'pinned' if pinned else 'free':<10} "
            f"{statistics.median(found['wall']) * 1e6:8.2f}µ {shift(found['wall']):6.3f}  {where}",
            flush=True,
        )
    os.sched_setaffinity(0, everything)


def core_mhz() -> dict[int, float]:
    """Each core's clock from /proc/cpuinfo (empty where the VM does not say)."""
    found, core = {}, None
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("processor"):
            core = int(line.split(":")[1])
        elif line.startswith("cpu MHz") and core is not None:
            found[core] = float(line.split(":")[1])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--levels", type=int, default=0)
    args = parser.parse_args()
    devices = machine_devices()
    device = devices["cuda:0"]
    devices["cpu"].prepare()
    device.prepare()
    pynvml = collector_nvml.nvml()
    handle = collector_nvml.device_handle(pynvml, device)

    def clock() -> int:
        return int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))

    conditions = {
        "plain": lambda: None,
        "nvml": None,
        "rss-thread": None,
        "after-gpu-load": lambda: load_gpu(2.0),
        "after-cpu-load": lambda: load_cpu(2.0),
        "after-idle": lambda: time.sleep(3.0),
    }
    if args.levels:
        name, workload, params = CASES[0]
        print(f"{name} on {device.name}: one-second windows, free vs pinned thread")
        levels(workload_case(device, workload, params).run, args.levels, clock)
        return 0
    print(f"kernel peak-RSS reset works here: {_memory.reset_kernel_peak()}")
    print(
        f"torch threads {torch.get_num_threads()}, cores {os.cpu_count()}, "
        f"SM clock now {clock()} MHz"
    )
    header = f"{'case':<28} {'condition':<15} {'wall':>9} {'event':>9} {'shift':>6} {'SM MHz'}"
    print(header)
    for name, workload, params in CASES:
        case = workload_case(device, workload, params)
        names = list(conditions)
        for round_ in range(args.rounds):
            for condition in names[round_ % len(names) :] + names[: round_ % len(names)]:
                before = conditions[condition]
                stop = None
                if condition == "nvml":
                    stop = collector_nvml.start_nvml(device)
                elif condition == "rss-thread":
                    stop = rss_thread()
                else:
                    before()
                found = sample(case.run, args.seconds, clock)
                if stop is not None:
                    stop()
                wall, event, clocks = found["wall"], found["event"], found["clock"]
                print(
                    f"{name:<28} {condition:<15} {statistics.median(wall) * 1e6:8.2f}µ "
                    f"{statistics.median(event) * 1e6:8.2f}µ {shift(wall):6.3f} "
                    f"{min(clocks)}-{max(clocks)} (median {statistics.median(clocks):.0f}), "
                    f"{len(wall)} blocks of {found['calls']}",
                    flush=True,
                )
        if case.teardown:
            case.teardown()
    print(f"load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
