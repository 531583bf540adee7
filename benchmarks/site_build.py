"""How fast is `benchsite build` on a large store? Writes a synthetic store of 100,000 result
rows (many hosts, runs, workloads, a CPU and GPUs per host), builds the site twice (cold: no
chart SVG on disk and no Vega bundle in the user's cache; warm: a rebuild) and prints the
times, wall-clock and CPU, and the largest HTML page; then draws the site's chart SVGs again,
alone, to show what they cost a cold build. The CPU time (this process and every worker and
vl-convert process it waited for) tells machines apart: the same cold build has taken 8.5 s
for 16 CPU-s on one 2-core machine and ~18 s for ~33 CPU-s on another.

    python3 benchmarks/site_build.py [--rows 100000] [--rebuilds 1] [--keep DIR]

``--rebuilds N`` times N rebuilds and prints each and their median: a shared machine's speed
moves by a third from minute to minute, more than most changes do. Each build's line ends
with what creating one file cost just before it (:func:`file_creation_ms`): a build writes
every file anew, and on those machines that cost alone moved from 0.1 to 2.7 s of a rebuild;
and with a yardstick of the machine's Python speed (:func:`python_ms`): two builds are
compared fairly only where it read about the same. Pin it to two CPUs of a bigger machine
with ``taskset -c 0,1``: the build and this script count the CPUs they may use.

Targets on a 2-core machine: a build under 15 s, a rebuild under 8 s, every HTML page under
300 KB.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _synthetic import Shape
from _synthetic import write_store as write_synthetic

from benchsite._infra.pool import cores
from benchsite.site import BuildOptions, build_site
from benchsite.site.assets import MAX_WORKERS, draw_missing
from benchsite.site.publish import Staging
from benchsite.site.specs import ChartSpec

SPEC = re.compile(r'<script type="application/json" id="chart-[0-9a-f]+-spec">(.*?)</script>', re.S)


def write_store(root: Path, total_rows: int) -> int:
    """Runs of a 2,000-case suite (20 workloads × 5 precisions × 10 sizes × CPU and
    GPU, :mod:`_synthetic`), as many runs as ``total_rows`` needs, 10 per host."""
    per_host = 10
    runs = max(1, total_rows // Shape().cases)
    hosts = max(1, -(-runs // per_host))
    return write_synthetic(root, Shape(hosts=hosts, runs=min(runs, per_host)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rebuilds", type=int, default=1, help="time this many rebuilds")
    parser.add_argument("--keep", type=Path, help="build the site into this folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        results, out = Path(temp) / "results", args.keep or Path(temp) / "site"
        os.environ["XDG_CACHE_HOME"] = str(Path(temp) / "cache")  # the Vega bundle made too
        rows = write_store(results, args.rows)
        rebuilds = []
        for label in ("cold", *["warm"] * max(1, args.rebuilds)):
            creating, python = file_creation_ms(out.parent), python_ms()
            started, before = time.perf_counter(), cpu_seconds()
            report = build_site(BuildOptions(results=results, out=out))
            seconds = time.perf_counter() - started
            rebuilds += [seconds] if label == "warm" else []
            print(
                f"{label} build: {seconds:.1f} s "
                f"({cpu_seconds() - before:.1f} CPU-s) for {rows} rows, "
                f"{report.files} files, {report.charts_rendered} chart SVGs drawn "
                f"({report.chart_seconds:.1f} s of vl-convert time); stages: "
                + ", ".join(f"{name} {sec:.1f} s" for name, sec in report.stages.items())
                + f"; just before, a file took {creating:.2f} ms to create and "
                f"the Python yardstick {python:.0f} ms"
            )
        if len(rebuilds) > 1:
            print(
                f"{len(rebuilds)} rebuilds: median {statistics.median(rebuilds):.1f} s, "
                f"{min(rebuilds):.1f}–{max(rebuilds):.1f} s"
            )
        pages = sorted(out.rglob("*.html"), key=lambda p: p.stat().st_size)
        largest = pages[-1]
        print(
            f"largest page: {largest.relative_to(out)} {largest.stat().st_size / 1024:.0f} KB "
            f"({len(pages)} pages)"
        )
        time_svgs_alone(out, Path(temp) / "svgs")


def file_creation_ms(folder: Path, files: int = 500) -> float:
    """Milliseconds to create (and write 6 KB into) one file in ``folder``, over ``files``
    files, deleted again. A build writes every page anew (~2,240 files here); on the shared
    machine these figures come from, one file took 0.03 to 1.2 ms from one minute to the next
    on the same ext4 disk: up to ~2.7 s of a rebuild, unrelated to benchsite's code."""
    probe = folder / f".probe-{os.getpid()}"
    probe.mkdir()
    started = time.perf_counter()
    for n in range(files):
        (probe / f"{n}.html").write_text("x" * 6000, encoding="utf-8")
    milliseconds = (time.perf_counter() - started) * 1000 / files
    shutil.rmtree(probe)
    return milliseconds


def python_ms(rounds: int = 3) -> float:
    """Milliseconds this machine takes for a fixed piece of the work a build's CPU time goes to
    (numbers formatted, strings joined, dicts filled), the best of ``rounds``: a rough
    yardstick of its speed just before a build, to tell a slower machine from slower code.
    Rough: a shared machine's speed also moves during the build (on one 2-CPU allocation it
    read 82-188 ms within five minutes, and a 5.5 s rebuild followed 85 ms, an 8.4 s one
    90 ms)."""
    best = math.inf
    for _ in range(rounds):
        started = time.perf_counter()
        texts: dict[int, str] = {}
        for n in range(200_000):
            texts[n % 5_000] = f"<td>{n / 7:.3g} ms</td>"
        "".join(texts.values())
        best = min(best, time.perf_counter() - started)
    return best * 1000


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
    workers = min(len(specs), cores(), MAX_WORKERS)
    print(
        f"the {drawn.count} chart SVGs alone: {time.perf_counter() - started:.1f} s in "
        f"{workers} vl-convert processes ({cpu:.1f} CPU-s)"
    )


if __name__ == "__main__":
    main()
