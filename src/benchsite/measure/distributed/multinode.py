"""Distributed cases over several machines, through torchrun's own rendezvous.

Every node runs the same ``benchsite run --nnodes N --rdzv-endpoint HOST:PORT --rdzv-id JOB``
(same workloads, profile and devices). Each distributed case's ranks are spread evenly over
the nodes (world size 4 on 2 nodes: 2 ranks on each); for every device group each node starts
``torch.distributed.run --nnodes N --rdzv-backend c10d --rdzv-endpoint HOST:PORT`` with its share,
and the agents meet at the endpoint (the node whose address it is hosts the rendezvous store;
any node can be it). Each group gets its own rendezvous id (``JOB-<kind>-<world size>-<launch>``),
so the nodes' launches pair up one group at a time in the order every node plans them.

The ranks share each case's results over the process group, so every node knows how every
case went and relaunches in step after a failed case; the node that ran global rank 0 stores
the case, as one row with the whole world size (device ``cpu×4@2-nodes``), and the others
store nothing for it. docs/multi-gpu.md shows the commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from benchsite.errors import SelectionError

_ENDPOINT = re.compile(r"\[?[A-Za-z0-9_.:-]+\]?:\d{1,5}")


@dataclass(frozen=True)
class Nodes:
    """How many machines one distributed case spans, where they meet, and the job's name."""

    count: int
    endpoint: str
    job: str = "benchsite"


def nodes_option(count: int | None, endpoint: str | None, job: str | None) -> Nodes | None:
    """``--nnodes``, ``--rdzv-endpoint`` and ``--rdzv-id`` as :class:`Nodes` (``None``: one
    machine); a wrong combination is one line."""
    if count is None or count == 1:
        if endpoint or job:
            raise SelectionError("--rdzv-endpoint and --rdzv-id need --nnodes 2 or more")
        return None
    if count < 1:
        raise SelectionError(f"--nnodes must be 1 or more, got {count}")
    if not endpoint or not _ENDPOINT.fullmatch(endpoint):
        raise SelectionError(
            f"--nnodes {count} needs --rdzv-endpoint HOST:PORT (the same on "
            f"every node), got {endpoint!r}"
        )
    return Nodes(count, endpoint, job or "benchsite")


class SpreadGroup(Protocol):
    """What the rendezvous needs of a device group (a :class:`~.launch.DeviceGroup`)."""

    kind: str
    world_size: int
    nodes: Nodes | None


def rendezvous_args(group: SpreadGroup, launch: int) -> list[str]:
    """The launcher's options that make the nodes of ``group`` meet for its ``launch``-th try."""
    nodes = group.nodes
    assert nodes is not None
    return [
        f"--nnodes={nodes.count}",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint={nodes.endpoint}",
        f"--rdzv-id={nodes.job}-{group.kind}-{group.world_size}-{launch}",
    ]
