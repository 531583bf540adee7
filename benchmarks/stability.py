"""How many stored results moved while they were measured, and does the store say so?

For every ``ok`` row of a store: the shift between the median of the first fifth of its samples
and the median of the last half (the late/early ratio, computed from ``samples_s`` here, so old
stores without a ``shift`` column are read the same way). Prints how many rows moved by more
than 10%, how many of those carry no ``unstable`` flag (``stationary`` not false), the share of
ok rows that is, and the worst ten. The target on a fresh full run: unflagged moves on at most
1% of ok rows. With ``--replay``, the stored flags are replaced by what this version's test
(:func:`benchsite.measure.stationarity.detect_drift`) says of the stored samples: how a rule would have
flagged an old run, without the re-sampling that a flag triggers during a run.

    python benchmarks/stability.py examples/h200/results
    python benchmarks/stability.py results --threshold 0.05
    python benchmarks/stability.py examples/h200/results --host h200 --worst 40
    python benchmarks/stability.py examples/h200/results --host h200 --replay
"""

from __future__ import annotations

import argparse
import json
import sys

from benchsite.measure.stationarity import detect_drift, early_late_shift
from benchsite.store import parts as store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", help="results folder (Parquet store)")
    parser.add_argument("--threshold", type=float, default=0.10, help="relative move (0.10)")
    parser.add_argument("--worst", type=int, default=10)
    parser.add_argument("--host", help="only this host's rows")
    parser.add_argument(
        "--replay",
        action="store_true",
        help="flag with this version's drift test instead of the stored flag",
    )
    args = parser.parse_args()
    frame = store.read_results(args.store)
    ok = frame[(frame["status"] == "ok") & frame["host"].eq(args.host or frame["host"])].copy()
    if ok.empty:
        print(f"{args.store}: no ok rows")
        return 1
    ok["moved"] = [early_late_shift(list(samples)) for samples in ok["samples_s"]]
    ok = ok[ok["moved"].notna()]
    if args.replay:
        ok["stationary"] = [detect_drift(list(samples)).stationary for samples in ok["samples_s"]]
    ok["size"] = (ok["moved"].astype(float) - 1).abs()
    shifted = ok[ok["size"] > args.threshold]
    unflagged = shifted[shifted["stationary"].ne(False)]
    flagged = int(ok["stationary"].eq(False).sum())
    print(
        f"{args.store}: {len(ok)} ok rows with samples; {len(shifted)} moved more than "
        f"{args.threshold:.0%} (first fifth vs last half); {len(unflagged)} of them unflagged "
        f"({len(unflagged) / len(ok):.1%} of ok rows; target at most 1%); {flagged} flagged in "
        f"all{' (replayed)' if args.replay else ''}"
    )
    print(f"\nworst {args.worst} (shift = late/early median):")
    for _, row in shifted.sort_values("size", ascending=False).head(args.worst).iterrows():
        flag = "unstable" if row["stationary"] is False else "UNFLAGGED"
        print(
            f"  {row['moved']:6.3f}  {flag:<9}  {row['workload']} {_params(row['params'])} on "
            f"{row['device']}: median {row['median_s'] * 1e6:.2f} µs, ±{row['rel_ci']:.1%}, "
            f"{len(row['samples_s'])} samples"
        )
    return 0


def _params(text: str) -> str:
    return " ".join(f"{k}={v}" for k, v in json.loads(text or "{}").items())


if __name__ == "__main__":
    sys.exit(main())
