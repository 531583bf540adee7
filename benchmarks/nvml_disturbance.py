"""Does sampling NVML disturb what it measures? A matmul's median with and without the ``nvml``
collector, in one process on one GPU.

Measures the same matmul case (the built-in ``matmul`` workload's setup) alternately with the
``nvml`` collector sampling in its background thread and without it, ``--repeats`` times each,
interleaved so that clock and temperature drift affect both sides alike. Prints each pair, the
median of each side and their difference in percent (target: under 1%).

    python benchmarks/nvml_disturbance.py                  # bf16, n=8192, 7 pairs, cuda:0
    python benchmarks/nvml_disturbance.py --size 4096 --precision fp32
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable

from benchsite.plugins.collectors import nvml as collector_nvml
from benchsite.plugins.devices import cuda as device_cuda
from benchsite.plugins.workloads import matmul as workload_matmul

from benchsite.measure.sampling import MeasureSettings, measure_case
from benchsite.records import Case, Device

# long enough for dozens of NVML samples (every 20 ms) inside every measurement
SETTINGS = MeasureSettings(rel_ci=0.001, budget_s=2.0, min_samples=50, max_samples=2000)


def median_s(case: Case, device: Device, with_nvml: bool) -> tuple[float, float | None]:
    """The case's median seconds per call, and how many NVML samples were taken meanwhile."""
    taken: dict[str, float | None] = {}

    def around(sample_loop: Callable[[], None]) -> None:
        stop = collector_nvml.start_nvml(device)
        try:
            sample_loop()
        finally:
            taken.update(stop())

    measurement = measure_case(case, device, SETTINGS, around if with_nvml else None)
    return measurement.summary.median_s, taken.get("samples")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--precision", default="bf16")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--device", default="cuda:0")
    args = parser.parse_args()
    devices = {device.name: device for device in device_cuda.register_devices()}
    if args.device not in devices:
        print(f"no {args.device} here (found: {', '.join(devices) or 'no CUDA GPU'})")
        return 2
    device = devices[args.device]
    device.prepare()
    case = workload_matmul.setup_matmul(device, {"size": args.size, "precision": args.precision})
    without, with_nvml = [], []
    print(f"matmul n={args.size} {args.precision} on {device.name} ({device.info.get('model')})")
    for repeat in range(args.repeats):
        plain, _ = median_s(case, device, with_nvml=False)
        sampled, samples = median_s(case, device, with_nvml=True)
        without.append(plain)
        with_nvml.append(sampled)
        print(
            f"  pair {repeat + 1}: without {plain * 1e3:.4f} ms, with nvml {sampled * 1e3:.4f} ms "
            f"({samples:.0f} NVML samples)"
        )
    if case.teardown:
        case.teardown()
    base, sampled = statistics.median(without), statistics.median(with_nvml)
    difference = (sampled - base) / base * 100
    print(f"median without nvml: {base * 1e3:.4f} ms; with nvml: {sampled * 1e3:.4f} ms")
    print(f"difference: {difference:+.2f}% (target: |difference| < 1%)")
    return 0 if abs(difference) < 1 else 1


if __name__ == "__main__":
    sys.exit(main())
