"""The headline figures of a suite run, read from a results store: matmul bf16 TFLOP/s at 8192,
copy GB/s at 1 GiB, pinned vs pageable transfer GB/s at the largest size measured, MLP and
transformer training speedups (GPU over CPU, same parameters), the largest batch found on each
device, statuses, and the run's wall time (first case start to last case end).

    python benchmarks/suite_figures.py results/          # newest run in the store
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from benchsite.store import parts as store

GIB = 2**30


def newest_run(root: Path) -> pd.DataFrame:
    frame = store.read_results(root)
    if frame.empty:
        raise SystemExit(f"{root} holds no results")
    run_id = frame.sort_values("timestamp").iloc[-1]["run_id"]
    rows = frame[frame["run_id"] == run_id].reset_index(drop=True)
    params = store.expand_json(rows, "params")
    metrics = store.expand_json(rows, "metrics", prefix="m.")
    return pd.concat([rows, params.drop(columns=rows.columns, errors="ignore"), metrics], axis=1)


def pick(rows: pd.DataFrame, workload: str, **params: object) -> pd.DataFrame:
    chosen = rows[(rows["workload"] == workload) & (rows["status"] == "ok")]
    for key, value in params.items():
        if key not in chosen:
            return chosen.iloc[0:0]
        chosen = (
            chosen[chosen[key].fillna(False) == value]
            if isinstance(value, bool)
            else (chosen[chosen[key] == value])
        )
    return chosen


def speedups(rows: pd.DataFrame, workload: str, axis: str) -> str:
    chosen = pick(rows, workload, precision="fp32")
    for technique in ("checkpointing", "compile"):
        if technique in chosen:
            chosen = chosen[chosen[technique].isna() | (chosen[technique] == False)]  # noqa: E712
    if "seq_len" in chosen and chosen["seq_len"].notna().any():
        chosen = chosen[chosen["seq_len"] == 128]
    if chosen.empty or axis not in chosen:
        return "not in this run"
    table = chosen.pivot_table(index=axis, columns="device_kind", values="median_s", observed=True)
    if not {"cpu", "cuda"} <= set(table.columns):
        return "needs both cpu and cuda rows"
    ratio = table["cpu"] / table["cuda"]
    return ", ".join(f"{axis} {int(k)}: {v:.1f}×" for k, v in ratio.items())


def main(root: Path) -> None:
    rows = newest_run(root)
    wall = (rows["timestamp"].max() - rows["timestamp"].min()).total_seconds()
    print(
        f"run {rows['run_id'].iloc[0]} on {rows['host'].iloc[0]}: {len(rows)} rows, "
        f"statuses {rows['status'].value_counts().to_dict()}, wall ≈ {wall:.0f} s "
        "(first case stored to last; add the first case and start-up)"
    )
    for _, row in pick(rows, "matmul", size=8192).iterrows():
        copies = " incl. host<->device copies" if row.get("include_transfer") is True else ""
        print(
            f"matmul 8192 {row['precision']:>4} {row['device']}{copies}: "
            f"{row['tflops']:.2f} TFLOP/s"
        )
    for _, row in pick(rows, "copy", size=GIB).iterrows():
        print(f"copy 1 GiB {row['device']}: {row['gbps']:.1f} GB/s")
    transfers = pick(rows, "transfer")
    largest = transfers["size"].max() if not transfers.empty else None
    for _, row in pick(rows, "transfer", size=largest).iterrows():
        kind = "pinned" if row["pinned"] else "pageable"
        print(
            f"transfer {largest / 2**20:.0f} MiB {row['direction']} {kind}: {row['gbps']:.1f} GB/s"
        )
    print("mlp-train speedup GPU/CPU:", speedups(rows, "mlp-train", "batch"))
    print(
        "transformer-train speedup GPU/CPU (seq 128):", speedups(rows, "transformer-train", "batch")
    )
    for _, row in pick(rows, "max-batch").iterrows():
        print(
            f"max-batch {row['device']}: {row['m.max_batch']:.0f} (limit "
            f"{row['m.max_batch_limit_bytes'] / GIB:.2f} GiB, footprint "
            f"{row['m.max_batch_peak_bytes'] / GIB:.2f} GiB)"
        )
    compiled = rows[rows.get("m.compile_s").notna()] if "m.compile_s" in rows else rows.iloc[0:0]
    for _, row in compiled.iterrows():
        print(f"compile_s {row['workload']} {row['device']}: {row['m.compile_s']:.1f} s")
    bad = rows[~rows["status"].isin(["ok", "skipped"])]
    for _, row in bad.iterrows():
        print(
            f"NOT OK {row['status']}: {row['workload']} {row['device']} {row['params']}: "
            f"{row['error']}"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "results"))
