"""One writer per run on every object store benchsite writes to: the lease
(``benchsite.store.lease``) against S3 (moto's server), Google Cloud Storage
(gcp-storage-emulator) and Azure Blob Storage (Azurite), each a real server on 127.0.0.1 reached
through pyarrow's own filesystem for it. A store whose server is not installed is skipped, with
the reason (``tests/emulators.py``)."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator

import pyarrow.fs as pafs
import pytest

from benchsite.errors import StoreError
from benchsite.store import lease
from benchsite.store import parts as store
from benchsite.store.remote import RemotePath
from tests import emulators
from tests.conftest import patience

BUCKET = "bench"


SERVED = ["s3", "gs", "az"]  # every scheme benchsite.store.remote serves


@pytest.fixture(scope="module", params=SERVED)
def store_root(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[RemotePath]:
    """The bucket (container) of a fresh server of one kind, as the store's root."""
    scheme = request.param
    if scheme == "s3":
        with emulators.moto_s3(tmp_path_factory.mktemp("s3")) as port:
            yield _bucket(scheme, _s3(port))
    elif scheme == "gs":
        with emulators.gcs(BUCKET) as port:
            yield RemotePath(scheme, BUCKET, _gcs(port))
    else:
        with emulators.azurite() as port:
            yield _bucket(scheme, _azure(port))


def _s3(port: int) -> pafs.FileSystem:
    return pafs.S3FileSystem(
        access_key="benchsite",
        secret_key="benchsite-secret",
        region="us-east-1",
        scheme="http",
        endpoint_override=f"127.0.0.1:{port}",
        allow_bucket_creation=True,
    )


def _gcs(port: int) -> pafs.FileSystem:
    return pafs.GcsFileSystem(anonymous=True, scheme="http", endpoint_override=f"127.0.0.1:{port}")


def _azure(port: int) -> pafs.FileSystem:
    endpoint = f"127.0.0.1:{port}"  # Azurite serves the blob and the data-lake APIs on one port
    return pafs.AzureFileSystem(
        account_name=emulators.AZURITE_ACCOUNT,
        account_key=emulators.AZURITE_KEY,
        blob_storage_authority=endpoint,
        blob_storage_scheme="http",
        dfs_storage_authority=endpoint,
        dfs_storage_scheme="http",
    )


def _bucket(scheme: str, fs: pafs.FileSystem) -> RemotePath:
    fs.create_dir(BUCKET)
    return RemotePath(scheme, BUCKET, fs)


@pytest.fixture
def run_folder(store_root: RemotePath, monkeypatch) -> RemotePath:
    """A run's folder of its own in the store; leases time out after the shortest time a lease
    may have, scaled by the machine's load (a holder must renew within half of it)."""
    monkeypatch.setenv(lease.ENV_VAR, str(patience(lease.MIN_TIMEOUT_S)))
    return store.run_dir(store_root / uuid.uuid4().hex[:8], "h", "r")


def _leases(folder: RemotePath) -> list[str]:
    return sorted(path.name for path in folder.glob(f"{lease.PREFIX}*"))


def test_a_second_writer_is_refused_while_the_first_holds_the_run(run_folder):
    first = lease.Lease(run_folder)
    first.acquire()
    try:
        holder = f"is being written by process {os.getpid()} on {socket.gethostname()}"
        with pytest.raises(StoreError, match=holder) as refused:
            lease.Lease(run_folder).acquire()
        assert "\n" not in str(refused.value)
        assert _leases(run_folder) == [first.path.name]  # the refused writer's lease is gone
    finally:
        first.release()
    assert _leases(run_folder) == []
    with lease.held(run_folder):  # released: the next writer gets it at once
        assert len(_leases(run_folder)) == 1


def test_a_holders_heartbeat_keeps_its_lease_live_past_the_timeout(run_folder):
    with lease.held(run_folder) as holding:
        time.sleep(
            lease.timeout_s() * 1.5
        )  # its first write is stale by now: only its rewrites count
        with pytest.raises(StoreError, match="is being written by process"):
            lease.Lease(run_folder).acquire()
        holding.confirm()  # still its own


def test_a_stale_lease_is_taken_over_and_its_writer_learns_it_lost(run_folder):
    elsewhere = run_folder / f"{lease.PREFIX}dead"  # a writer on another machine, gone silent
    elsewhere.write_bytes(b'{"host": "another-machine", "pid": 1, "started": 0}')
    with pytest.raises(StoreError, match="is being written by process 1 on another-machine"):
        lease.Lease(run_folder).acquire()
    time.sleep(lease.timeout_s() + 1)  # its heartbeat is now older than the timeout
    taker = lease.Lease(run_folder)
    taker.acquire()
    try:
        assert not elsewhere.exists()  # taken over
        taker.confirm()
        taker.path.unlink()  # as a taker does to a lease it finds stale
        with pytest.raises(StoreError, match="was taken over by another writer"):
            taker.confirm()
    finally:
        taker.release()


def test_writers_racing_for_one_run_leave_exactly_one_holding_it(run_folder):
    contenders = [lease.Lease(run_folder) for _ in range(3)]
    outcomes: dict[int, str] = {}
    start = threading.Barrier(len(contenders))

    def contend(index: int) -> None:
        start.wait()
        try:
            contenders[index].acquire()
            outcomes[index] = "held"
        except StoreError as refused:
            outcomes[index] = str(refused)

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(len(contenders))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [index for index, outcome in outcomes.items() if outcome == "held"]
    try:
        assert len(winners) == 1, outcomes
        assert _leases(run_folder) == [contenders[winners[0]].path.name]
    finally:
        for index in winners:
            contenders[index].release()


def test_every_object_store_scheme_is_tested_here():
    from benchsite.store.remote import SCHEMES

    assert sorted(SERVED) == sorted(SCHEMES)
