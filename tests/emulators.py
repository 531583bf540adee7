"""Object-store servers on 127.0.0.1 for the tests, each its own process, stopped at the end of
the block: moto's S3 (``tests/s3_server.py``), gcp-storage-emulator's Google Cloud Storage (in
the test extra) and Azurite's Azure Blob Storage (from npm: ``npm install -g azurite``; not
installed by CI). Each yields its port; one that is not installed skips the test, saying so.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TESTS, patience

# Azurite's one account and its key: public constants of the emulator, documented by Microsoft
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


@contextlib.contextmanager
def moto_s3(folder: Path) -> Iterator[int]:
    """moto's S3 server; it picks its port and writes it to a file."""
    pytest.importorskip("moto.server", reason="moto[server] is in the test extra")
    port_file = folder / "port"
    command = [sys.executable, str(TESTS / "s3_server.py"), str(port_file)]
    with _serving(command) as server:
        deadline = time.monotonic() + patience(60)
        while not port_file.exists() or not port_file.read_text():
            assert server.poll() is None and time.monotonic() < deadline, "moto did not start"
            time.sleep(0.05)
        yield int(port_file.read_text())


@contextlib.contextmanager
def gcs(bucket: str) -> Iterator[int]:
    """gcp-storage-emulator, in memory, holding ``bucket``."""
    if importlib.util.find_spec("gcp_storage_emulator") is None:
        pytest.skip("gcp-storage-emulator (the test extra) is not installed: no gs:// server")
    port = _free_port()
    command = [sys.executable, "-m", "gcp_storage_emulator", "start", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--in-memory", "--default-bucket", bucket]
    with _serving(command) as server:
        _wait_for(server, port, "gcp-storage-emulator")
        yield port


@contextlib.contextmanager
def azurite() -> Iterator[int]:
    """Azurite's blob service, in memory."""
    executable = shutil.which("azurite-blob")
    if executable is None:
        pytest.skip("Azurite is not installed (npm install -g azurite): no az:// server")
    port = _free_port()
    command = [executable, "--blobHost", "127.0.0.1", "--blobPort", str(port)]
    command += ["--inMemoryPersistence", "--silent", "--skipApiVersionCheck", "--loose"]
    with _serving(command) as server:
        _wait_for(server, port, "Azurite")
        yield port


@contextlib.contextmanager
def _serving(command: list[str]) -> Iterator[subprocess.Popen]:
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield server
    finally:
        server.terminate()
        try:  # Azurite waits for its clients' idle keep-alive connections before it ends
            server.wait(timeout=patience(5))
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(server: subprocess.Popen, port: int, name: str) -> None:
    """Until ``port`` accepts a connection; the server must not die meanwhile."""
    deadline = time.monotonic() + patience(60)
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        assert server.poll() is None, f"{name} ended with status {server.returncode}"
        assert time.monotonic() < deadline, f"{name} did not listen on {port}"
        time.sleep(0.1)
