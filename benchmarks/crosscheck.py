"""Cross-check benchsite against torch.utils.benchmark on the suite's own cases.

In one process, on every device of this machine, times the suite's own cases with both
harnesses: a small and a large matmul, an MLP training step, a transformer inference step and
host→device copies, and on a GPU the small, launch-bound cases where the harnesses disagreed
before (matmul n=64 and 256 in fp32 and bf16, a 64 KiB pinned copy), each set up by the
registered workload exactly as `benchsite run` does. In each of ``--rounds`` rounds the Timer
takes a turn of about ``--turn`` seconds just before and just after benchsite's (benchsite with
the full profile's estimator, 2% target and drift test, over ``--turn`` seconds of sampling
rather than the profile's 1 s, so that a round sits within one level of a host whose launch
rate moves every few seconds), then a plain synchronized loop that arbitrates takes one.
Prints each harness's median of its per-round medians and the median of the per-round ratios
(``_compare.py`` says why paired and bracketed); every ratio should lie within 0.95–1.05. Run it
on a quiet machine: other load moves the harnesses, but not alike.

The launch-bound GPU cases (the small ones, a few µs to ~30 µs a call, and the MLP training
step, whose ~1.3 ms is dozens of such launches) take ``--small-rounds`` rounds rather than
``--rounds``: on an H200 host their level steps between ~15 and ~27 µs a call
every few seconds, and a step that falls inside a round moves that round's ratio by up to ~25%
whichever harness is right, so their median ratio needs more rounds to settle than a stable
case's. Last, the script prints how the Timer's turn after benchsite's compares with its turn
before over those rounds: a value far from 1 would mean benchsite's turn leaves the device or
host in another state (its held device-time blocks run last in it).

    python benchmarks/crosscheck.py
    python benchmarks/crosscheck.py --device cuda:0 --rounds 9 --turn 0.5
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _compare import compare, machine_devices, print_bracket_drift, print_table, workload_case

from benchsite.errors import SkipCase
from benchsite.measure.sampling import MeasureSettings

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
SMALL_GPU_CASES = [  # launch-bound: where a drifting host moved benchsite's numbers before
    ("small matmul fp32 n=64", "matmul", {"size": 64, "precision": "fp32"}),
    ("small matmul bf16 n=64", "matmul", {"size": 64, "precision": "bf16"}),
    ("small matmul bf16 n=256", "matmul", {"size": 256, "precision": "bf16"}),
    (
        "transfer h2d pinned 64 KiB",
        "transfer",
        {"size": 64 * 2**10, "pinned": True, "direction": "h2d"},
    ),
]
LAUNCH_BOUND = {  # on a GPU: the host's launch rate sets their time
    *(name for name, _, _ in SMALL_GPU_CASES),
    "small matmul fp32 n=256",
    "mlp-train fp32 batch=256",
}
assert LAUNCH_BOUND <= {name for name, _, _ in CASES + SMALL_GPU_CASES}, "a case was renamed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", action="append", help="only these devices (repeatable)")
    parser.add_argument("--rounds", type=int, default=5, help="turns per harness and case")
    parser.add_argument(
        "--small-rounds", type=int, default=9, help="rounds of a launch-bound GPU case"
    )
    parser.add_argument("--turn", type=float, default=0.4, help="seconds of one turn")
    parser.add_argument(
        "--no-device-time",
        action="store_true",
        help="skip benchsite's held device-time blocks (to see whether they move the level)",
    )
    args = parser.parse_args()
    settings = MeasureSettings(budget_s=3 * args.turn, min_time_s=args.turn)
    if args.no_device_time:
        settings = replace(settings, device_time_below_s=0.0)
    rows = []
    for device in machine_devices().values():
        if args.device and device.name not in args.device:
            continue
        small = SMALL_GPU_CASES if device.kind == "cuda" else []
        for name, workload, wanted in CASES[:1] + small + CASES[1:]:
            try:
                case = workload_case(device, workload, wanted)
            except SkipCase as reason:
                print(f"{device.name}: {name} skipped ({reason})")
                continue
            launch_bound = device.kind == "cuda" and name in LAUNCH_BOUND
            rounds = args.small_rounds if launch_bound else args.rounds
            rows.append(compare(device, name, case, settings, rounds, args.turn))
            print(f"{device.name}: {name} done", flush=True)
            if case.teardown:
                case.teardown()
    print_table(rows, f"benchsite vs torch.utils.benchmark, same cases (torch {torch.__version__})")
    outside = [row for row in rows if not 0.95 <= row.ratio <= 1.05]
    print(f"\n{len(rows) - len(outside)} of {len(rows)} ratios within 0.95–1.05")
    print_bracket_drift([row for row in rows if row.device != "cpu" and row.name in LAUNCH_BOUND])


if __name__ == "__main__":
    main()
