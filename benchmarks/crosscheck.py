"""Cross-check benchsite against torch.utils.benchmark on the suite's own cases.

In one process, on every device of this machine, times six cases with both harnesses: a small
and a large matmul, an MLP training step, a transformer inference step and a host→device copy
(GPU only), each set up by the registered workload exactly as `benchsite run` does. Each
harness, and a plain synchronized loop that arbitrates, gets five turns in rotating order
(benchsite with the full profile's 2% target and a 3 s budget a turn). Prints the medians side
by side with their ratio; every ratio should lie within 0.95–1.05. Run it on a quiet machine:
other load moves the harnesses, but not alike.

    python benchmarks/crosscheck.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _compare import compare, machine_devices, print_table, workload_case

from benchsite.errors import SkipCase
from benchsite.measure import MeasureSettings

CASES = [
    (
        "small matmul fp32 n=256",
        "matmul",
        {"size": 256, "precision": "fp32"},
    ),
    (
        "large matmul fp32 n=4096",
        "matmul",
        {"size": 4096, "precision": "fp32"},
    ),
    ("mlp-train fp32 batch=256", "mlp-train", {"batch": 256, "precision": "fp32"}),
    (
        "transformer-infer fp32 b=32",
        "transformer-infer",
        {"batch": 32, "seq_len": 128, "precision": "fp32"},
    ),
    (
        "transfer h2d pinned 256 MiB",
        "transfer",
        {"size": 256 * 2**20, "pinned": True, "direction": "h2d"},
    ),
    (
        "transfer h2d pageable 256 MiB",
        "transfer",
        {"size": 256 * 2**20, "pinned": False, "direction": "h2d"},
    ),
]


def main() -> None:
    settings = MeasureSettings(budget_s=3.0)
    rows = []
    for device in machine_devices().values():
        for name, workload, wanted in CASES:
            try:
                case = workload_case(device, workload, wanted)
            except SkipCase as reason:
                print(f"{device.name}: {name} skipped ({reason})")
                continue
            rows.append(compare(device, name, case, settings))
            if case.teardown:
                case.teardown()
    print_table(rows, f"benchsite vs torch.utils.benchmark, same cases (torch {torch.__version__})")
    outside = [row for row in rows if not 0.95 <= row.ratio <= 1.05]
    print(f"\n{len(rows) - len(outside)} of {len(rows)} ratios within 0.95–1.05")


if __name__ == "__main__":
    main()
