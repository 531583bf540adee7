"""Soak test of the store's crash safety: many runs, killed at random, resumed, counted.

N runs (default 200) of a fast workload (the test casebook's ``case-add``: 2 cases) write into
ONE store, 4 at a time. Most are killed at a random moment with SIGKILL or SIGINT (start-up,
measuring, writing, compacting: wherever the timer lands), some exactly at a step of a store
write through ``BENCHSITE_FAULT`` (the narrow windows a timer rarely hits). Then each killed
run is resumed with ``--resume`` (a run killed before it stored anything is started again).
Meanwhile a reader reads the whole store over and over and counts any duplicate it ever sees.
Every process a run started is tracked; one still alive after its run died is an orphan.

Every run's stderr is kept: a traceback in any of them is counted.

With ``--s3`` the store is a bucket of a local S3-compatible server (moto's, as the tests start
it: ``tests/s3_server.py``) and 8 runs write at once: there a run's one writer is a lease object
(``benchsite.store.lease``), a killed writer's taken over by its ``--resume``.

Prints: rows expected, rows found, duplicates, orphans, tracebacks. They must be: all, 0, 0, 0.

    python benchmarks/soak.py              # 200 runs, 4 writers, a local store
    python benchmarks/soak.py --s3         # 200 runs, 8 writers, a local S3 server
    python benchmarks/soak.py --runs 40    # a quicker pass
    python benchmarks/soak.py --minutes 30 # start no run after 30 minutes (a busy machine)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from benchsite.store import parts as store
from benchsite.store.remote import locate

ROOT = Path(__file__).resolve().parent.parent
CASEBOOK = str(ROOT / "tests" / "plugins" / "casebook.py")
CASES_PER_RUN = 2  # case-add: size 1024 and 4096, on the CPU
FAULTS = (
    "write:after-write",
    "write:after-rename",
    "write:after-write@2",
    "compact:after-write",
    "compact:after-rename",
    "compact:after-unlink",
)


@dataclass
class Tally:
    """What the soak saw, shared by the writer threads."""

    killed: dict[str, int] = field(default_factory=dict)
    resumed: int = 0
    not_started: int = 0
    restarted: int = 0
    failures: list[str] = field(default_factory=list)
    tracked: list[psutil.Process] = field(default_factory=list)
    reads: int = 0
    duplicates_seen: int = 0
    tracebacks: list[str] = field(default_factory=list)  # the stderr of each run that had one
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, how: str) -> None:
        with self.lock:
            self.killed[how] = self.killed.get(how, 0) + 1

    def stderr(self, text: str) -> str:
        """Keep a run's stderr if it holds a traceback; the text, for the caller."""
        if "Traceback" in text:
            with self.lock:
                self.tracebacks.append(text)
        return text


def command(results: str, host: str, *extra: str) -> list[str]:
    args = ["run", "-w", "case-add", "-d", "cpu", "-p", CASEBOOK, "--budget", "0.02"]
    return [
        sys.executable,
        "-m",
        "benchsite",
        *args,
        "--results",
        str(results),
        "--host",
        host,
        *extra,
    ]


def start(cmd: list[str], fault: str | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "BENCHSITE_FAULT"}
    if fault:
        env["BENCHSITE_FAULT"] = fault
    return subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        start_new_session=True,  # a signal meant for this soak never reaches the runs
    )


def watch(process: subprocess.Popen, tally: Tally, kill_after: float | None, how: str) -> int:
    """Wait for ``process``, recording its descendants; kill it after ``kill_after`` seconds."""
    deadline = time.monotonic() + kill_after if kill_after is not None else None
    seen: dict[int, psutil.Process] = {}
    parent = psutil.Process(process.pid)
    while process.poll() is None:
        try:
            for child in parent.children(recursive=True):
                seen.setdefault(child.pid, child)
        except psutil.Error:
            pass
        if deadline is not None and time.monotonic() >= deadline:
            process.send_signal(signal.SIGKILL if how == "SIGKILL" else signal.SIGINT)
            tally.count(how)
            deadline = None
        time.sleep(0.05)
    _, err = process.communicate()
    tally.stderr(err)
    with tally.lock:
        tally.tracked.extend(seen.values())
    return process.returncode


def one_run(index: int, results: str, tally: Tally, rng: random.Random, deadline: float) -> None:
    if time.monotonic() > deadline:  # --minutes ran out: this run is not started, not counted
        with tally.lock:
            tally.not_started += 1
        return
    host = f"soak{index:04d}"
    roll = rng.random()
    fault, kill_after, how = None, None, ""
    if roll < 0.25:
        fault = rng.choice(FAULTS)
        tally.count(f"fault {fault}")
    elif roll < 0.85:
        kill_after, how = rng.uniform(0.1, 10.0), rng.choice(("SIGKILL", "SIGINT"))
    code = watch(start(command(results, host), fault), tally, kill_after, how)
    if code == 0:
        return
    resumed = start(command(results, host, "--resume"))
    err = tally.stderr(resumed.communicate()[1])
    if resumed.returncode == 0:
        with tally.lock:
            tally.resumed += 1
        return
    if "nothing to resume" in err:  # killed before it stored anything: start it again
        again = start(command(results, host))
        err = tally.stderr(again.communicate()[1])
        with tally.lock:
            tally.restarted += 1
        if again.returncode == 0:
            return
    with tally.lock:
        tally.failures.append(f"{host}: {err.strip().splitlines()[-1:] or resumed.returncode}")


