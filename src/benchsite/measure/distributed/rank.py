"""One rank of a distributed case, run by ``torch.distributed.run``
(see :mod:`benchsite.measure.distributed.launch`).

``python -m benchsite.measure.distributed.rank <folder>/spec.json``: join the process group (gloo
for the CPU, NCCL for GPUs beside gloo for the small control messages) once, build the plugins as a
worker does, then for each case of the spec in turn set the workload's case up on this rank's
device, measure it with the sampling plan every rank agrees on
(:mod:`benchsite.measure.distributed.sampling`) inside the same collectors as any case, and write
``case-<i>-rank-<r>.json`` into the folder. A rank whose case fails writes why and exits with
status 1, so that the launcher stops the whole group at once instead of leaving the other ranks
waiting in a collective (the parent launches the remaining cases again).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from benchsite._infra import atomic
from benchsite.errors import SkipCase
from benchsite.host import registry
from benchsite.host.manager import load_plugins
from benchsite.measure import baseline, lifeline
from benchsite.measure.distributed.launch import merge_rules
from benchsite.measure.distributed.sampling import agree_over_group
from benchsite.measure.outcome import Outcome, Status
from benchsite.measure.sampling import MeasureSettings, measure_case
from benchsite.measure.worker import WorkerState, _collecting, _failure, measured_columns
from benchsite.stats import summarize


def main(argv: list[str] | None = None) -> int:
    """Run this rank's part of every case in the spec file; return the exit status."""
    lifeline.die_with_parent(watch_only=True)  # the launcher killed: this rank ends too
    spec_path = Path((argv if argv is not None else sys.argv[1:])[0])
    folder, rank = spec_path.parent, int(os.environ["RANK"])
    (folder / f"pid-{rank}").write_text(str(os.getpid()))
    spec = json.loads(spec_path.read_text())
    try:
        state, device = join(spec, rank)
    except BaseException as exc:  # noqa: BLE001 - the first case reports why the group failed
        _write_json(folder / f"case-0-rank-{rank}.json", _stamped(_failure(exc, []), rank))
        return 1
    for index, case in enumerate(spec["cases"]):
        results = shared(spec, rank, outcome({**spec, **case}, rank, state, device))
        for each, result in results.items():  # before leaving
            _write_json(folder / f"case-{index}-rank-{each}.json", result)
        if any(result["status"] != "ok" for result in results.values()):
            _leave_group()
            return 1
    _leave_group()
    return 0


def shared(spec: dict[str, Any], rank: int, result: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The results this rank writes, by rank: its own; over several nodes
    (``spec["gather"]``) every rank's, gathered over the group, written by each node's local
    rank 0, so that every node's launcher sees how the case went
    (:mod:`benchsite.measure.distributed.multinode`)."""
    if not spec.get("gather"):
        return {rank: result}
    import torch.distributed as dist

    everyone: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, result)
    return dict(enumerate(everyone)) if os.environ.get("LOCAL_RANK") == "0" else {}


def outcome(spec: dict[str, Any], rank: int, state: WorkerState, device: Any) -> dict[str, Any]:
    """This rank's result of one case; a failure is stamped with its time, so that the first
    rank to fail (not the others, which fail because it left) is the one reported."""
    try:
        return _measure_here(spec, rank, device, state)
    except BaseException as exc:  # noqa: BLE001 - any failure of this rank is its result
        traceback.print_exc()
        return _stamped(_failure(exc, []), rank)


def _stamped(failed: Outcome, rank: int) -> dict[str, Any]:
    result = {**failed.to_json(), "rank": {"rank": rank}, "failed_at": time.time()}
    result["rank"].update(status=result["status"], error=result["error"])
    return result


def join(spec: dict[str, Any], rank: int) -> tuple[WorkerState, Any]:
    """Build the plugins, prepare this rank's device and join the process group."""
    import torch
    import torch.distributed as dist

    plugins = load_plugins(spec["plugins"], quiet=True)
    state = WorkerState(
        registry.workloads(plugins), registry.devices(plugins), registry.collectors(plugins)
    )
    local = int(os.environ.get("LOCAL_RANK", rank))  # over several nodes: this node's share
    device = state.devices[spec["members"][local]].item
    device.prepare()
    torch.set_num_threads(int(spec["threads"]))
    dist.init_process_group(backend=spec["backend"])
    return state, device


def _leave_group() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        with contextlib.suppress(Exception):
            dist.destroy_process_group()


def _measure_here(spec: dict[str, Any], rank: int, device: Any, state: WorkerState) -> dict:
    import torch

    notices: list[str] = []
    about = {"rank": rank, "device": device.name, "host": socket.gethostname(), "pid": os.getpid()}
    workload = state.workloads[spec["workload"]].item
    baseline.start_case()  # each case's memory measured from here
    try:
        case = workload.setup(device, spec["params"])
    except SkipCase as exc:
        skipped = Outcome(Status.SKIPPED, str(exc), notices=notices).to_json()
        return {**skipped, "rank": {**about, "status": "skipped"}, "failed_at": time.time()}
    settings = MeasureSettings(**spec["settings"])
    out: dict[str, Any] = {}
    try:
        torch.set_num_threads(case.threads or int(spec["threads"]))
        around = _collecting(device, state, notices, out)
        measurement = measure_case(case, device, settings, around, agree_over_group())
    finally:
        if case.teardown is not None:
            with contextlib.suppress(Exception):
                case.teardown()
    measured = measured_columns(case, measurement, torch.get_num_threads(), {**case.metrics, **out})
    result = Outcome(Status.OK, measured=measured, notices=notices).to_json()
    own = _own_numbers(measurement.own_samples_s, result)
    return {**result, "rank": {**about, **own}, "merge": merge_rules(state.collectors)}


def _own_numbers(local: list[float], result: dict[str, Any]) -> dict[str, Any]:
    """This rank's own timings (not the group's) and its metrics, for the ``ranks`` column."""
    own = summarize(local)
    return {
        "status": "ok",
        "median_s": own.median_s,
        "min_s": own.min_s,
        "rel_ci": own.rel_ci,
        "samples_s": local,
        "threads": result["threads"],
        "metrics": result["metrics"],
    }


def _write_json(path: Path, result: dict[str, Any]) -> None:
    atomic.write_text(path, json.dumps(result, default=str))


if __name__ == "__main__":
    sys.exit(main())
