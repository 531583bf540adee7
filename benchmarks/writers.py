"""Many hosts writing one store at once: N ``benchsite run`` processes with distinct ``--host``
into one local folder and into one S3 bucket (moto's server on 127.0.0.1, tests/s3_server.py),
then the rows expected, found and duplicated (which must be: all, all, 0).

    python benchmarks/writers.py                 # 20 writers, local folder and S3
    python benchmarks/writers.py --writers 8 --store local

Each writer runs the two ``case-add`` cases of tests/plugins/casebook.py on the CPU, so the
store sees 2 parts per writer, then a compaction per writer, all at once. A duplicate is a case
(host, device, case key) stored more than once; a loss is an expected case not found.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASEBOOK = ROOT / "tests" / "plugins" / "casebook.py"
CASES_PER_WRITER = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=20)
    parser.add_argument("--store", choices=("local", "s3", "both"), default="both")
    args = parser.parse_args()
    print(
        f"{'store':<6} {'writers':>7} {'wall s':>7} {'expected':>8} {'found':>6} "
        f"{'duplicated':>10} {'lost':>5} {'failed':>6}"
    )
    with tempfile.TemporaryDirectory(prefix="benchsite-writers-") as scratch:
        if args.store in ("local", "both"):
            report("local", str(Path(scratch) / "store"), args.writers, {})
        if args.store in ("s3", "both"):
            with s3_server(Path(scratch)) as env:
                report("s3", make_bucket(env), args.writers, env)


def report(kind: str, results: str, writers: int, env: dict[str, str]) -> None:
    started = time.perf_counter()
    failed = run_writers(results, writers, env)
    wall = time.perf_counter() - started
    expected, found, duplicated, lost = count(results, writers, env)
    print(
        f"{kind:<6} {writers:>7} {wall:>7.1f} {expected:>8} {found:>6} {duplicated:>10} "
        f"{lost:>5} {failed:>6}"
    )


def run_writers(results: str, writers: int, env: dict[str, str]) -> int:
    """Start every writer at once; the number that did not exit 0."""
    command = [
        sys.executable,
        "-m",
        "benchsite.cli.app",
        "run",
        "-w",
        "case-add",
        "-p",
        str(CASEBOOK),
        "-d",
        "cpu",
        "--budget",
        "0.05",
        "--results",
        results,
    ]
    full_env = {**os.environ, **env}
    processes = [
        subprocess.Popen(
            [*command, "--host", f"writer-{index:02d}"],
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(writers)
    ]
    failed = 0
    for process in processes:
        _, err = process.communicate()
        if process.returncode != 0:
            failed += 1
            print(f"  a writer exited {process.returncode}: {err.strip()[-300:]}", file=sys.stderr)
    return failed


def count(results: str, writers: int, env: dict[str, str]) -> tuple[int, int, int, int]:
    """Rows expected, found, duplicated (a case stored again) and lost (a case missing)."""
    os.environ.update(env)
    from benchsite.store import parts as store
    from benchsite.store.remote import locate

    rows = store.read_results(locate(results))
    keys = rows[["host", "device", "case_key"]].astype(str).apply(tuple, axis=1)
    expected_keys = {
        (f"writer-{i:02d}", "cpu", key)
        for i in range(writers)
        for key in set(rows["case_key"].astype(str))
    }
    expected = writers * CASES_PER_WRITER
    return expected, len(rows), int(keys.duplicated().sum()), len(expected_keys - set(keys))


class s3_server:
    """moto's S3 server in its own process (tests/s3_server.py), and the environment for it."""

    def __init__(self, scratch: Path) -> None:
        self.port_file = scratch / "s3-port"

    def __enter__(self) -> dict[str, str]:
        server = [sys.executable, str(ROOT / "tests" / "s3_server.py"), str(self.port_file)]
        self.process = subprocess.Popen(server, stderr=subprocess.DEVNULL)
        while not self.port_file.exists() or not self.port_file.read_text():
            time.sleep(0.05)
        return {
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{self.port_file.read_text()}",
            "AWS_ACCESS_KEY_ID": "benchsite",
            "AWS_SECRET_ACCESS_KEY": "benchsite-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def make_bucket(env: dict[str, str]) -> str:
    import boto3

    os.environ.update(env)
    name = f"writers-{uuid.uuid4().hex[:8]}"
    boto3.client("s3").create_bucket(Bucket=name)
    return f"s3://{name}/store"


if __name__ == "__main__":
    main()
