"""The results store in an object store: run, resume, results, build and concurrent writers
against a real S3-compatible server (moto's, a separate process on 127.0.0.1, tests/s3_server.py)
reached through pyarrow's S3 filesystem, configured only by the usual environment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchsite.cli.app import main as cli_main
from benchsite.errors import StoreError
from benchsite.store import check as store_check
from benchsite.store import parts as store
from benchsite.store.remote import RemotePath, locate
from benchsite.testing import complete_row
from tests import emulators
from tests.conftest import FAST_RUN, patience

pytest.importorskip("moto.server", reason="moto[server] is in the test extra")


@pytest.fixture(scope="session")
def s3_env(tmp_path_factory: pytest.TempPathFactory):
    """The environment that points pyarrow (and boto3) at a fresh moto server."""
    with emulators.moto_s3(tmp_path_factory.mktemp("s3")) as port:
        yield {
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "AWS_ACCESS_KEY_ID": "benchsite",
            "AWS_SECRET_ACCESS_KEY": "benchsite-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }


@pytest.fixture
def bucket_url(s3_env, monkeypatch) -> str:
    """``s3://<new bucket>/store``, with this process's environment pointed at the server."""
    import boto3

    for name, value in s3_env.items():
        monkeypatch.setenv(name, value)
    name = f"bench-{uuid.uuid4().hex[:10]}"
    boto3.client("s3").create_bucket(Bucket=name)
    return f"s3://{name}/store"


def cli(*args: str, fault: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "1000"}
    env.pop("BENCHSITE_FAULT", None)
    if fault:
        env["BENCHSITE_FAULT"] = fault
    return subprocess.Popen(
        [sys.executable, "-m", "benchsite.cli.app", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def finish(process: subprocess.Popen, timeout: float = 180) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=patience(timeout))
    return process.returncode, out, err


def parts(url: str) -> list[str]:
    root = locate(url)
    assert isinstance(root, RemotePath)
    return [str(path) for path in root.glob("host=*/run=*/part-*.parquet")]


def leases(url: str) -> list[str]:
    root = locate(url)
    assert isinstance(root, RemotePath)
    return [str(path) for path in root.glob("host=*/run=*/.lease-*")]


@pytest.mark.slow
def test_a_run_killed_mid_run_and_mid_compaction_resumes_to_every_case_once(bucket_url):
    args = ("run", "-w", "case-add", *FAST_RUN, "--host", "h", "--results", bucket_url)
    code, _, err = finish(cli(*args, fault="write:after-rename"))  # killed after case 1 of 2
    assert code == -signal.SIGKILL, err
    (first,) = store.read_results(locate(bucket_url))["run_id"].astype(str)
    code, out, err = finish(cli(*args, "--resume", fault="compact:after-rename"))
    assert code == -signal.SIGKILL, err  # killed between the compacted object and the deletes
    assert f"run {first}" in out  # the same run, continued
    assert (
        len(parts(bucket_url)) >= 3
    )  # the compacted object and those it supersedes (a part a round)
    rows = store.read_results(locate(bucket_url))
    assert len(rows) == 2 and rows["case_key"].is_unique and rows["run_id"].nunique() == 1
    code, _, err = finish(cli(*args, "--resume"))  # finishes the compaction
    assert code == 0, err
    assert len(parts(bucket_url)) == 1 and len(store.read_results(locate(bucket_url))) == 2


def test_results_and_build_read_the_object_store(bucket_url, tmp_path, capsys):
    rows = [
        complete_row(  # two cases of one run (two rows of one case would read as one)
            {"row_id": f"r{i}", "run_id": "run1", "host": "h", "workload": "w", "median_s": 0.001}
            | {"params": {"size": i}}
        )
        for i in range(2)
    ]
    store.write_rows(locate(bucket_url), "h", "run1", rows)
    with pytest.raises(SystemExit) as stopped:
        cli_main(["results", "--results", bucket_url])
    assert stopped.value.code in (0, None) and "run1" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        cli_main(["build", "--results", bucket_url, "--out", str(tmp_path / "site")])
    assert stopped.value.code in (0, None)
    assert "from 2 rows" in capsys.readouterr().out
    assert (tmp_path / "site" / "index.html").exists()


WRITER = """
import sys
from benchsite.store import parts as store
from benchsite.store.remote import locate
from benchsite.testing import complete_row
root, host = locate(sys.argv[1]), sys.argv[2]
for case in range(5):  # a part per case, as a run writes them, then the run's compaction
    row = {"row_id": f"{host}-{case}", "run_id": "r", "host": host, "workload": f"w{case}"}
    store.write_rows(root, host, "r", [complete_row(row)])
store.compact_run(root, host, "r")
"""


def test_processes_writing_one_bucket_at_once_lose_and_repeat_nothing(bucket_url):
    hosts = [f"node{i}" for i in range(6)]
    running = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, bucket_url, host], stderr=subprocess.PIPE, text=True
        )
        for host in hosts
    ]
    for process in running:
        _, err = process.communicate(timeout=patience(180))
        assert process.returncode == 0, err
    rows = store.read_results(locate(bucket_url))
    assert sorted(rows["row_id"]) == sorted(f"{h}-{c}" for h in hosts for c in range(5))
    assert len(parts(bucket_url)) == len(hosts)  # one compacted object per run


