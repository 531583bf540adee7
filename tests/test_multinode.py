"""Distributed cases over several machines through torchrun's rendezvous: two `benchsite run`
processes on 127.0.0.1 act as two nodes of one job (gloo); the case is stored once, by the node
that ran rank 0, with the whole world size."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from benchsite.errors import SelectionError
from benchsite.measure.distributed import launch as distributed
from benchsite.measure.distributed.multinode import Nodes, nodes_option
from benchsite.records import Device
from benchsite.store import parts as store
from tests.conftest import patience


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def node(host: str, endpoint: str, results: Path) -> subprocess.Popen:
    """One "node": a `benchsite run` of the all-reduce on the CPU, joining the job at endpoint."""
    command = [
        sys.executable,
        "-m",
        "benchsite.cli.app",
        "run",
        "-w",
        "allreduce",
        "-d",
        "cpu",
        "--budget",
        "0.2",
        "--nnodes",
        "2",
        "--rdzv-endpoint",
        endpoint,
        "--rdzv-id",
        "ci",
        "--host",
        host,
        "--results",
        str(results),
    ]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "1000"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_two_nodes_store_one_case_with_its_world_size(results_dir):
    endpoint = f"127.0.0.1:{free_port()}"
    nodes = [node(host, endpoint, results_dir) for host in ("node-a", "node-b")]
    outputs = [node.communicate(timeout=patience(240)) for node in nodes]
    for process, (_, err) in zip(nodes, outputs, strict=True):
        assert process.returncode == 0, err
    rows = store.read_results(results_dir)
    assert len(rows) == 1, rows[["host", "device", "status"]]
    (row,) = rows.itertuples()
    assert row.status == "ok" and row.world_size == 2 and row.device == "cpu×2@2-nodes"
    assert sorted(rank["rank"] for rank in json.loads(row.ranks)) == [0, 1]
    assert sum("stored by the node of rank 0" in out for out, _ in outputs) == 1


def _cpu() -> Device:
    return Device(name="cpu", kind="cpu", info={"usable_cpus": 4}, fingerprint="f", timer=object)  # type: ignore[arg-type]


def test_a_job_over_nodes_launches_each_nodes_share_through_the_rendezvous():
    nodes = Nodes(2, "10.0.0.1:29400", "nightly")
    (group,) = distributed.device_groups([_cpu()], {"world_size": 4}, nodes)
    assert (group.world_size, group.members, group.device.name) == (
        4,
        ("cpu",) * 2,
        "cpu×4@2-nodes",
    )
    command = distributed.launch_command(group, Path("/tmp/x"), launch=1)
    assert "--standalone" not in command and "--nproc-per-node=2" in command
    assert {
        "--nnodes=2",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=10.0.0.1:29400",
        "--rdzv-id=nightly-cpu-4-1",
    } <= set(command)
    assert distributed.device_groups([_cpu()], {"world_size": 1}, nodes) == []  # not split


@pytest.mark.parametrize(
    ("count", "endpoint", "job", "expected"),
    [
        (2, None, None, "needs --rdzv-endpoint"),
        (2, "nohost", None, "needs --rdzv-endpoint"),
        (None, "h:1", None, "need --nnodes"),
        (0, None, None, "1 or more"),
    ],
)
def test_wrong_node_options_are_one_line(count, endpoint, job, expected):
    with pytest.raises(SelectionError, match=expected):
        nodes_option(count, endpoint, job)
