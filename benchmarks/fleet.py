"""A fleet's store: can `benchsite build` take a million rows? Writes a synthetic store of
200 hosts × 5,000 result rows (a 1,000-case suite — 20 workloads × 5 precisions × 5 sizes × CPU
and GPU — measured in 5 runs per host; hosts cycle through 4 GPU and 3 CPU models), then
builds the site twice (cold: no chart SVG on disk and no Vega bundle cached; warm: a rebuild),
each in a fresh `benchsite build` process, and prints for each the wall-clock time, the CPU
time (the build and every worker it waited for), the peak RSS of its largest process and the
largest page.

    python3 benchmarks/fleet.py [--hosts 200] [--runs 5] [--keep DIR]

Targets on a 2-core machine (#21): cold build under 60 s, peak memory under 4 GiB, every page
under 300 KB.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _synthetic import Shape, write_store

FLEET = Shape(hosts=200, runs=5, sizes=tuple(2**k for k in range(6, 11)), models=4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=FLEET.hosts)
    parser.add_argument("--runs", type=int, default=FLEET.runs, help="runs per host")
    parser.add_argument("--keep", type=Path, help="build the site into this folder and keep it")
    args = parser.parse_args()
    shape = Shape(hosts=args.hosts, runs=args.runs, sizes=FLEET.sizes, models=FLEET.models)
    with tempfile.TemporaryDirectory() as temp:
        results, out = Path(temp) / "results", args.keep or Path(temp) / "site"
        started = time.perf_counter()
        rows = write_store(results, shape)
        print(
            f"store: {rows} rows, {shape.hosts} hosts × {shape.runs} runs × {shape.cases} "
            f"cases, written in {time.perf_counter() - started:.1f} s"
        )
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(temp) / "cache")}  # bundle made too
        for label in ("cold", "warm"):
            print(f"{label} build: {timed_build(results, out, env)}", flush=True)
        largest = max(out.rglob("*.html"), key=lambda p: p.stat().st_size)
        print(f"largest page: {largest.relative_to(out)} {largest.stat().st_size / 1024:.0f} KB")
    # The 20-writer check of #21 (20 hosts writing one store at once: rows expected, found,
    # duplicated) belongs here, beside the build figures; it is written with the concurrent
    # writers it checks.


# a build in a process of its own that prints, as it ends, how long each stage took and the
# peak RSS (KiB) of itself and of the largest of its workers: what a machine must hold for it
MEASURED = """
import resource, sys
from pathlib import Path
from benchsite.site import BuildOptions, build_site
report = build_site(BuildOptions(results=Path(sys.argv[1]), out=Path(sys.argv[2])))
print(", ".join(f"{name} {seconds:.1f} s" for name, seconds in report.stages.items()),
      f"({report.files} files, {report.charts_rendered} chart SVGs drawn)")
print("peak-rss", *(resource.getrusage(who).ru_maxrss
                    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
"""


def timed_build(results: Path, out: Path, env: dict[str, str]) -> str:
    """Build the site in a fresh process (:data:`MEASURED`); its time, CPU time and peak RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-c", MEASURED, str(results), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the build failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    lines = done.stdout.strip().splitlines()
    own, worker = (int(kib) / 2**20 for kib in lines[-1].split()[1:])
    return (
        f"{wall:.1f} s ({cpu:.1f} CPU-s), peak RSS {own:.2f} GiB (its largest worker "
        f"{worker:.2f} GiB); stages: {lines[-2]}"
    )


if __name__ == "__main__":
    main()
