"""Running a distributed case: one process per rank, started by PyTorch's elastic launcher.

A workload with ``distributed=True`` is planned once per device *kind*, not per device: its
``world_size`` parameter says how many ranks, and :func:`device_groups` picks the devices —
``world_size`` GPUs of the kind, one rank each (named ``cuda:0-1``), or, for a kind whose one
device every rank shares (the CPU, split into equal slices of its cores; named ``cpu×2``), that
device once per rank. A group larger than the machine has (``cuda×4`` on two GPUs) is planned
all the same and stored as ``skipped`` with the reason.

:func:`run_group` launches ``python -m torch.distributed.run --standalone --nproc-per-node N -m
benchsite.distributed_rank <spec>`` in its own session, with the case timeout. Each rank writes
its result into the launch's temporary folder (:mod:`benchsite.distributed_rank`); the row is
the group's — every sample is the slowest rank's time — and every rank's own numbers go to the
``ranks`` column. A rank that raises (``error``/``oom``/``skipped``) is reported with its text;
a rank that dies without a word is a ``crash``; past the timeout every process of the group,
launcher and ranks and their children, is killed (``timeout``). NCCL's NVLink multicast is
always switched off in the children's environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchsite import lifeline
from benchsite.measure import MeasureSettings
from benchsite.records import Device

SHARED_KINDS = frozenset({"cpu"})  # one device that every rank shares, each with its own cores
BACKENDS = {"cpu": "gloo", "cuda": "cpu:gloo,cuda:nccl"}  # others: torch's default per device
CHILD_ENV = {  # NVLink multicast (NVLS) off: the GPU machines here require it
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
RANK_MODULE = "benchsite.distributed_rank"
_SUMMED = (".energy_j", ".power_mean_w", ".power_max_w", ".usd_per_hour")  # the group's total
_LOG_TAIL_LINES = 12


@dataclass(frozen=True)
class DeviceGroup:
    """The devices of one distributed case: ``members[r]`` is the device rank ``r`` drives.

    ``device`` is the record stored in the row (the first member, renamed for the group);
    ``problem`` says why the group cannot be formed here (the case is then skipped).
    """

    kind: str
    world_size: int
    members: tuple[str, ...]
    device: Device
    threads: int
    problem: str | None = None


def device_groups(devices: Sequence[Device], params: dict[str, Any]) -> list[DeviceGroup]:
    """One group per device kind among ``devices`` for the ``world_size`` in ``params``."""
    world_size = int(params.get("world_size", 1))
    kinds: dict[str, list[Device]] = {}
    for device in devices:
        kinds.setdefault(device.kind, []).append(device)
    return [_group(kind, same_kind, world_size) for kind, same_kind in kinds.items()]


def _group(kind: str, devices: list[Device], world_size: int) -> DeviceGroup:
    first = devices[0]
    threads = max(1, _usable_cpus(first) // world_size)
    if kind in SHARED_KINDS:
        capacity, members = max(2, _usable_cpus(first)), (first.name,) * world_size
        name = first.name if world_size == 1 else f"{first.name}×{world_size}"
        what = f"{capacity} processes at most (one per usable core, at least 2)"
    else:
        capacity, members = len(devices), tuple(d.name for d in devices[:world_size])
        name = _span(members) if world_size <= capacity else f"{kind}×{world_size}"
        what = f"{capacity} {kind} device{'s' if capacity != 1 else ''} here"
    problem = None
    if world_size < 1 or world_size > capacity:
        problem = f"world_size {world_size} needs {world_size} {kind} ranks; {what}"
        members = ()
    return DeviceGroup(kind, world_size, members, replace(first, name=name), threads, problem)


def _usable_cpus(device: Device) -> int:
    usable = device.info.get("usable_cpus")
    if isinstance(usable, int) and usable > 0:
        return usable
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _span(names: tuple[str, ...]) -> str:
    """``cuda:0-1`` for consecutive devices of one kind, else the names joined by commas."""
    if len(names) == 1:
        return names[0]
    prefix, _, first = names[0].rpartition(":")
    indices = [name.rpartition(":")[2] for name in names]
    if prefix and all(i.isdigit() for i in indices):
        numbers = [int(i) for i in indices]
        if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            return f"{prefix}:{first}-{numbers[-1]}"
    return ",".join(names)


def run_group(
    group: DeviceGroup,
    workload: str,
    params: dict[str, Any],
    settings: MeasureSettings,
    plugin_specs: Sequence[str],
    timeout_s: float,
) -> dict[str, Any]:
    """Launch one distributed case and return its result columns (see the module docstring)."""
    if group.problem is not None:
        return {"status": "skipped", "error": group.problem, "world_size": group.world_size}
    with tempfile.TemporaryDirectory(prefix="benchsite-group-") as temp:
        folder = Path(temp)
        spec = {
            "workload": workload,
            "params": params,
            "members": list(group.members),
            "backend": BACKENDS.get(group.kind),
            "threads": group.threads,
            "settings": asdict(settings),
            "plugins": list(plugin_specs),
        }
        (folder / "spec.json").write_text(json.dumps(spec))
        returncode = launch(launch_command(group, folder), child_env(group), folder, timeout_s)
        return gather(folder, group, returncode, timeout_s)


def launch_command(group: DeviceGroup, folder: Path) -> list[str]:
    """The ``torch.distributed.run`` command line of a group (free rendezvous port, no restart)."""
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={group.world_size}",
        "--max-restarts=0",
        "--monitor-interval=0.1",
        "-m",
        RANK_MODULE,
        str(folder / "spec.json"),
    ]


def child_env(group: DeviceGroup) -> dict[str, str]:
    """This process's environment, NVLink multicast off, and each rank's share of the cores."""
    return {**os.environ, **CHILD_ENV, "OMP_NUM_THREADS": str(group.threads)}


def launch(command: list[str], env: dict[str, str], folder: Path, timeout_s: float) -> int | None:
    """Run the launcher in its own session; return its exit status, or ``None`` on timeout.
    Whatever happens (Ctrl-C included), every process it started is killed before returning."""
    with open(folder / "launcher.log", "wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            preexec_fn=lifeline.parent_death_signal,  # never outlive a killed run
        )
        try:
            return process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        finally:
            reap(process, folder)


def reap(process: subprocess.Popen[bytes], folder: Path) -> None:
    """Kill the launcher, every rank and anything they started, then wait for them.

    The launcher starts each rank in a session of its own, so killing the launcher's process
    group is not enough: the groups of every descendant still alive, and of every rank that
    wrote its pid, are killed too (never this process's own group)."""
    import psutil

    try:
        tree = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        tree = []
    groups = {process.pid, *_rank_pids(folder)}
    for child in tree:
        with contextlib.suppress(psutil.Error, OSError):
            groups.add(os.getpgid(child.pid))
    groups.discard(os.getpgrp())
    for group_id in groups:
        with contextlib.suppress(OSError):
            os.killpg(group_id, signal.SIGKILL)
    for child in tree:
        with contextlib.suppress(psutil.Error):
            child.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    psutil.wait_procs(tree, timeout=5)


def _rank_pids(folder: Path) -> list[int]:
    pids = []
    for path in folder.glob("pid-*"):
        with contextlib.suppress(OSError, ValueError):
            pids.append(int(path.read_text()))
    return pids


def gather(folder: Path, group: DeviceGroup, returncode: int | None, timeout_s: float) -> dict:
    """The result columns of a launch from what its ranks wrote and how the launcher ended."""
    ranks = _read_ranks(folder)
    base: dict[str, Any] = {"world_size": group.world_size, "ranks": [r["rank"] for r in ranks]}
    failed = sorted((r for r in ranks if r["status"] != "ok"), key=lambda r: r["failed_at"])
    if failed:
        first = failed[0]
        error = f"rank {first['rank']['rank']}: {first['error']}"
        return {**base, "status": first["status"], "error": error, "notices": _notices(ranks)}
    if len(ranks) == group.world_size:  # every rank measured; leaving the group is not the case
        row = _combined(ranks)
        if returncode != 0:
            ending = "timed out" if returncode is None else f"exited with {returncode}"
            row["notices"].append(f"the launcher {ending} after every rank wrote its result")
        return {**base, **row}
    if returncode is None:
        error = f"case timed out after {timeout_s:g} s; every process of the group was killed"
        return {**base, "status": "timeout", "error": error}
    missing = sorted(set(range(group.world_size)) - {r["rank"]["rank"] for r in ranks})
    error = f"rank(s) {missing} ended without a result: {_log_tail(folder)}"
    return {**base, "status": "crash", "error": error}


def _read_ranks(folder: Path) -> list[dict[str, Any]]:
    results = [json.loads(path.read_text()) for path in sorted(folder.glob("rank-*.json"))]
    return sorted(results, key=lambda r: r["rank"]["rank"])


def _combined(ranks: list[dict[str, Any]]) -> dict[str, Any]:
    """The group's row: rank 0's columns (the same on every rank: the samples were agreed) and
    the metrics of every rank combined."""
    row = {k: v for k, v in ranks[0].items() if k not in ("rank", "failed_at")}
    row["metrics"] = combine_metrics([r["metrics"] for r in ranks])
    row["notices"] = _notices(ranks)
    return row


def combine_metrics(per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One value per metric for the group: energy, power and price summed over ranks, throttle
    reasons OR-ed, anything else the largest rank's value (peak memory per device, ...)."""
    combined: dict[str, Any] = {}
    for key in sorted({key for metrics in per_rank for key in metrics}):
        values = [m[key] for m in per_rank if isinstance(m.get(key), int | float)]
        if not values:
            combined[key] = None
        elif key.endswith(_SUMMED):
            combined[key] = sum(values)
        elif key.endswith("throttle_reasons"):
            combined[key] = _bitwise_or(values)
        else:
            combined[key] = max(values)
    return combined


def _bitwise_or(values: list[int | float]) -> int:
    total = 0
    for value in values:
        total |= int(value)
    return total


def _notices(ranks: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(text for r in ranks for text in r.get("notices", [])))


def _log_tail(folder: Path) -> str:
    """The launcher's last meaningful lines (which rank ended how), on one line."""
    try:
        lines = (folder / "launcher.log").read_text(errors="replace").splitlines()
    except OSError:
        return "no launcher output"
    wanted = [line.strip() for line in lines if line.strip() and not set(line.strip()) <= {"*"}]
    return " | ".join(wanted[-_LOG_TAIL_LINES:]) or "no launcher output"