def test_bad_urls_credentials_and_endpoints_are_one_line(bucket_url, monkeypatch):
    bucket = bucket_url.split("/")[2]
    cases = [
        ("ftp://x/y", {}, "unknown scheme 'ftp'"),
        ("s3:///store", {}, "name a bucket"),
        ("s3://no-such-bucket-here/store", {}, "does not exist: create it"),
        ("az://container/store", {"AZURE_STORAGE_ACCOUNT_NAME": ""}, "AZURE_STORAGE_ACCOUNT"),
    ]
    for url, env, expected in cases:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        with pytest.raises(StoreError, match=expected):
            store_check.preflight(locate(url), "h")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    code, out, err = finish(
        cli("run", "-w", "case-add", *FAST_RUN, "--results", f"s3://{bucket}/s")
    )
    assert code == 2 and "cannot reach the object store" in err, err
    assert len(err.strip().splitlines()) == 1 and "stored" not in out


def test_a_file_url_is_the_local_folder(tmp_path):
    assert locate(f"file://{tmp_path}/store") == Path(tmp_path) / "store"
    assert locate(str(tmp_path)) == Path(tmp_path)


# -- one writer per run: the lease (benchsite.store.lease) ---------------------------------------


@pytest.mark.slow
def test_two_resumes_of_one_run_at_once_one_is_refused_and_each_case_is_stored_once(bucket_url):
    args = ("run", "-w", "case-sleep", *FAST_RUN, "--host", "h", "--results", bucket_url)
    code, _, err = finish(cli(*args, fault="write:after-rename"))  # killed after case 1 of 4
    assert code == -signal.SIGKILL, err
    both = [cli(*args[:-4], "--budget", "1", "--host", "h", "--results", bucket_url, "--resume")]
    both.append(
        cli(*args[:-4], "--budget", "1", "--host", "h", "--results", bucket_url, "--resume")
    )
    ended = sorted((finish(process) for process in both), key=lambda result: result[0])
    (won, _, won_err), (refused, _, refused_err) = ended
    assert won == 0, won_err
    assert refused == 2, refused_err
    assert len(refused_err.strip().splitlines()) == 1 and "Traceback" not in refused_err
    assert "is being written by process" in refused_err
    rows = store.read_results(locate(bucket_url))
    assert len(rows) == 4 and rows["case_key"].is_unique and rows["run_id"].nunique() == 1
    assert leases(bucket_url) == []  # the winner's released, the killed writer's taken over


def test_store_check_reports_unfinished_uploads_and_aborts_old_ones(
    bucket_url, capsys, monkeypatch
):
    import boto3

    from benchsite.store import uploads

    bucket, prefix = bucket_url.removeprefix("s3://").split("/", 1)
    store.write_rows(locate(bucket_url), "h", "r", [complete_row({"workload": "w"})])
    client = boto3.client("s3")
    key = f"{prefix}/host=h/run=r/part-killed.parquet"  # as a writer killed mid-upload leaves
    started = client.create_multipart_upload(Bucket=bucket, Key=key)
    client.upload_part(
        Bucket=bucket, Key=key, UploadId=started["UploadId"], PartNumber=1, Body=b"x"
    )
    with pytest.raises(SystemExit) as exited:
        cli_main(["store", "check", "--results", bucket_url])
    out = capsys.readouterr().out
    assert exited.value.code in (0, None) and f"{key}: unfinished upload" in out
    assert "1 unfinished upload(s) of killed writers" in out
    monkeypatch.setattr(uploads, "MIN_AGE_S", 0.0)  # as if it were an hour old
    with pytest.raises(SystemExit):
        cli_main(["store", "check", "--results", bucket_url, "--quarantine"])
    assert "1 aborted" in capsys.readouterr().out
    assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_a_frozen_endpoint_ends_in_one_line_within_the_store_timeout(monkeypatch, capsys):
    import socket

    frozen = socket.socket()  # accepts connections (the kernel's backlog), never answers
    frozen.bind(("127.0.0.1", 0))
    frozen.listen(16)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{frozen.getsockname()[1]}")
    for name, value in {
        "AWS_ACCESS_KEY_ID": "k",
        "AWS_SECRET_ACCESS_KEY": "s",
        "AWS_DEFAULT_REGION": "us-east-1",
        "BENCHSITE_STORE_TIMEOUT_S": "1",
    }.items():
        monkeypatch.setenv(name, value)
    started = time.monotonic()
    try:
        with pytest.raises(SystemExit) as exited:
            cli_main(["results", "--results", "s3://frozen-bucket/store"])
    finally:
        frozen.close()
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "cannot reach the object store" in err, err
    assert len(err.strip().splitlines()) == 1 and time.monotonic() - started < 60


def test_a_store_in_a_bucket_serves_as_a_reference_read_only(bucket_url):
    """``--reference s3://...``: the example store copied into a bucket reads as the shipped
    h200 reference does, and nothing is written there; a bucket that does not exist is one
    line."""
    from benchsite.errors import StoreError
    from benchsite.store.reference import read_references
    from tests.conftest import EXAMPLE_RESULTS

    for part in sorted(EXAMPLE_RESULTS.rglob("part-*.parquet")):  # the store, file by file
        target = locate(bucket_url) / part.relative_to(EXAMPLE_RESULTS).as_posix()
        pq.write_table(pq.ParquetFile(part).read(), target.path, filesystem=target.fs)
    before = sorted(parts(bucket_url))
    shipped, in_bucket = read_references(("h200",)), read_references((bucket_url,))
    assert sorted(in_bucket["row_id"]) == sorted(shipped["row_id"])
    assert set(in_bucket["reference"]) == {"store"} and sorted(parts(bucket_url)) == before
    with pytest.raises(StoreError, match=r"^--reference s3://no-such-bucket-"):
        read_references((f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/results",))
