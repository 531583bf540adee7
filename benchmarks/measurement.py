"""Does benchsite's timing agree with PyTorch's own benchmark harness?

Times the same cases in the same process with benchsite (``measure_case``, the full profile's
settings) and with ``torch.utils.benchmark.Timer.blocked_autorange`` (given every thread, since
it defaults to one), on every device of this machine: a no-op (each harness's per-call
overhead), a tiny op, a ~100 µs op and a ~50 ms op. The medians of the two larger ones should
agree within 5%.

    python benchmarks/measurement.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _compare import Comparison, compare, machine_devices, print_table

from benchsite.measure.sampling import MeasureSettings
from benchsite.records import Case, Device

# matrix sizes giving about 100 µs and 50 ms per product on each device kind (fp32)
SIZES = {"cpu": (160, 2000), "cuda": (1024, 8192)}


def matmul_case(device: Device, size: int) -> Case:
    a = torch.randn(size, size, device=device.name)
    b = torch.randn(size, size, device=device.name)
    out = torch.empty_like(a)
    return Case(run=lambda: torch.matmul(a, b, out=out))


def cases(device: Device) -> list[tuple[str, Case]]:
    small, large = SIZES.get(device.kind, SIZES["cpu"])
    tiny = torch.ones(16, device=device.name)
    return [
        ("no-op (per-call overhead)", Case(run=lambda: None)),
        ("tiny: add_ on 16 floats", Case(run=lambda: tiny.add_(1.0))),
        (f"~100 µs: fp32 matmul n={small}", matmul_case(device, small)),
        (f"~50 ms: fp32 matmul n={large}", matmul_case(device, large)),
    ]


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    settings = MeasureSettings()
    rows: list[Comparison] = []
    for device in machine_devices().values():
        for name, case in cases(device):
            rows.append(compare(device, name, case, settings))
    print_table(rows, f"benchsite vs torch.utils.benchmark (torch {torch.__version__})")
    larger = [row for row in rows if row.name.startswith("~")]
    worst = max(abs(row.ratio - 1) for row in larger)
    print(f"\nlargest disagreement on the ~100 µs and ~50 ms cases: {worst:.1%} (target < 5%)")


if __name__ == "__main__":
    main()
