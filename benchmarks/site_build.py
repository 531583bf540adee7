"""How fast is `benchsite build` on a large store? Writes a synthetic store of 100,000 result
rows (many hosts, runs, workloads, a CPU and GPUs per host), builds the site twice (cold: no
chart SVG on disk and no Vega bundle in the user's cache; warm: a rebuild) and prints the
times, wall-clock and CPU, and the largest HTML page; then draws the site's chart SVGs again,
alone, to show what they cost a cold build. The CPU time (this process and every worker and
vl-convert process it waited for) tells machines apart: the same cold build has taken 8.5 s
for 16 CPU-s on one 2-core machine and ~18 s for ~33 CPU-s on another.

    python3 benchmarks/site_build.py [--rows 100000] [--keep DIR]

Targets on a 2-core machine: a build under 15 s, every HTML page under 300 KB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchsite import store
from benchsite.site import BuildOptions, build_site
from benchsite.site.assets import MAX_WORKERS, draw_missing
from benchsite.site.publish import Staging
from benchsite.specs import ChartSpec

HOSTS, RUNS_PER_HOST, WORKLOADS = 10, 10, 20
SPEC = re.compile(r'<script type="application/json" id="chart-[0-9a-f]+-spec">(.*?)</script>', re.S)
SIZES = [2**k for k in range(6, 16)]  # 10 sizes × 5 variants = 50 cases per workload and device


def synthetic_run(host: int, run: int, rng: np.random.Generator) -> pa.Table:
    """One run of one host: every workload × 50 cases × (cpu, cuda:0)."""
    rows: dict[str, list] = {name: [] for name in store.SCHEMA.names}
    started = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=host * 7 + run * 3)
    for workload in range(WORKLOADS):
        for variant in range(5):
            for size in SIZES:
                for device, kind, speed in (("cpu", "cpu", 1.0), ("cuda:0", "cuda", 40.0)):
                    _add_row(rows, host, run, workload, variant, size, device, kind, speed,
                             started, rng)
    return pa.table(rows, schema=store.SCHEMA)


def _add_row(rows, host, run, workload, variant, size, device, kind, speed, started, rng):
    params = {"size": size, "precision": ["fp32", "bf16", "fp16", "tf32", "fp64"][variant]}
    median = 1e-6 * size ** 1.5 / speed + (2e-5 if kind == "cuda" else 1e-6)
    samples = list(median * rng.lognormal(0, 0.02, 7))
    values = {
        "row_id": f"h{host}r{run}w{workload}v{variant}s{size}{device}",
        "run_id": f"run-{host}-{run}", "host": f"host-{host}", "device": device,
        "device_kind": kind, "device_model": "Synthetic " + kind.upper(),
        "fingerprint": f"{kind}-{host}", "workload": f"workload-{workload:02d}",
        "plugin": "synthetic", "plugin_version": "1", "profile": "full",
        "params": json.dumps(params, sort_keys=True),
        "case_key": f"workload-{workload:02d}?{json.dumps(params, sort_keys=True)}",
        "axis": "size", "axis_value": float(size), "status": "ok", "samples_s": samples,
        "timestamp": started + timedelta(seconds=workload * 60 + variant),
        "calls_per_sample": 10, "n_samples": 7, "warmup_calls": 4, "median_s": median,
        "ci_low_s": min(samples), "ci_high_s": max(samples), "iqr_s": median * 0.02,
        "flops": 2.0 * size**3, "tflops": 2.0 * size**3 / median / 1e12, "world_size": 1,
        "metrics": json.dumps({"memory.cpu_peak_rss_bytes": size * size * 12.0}),
        "device_info": json.dumps({"model": "Synthetic", "memory_bytes": 80 * 2**30}),
        "schema_version": store.SCHEMA_VERSION,
    }
    for name in rows:
        rows[name].append(values.get(name))


def write_store(root: Path, total_rows: int) -> int:
    rng, written = np.random.default_rng(0), 0
    per_run = WORKLOADS * 5 * len(SIZES) * 2
    for index in range(max(1, total_rows // per_run)):
        host, run = divmod(index, RUNS_PER_HOST)
        folder = store.run_dir(root, f"host-{host}", f"run-{host}-{run}")
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(synthetic_run(host, run, rng), folder / "part-0.parquet")
        written += per_run
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="build the site into this folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        results, out = Path(temp) / "results", args.keep or Path(temp) / "site"
        os.environ["XDG_CACHE_HOME"] = str(Path(temp) / "cache")  # the Vega bundle made too
        rows = write_store(results, args.rows)
        for label in ("cold", "warm"):
            started, before = time.perf_counter(), cpu_seconds()
            report = build_site(BuildOptions(results=results, out=out))
            print(f"{label} build: {time.perf_counter() - started:.1f} s "
                  f"({cpu_seconds() - before:.1f} CPU-s) for {rows} rows, "
                  f"{report.files} files, {report.charts_rendered} chart SVGs drawn "
                  f"({report.chart_seconds:.1f} s of vl-convert time); stages: "
                  + ", ".join(f"{name} {sec:.1f} s" for name, sec in report.stages.items()))
        pages = sorted(out.rglob("*.html"), key=lambda p: p.stat().st_size)
        largest = pages[-1]
        print(f"largest page: {largest.relative_to(out)} {largest.stat().st_size / 1024:.0f} KB "
              f"({len(pages)} pages)")
        time_svgs_alone(out, Path(temp) / "svgs")


def cpu_seconds() -> float:
    """CPU time of this process and of every child it has waited for (the build's workers and
    vl-convert processes): what a build costs, whatever the machine's number of cores."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def time_svgs_alone(site: Path, folder: Path) -> None:
    """Draw every chart of the built site again into an empty folder, with nothing else running:
    the specs are read back from the pages (each sits in a ``<script id="chart-…-spec">``)."""
    specs = {}
    for page in site.rglob("*.html"):
        for text in SPEC.findall(page.read_text(encoding="utf-8")):
            spec = json.loads(text)
            chart = ChartSpec(spec, json.dumps(spec, sort_keys=True))
            specs[chart.svg] = chart
    started, before = time.perf_counter(), cpu_seconds()
    folder.mkdir()
    drawn = draw_missing(specs.values(), Staging(out=folder / "none", folder=folder))
    cpu = cpu_seconds() - before
    workers = min(len(specs), os.cpu_count() or 1, MAX_WORKERS)
    print(f"the {drawn.count} chart SVGs alone: {time.perf_counter() - started:.1f} s in "
          f"{workers} vl-convert processes ({cpu:.1f} CPU-s)")


if __name__ == "__main__":
    main()