def reader(results: str, tally: Tally, stop: threading.Event) -> None:
    """Read the store while it is written: every read must hold each row once."""
    import warnings

    while not stop.is_set():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = store.read_results(locate(results))
        repeated = frame.duplicated(["host", "run_id", "device", "case_key"]).sum()
        with tally.lock:
            tally.reads += 1
            tally.duplicates_seen += int(repeated)
        stop.wait(0.5)


def orphans(tally: Tally) -> list[psutil.Process]:
    """Processes started by a run that are still alive (given a few seconds to notice)."""
    time.sleep(3)
    alive = []
    for process in tally.tracked:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.Error:
            pass
    return alive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--writers", type=int, default=None, help="at once (4; 8 with --s3)")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--results", type=Path, default=None, help="store (default: a temp dir)")
    parser.add_argument("--s3", action="store_true", help="a bucket of a local S3 server")
    parser.add_argument(
        "--minutes", type=float, default=None, help="start no run after this (busy machines)"
    )
    args = parser.parse_args()
    args.writers = args.writers or (8 if args.s3 else 4)
    with contextlib.ExitStack() as stack:
        results = stack.enter_context(s3_bucket()) if args.s3 else local_store(args.results)
        soak(args, results)


def soak(args: argparse.Namespace, results: str) -> None:
    rngs = [random.Random(args.seed * 100_003 + index) for index in range(args.runs)]
    tally, stop = Tally(), threading.Event()
    reading = threading.Thread(target=reader, args=(results, tally, stop), daemon=True)
    started = time.monotonic()
    deadline = started + args.minutes * 60 if args.minutes else float("inf")
    reading.start()
    with ThreadPoolExecutor(args.writers) as pool:
        for future in [
            pool.submit(one_run, index, results, tally, rngs[index], deadline)
            for index in range(args.runs)
        ]:
            future.result()
    stop.set()
    reading.join()
    report(args, results, tally, orphans(tally), time.monotonic() - started)


def local_store(results: Path | None) -> str:
    return str(results or Path(tempfile.mkdtemp(prefix="benchsite-soak-")) / "results")


@contextlib.contextmanager
def s3_bucket() -> Iterator[str]:
    """``s3://<bucket>/results`` on a local S3 server started for the soak (stopped after);
    this process' environment, which the runs inherit, points at it."""
    import boto3

    port_file = Path(tempfile.mkdtemp(prefix="benchsite-soak-s3-")) / "port"
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "s3_server.py"), str(port_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not port_file.exists() or not port_file.read_text():
            time.sleep(0.05)
        os.environ.update(
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{port_file.read_text()}",
            AWS_ACCESS_KEY_ID="soak",
            AWS_SECRET_ACCESS_KEY="soak-secret",
            AWS_DEFAULT_REGION="us-east-1",
            AWS_EC2_METADATA_DISABLED="true",
        )
        boto3.client("s3").create_bucket(Bucket="soak")
        yield "s3://soak/results"
    finally:
        server.terminate()
        server.wait(timeout=30)


def report(args, results: str, tally: Tally, left: list, seconds: float) -> None:
    frame = store.read_results(locate(results))
    cases_twice = int(frame.duplicated(["host", "run_id", "device", "case_key"]).sum())
    ids_twice = int(frame["row_id"].duplicated().sum())
    runs_per_host = frame.groupby("host")["run_id"].nunique()
    runs = args.runs - tally.not_started
    print(f"store: {results}  ({runs} runs, {args.writers} writers, {seconds:.0f} s)")
    if tally.not_started:
        print(f"not started (--minutes {args.minutes:g} ran out): {tally.not_started} runs")
    print(f"kills: {dict(sorted(tally.killed.items()))}")
    print(f"resumed: {tally.resumed}, started again (killed before storing): {tally.restarted}")
    print(f"reads during the soak: {tally.reads}, duplicates seen by them: {tally.duplicates_seen}")
    print(f"runs per host: {runs_per_host.min()}..{runs_per_host.max()}")
    print(f"rows expected: {runs * CASES_PER_RUN}")
    print(f"rows found:    {len(frame)}")
    print(f"duplicates:    {cases_twice + ids_twice + tally.duplicates_seen}")
    print(f"orphans:       {len(left)} {[p.pid for p in left]}")
    print(f"tracebacks:    {len(tally.tracebacks)}")
    for failure in tally.failures:
        print(f"FAILED {failure}")
    for text in tally.tracebacks[:3]:
        print(f"TRACEBACK\n{text}")
    clean = not (cases_twice or ids_twice or left or tally.tracebacks)
    ok = len(frame) == runs * CASES_PER_RUN and clean
    sys.exit(0 if ok and not tally.failures and not tally.duplicates_seen else 1)


if __name__ == "__main__":
    main()
