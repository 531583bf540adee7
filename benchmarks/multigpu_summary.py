"""The multi-GPU figures from a results store: what several GPUs bought.

Prints, for the newest row of every distributed case (per host and device kind): each case's
status; the throughput gain and scaling efficiency of every training workload over GPUs,
within each host (strong scaling and the pipeline: T1 / (N · TN); weak: samples/s at N over
N × samples/s at 1); all-reduce algorithm and bus bandwidth per message size; and per-GPU
peak memory and training-state bytes of DDP, FSDP and pipeline parallelism side by side.

    python benchmarks/multigpu_summary.py results [--kind cuda]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from benchsite.plugins.analyses.multi_gpu import scaling_curves

from benchsite.store import parts as store

DISTRIBUTED = ("ddp-train", "fsdp-train", "pipeline-train", "allreduce")
PEAK = "memory.gpu_peak_allocated_bytes"


def newest_rows(results: Path, kind: str | None) -> pd.DataFrame:
    """The newest row of every (host, device kind, case) of the distributed workloads."""
    frame = store.read_results(results)
    frame = frame[frame["workload"].isin(DISTRIBUTED)]
    if kind:
        frame = frame[frame["device_kind"] == kind]
    frame = frame.drop_duplicates(["host", "device_kind", "case_key"], keep="last").copy()
    frame["p"] = store.decode_json(frame, "params")
    frame["m"] = store.decode_json(frame, "metrics")
    frame["n"] = frame["world_size"].fillna(1).astype(int)
    return frame.reset_index(drop=True)


def _case(params: dict, skip: tuple[str, ...] = ("world_size",)) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in skip)


def print_statuses(rows: pd.DataFrame) -> None:
    print("## Cases")
    for row in rows.itertuples():
        error = f"  ({row.error})" if isinstance(row.error, str) else ""
        print(f"{row.workload:15} {row.device:10} {_case(row.p, ())}: {row.status}{error}")


def print_scaling(rows: pd.DataFrame) -> None:
    """Each training case at N GPUs against 1, as the site's multi-GPU findings compute it."""
    print("\n## Scaling over GPUs (ddp-train, fsdp-train, pipeline-train)")
    ok = rows[rows["status"] == "ok"]
    curves = scaling_curves(ok.assign(series=[_case(p) for p in ok["p"]]))
    if curves.empty:  # no case measured at 1 GPU and at more on this host
        return
    for workload, series in curves[["workload", "series"]].drop_duplicates().itertuples(False):
        points = curves[(curves["workload"] == workload) & (curves["series"] == series)]
        one = points[points["devices"] == 1].iloc[0]
        for row in points[points["devices"] > 1].itertuples():
            print(
                f"{workload} {series}: {row.devices} GPUs {row.items_per_s:,.0f} samples/s vs "
                f"1 GPU {one.items_per_s:,.0f} ({row.gain:.2f}x) -> scaling efficiency "
                f"{row.efficiency:.1%}"
            )


def print_allreduce(rows: pd.DataFrame) -> None:
    print("\n## All-reduce bandwidth (nccl-tests definitions)")
    ok = rows[(rows["workload"] == "allreduce") & (rows["status"] == "ok")]
    for row in ok.sort_values(["n", "axis_value"]).itertuples():
        size = int(row.p["size"])
        algbw, busbw = row.m.get("algbw_gbps"), row.m.get("busbw_gbps")
        bandwidth = f"algbw {algbw:.1f} GB/s, busbw {busbw:.1f} GB/s" if busbw else "no traffic"
        print(f"{row.n} ranks, {size / 2**20:g} MiB: {row.median_s * 1e6:,.1f} µs, {bandwidth}")


def print_memory(rows: pd.DataFrame) -> None:
    print("\n## Per-GPU memory: DDP vs FSDP vs pipeline (transformer)")
    train = rows[(rows["workload"] != "allreduce") & (rows["status"] == "ok")]
    train = train[train["p"].map(lambda p: p.get("model") == "transformer")]
    for row in train.sort_values(["n", "workload"]).itertuples():
        per_rank = [r.get("metrics", {}).get(PEAK) for r in json.loads(row.ranks or "[]")]
        peaks = ", ".join(_gib(v) for v in per_rank)
        print(
            f"{row.workload:15} {row.n} GPUs {row.p.get('scaling', 'strong'):6}: "
            f"peak {_gib(row.m.get(PEAK))} per GPU (ranks: {peaks}); "
            f"training state {_gib(row.m.get('state_bytes'))} per GPU"
        )


def _gib(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 2**30:.2f} GiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="results store folder")
    parser.add_argument("--kind", help="device kind to show (cuda, cpu); default all")
    args = parser.parse_args()
    rows = newest_rows(args.results, args.kind)
    if rows.empty:
        raise SystemExit(f"{args.results} holds no distributed case")
    for (host, kind), group in rows.groupby(["host", "device_kind"], observed=True):
        print(f"# {host}: {kind}")  # scaling compares world sizes within one host only
        print_statuses(group)
        print_scaling(group)
        print_allreduce(group)
        print_memory(group)


if __name__ == "__main__":
    main()
