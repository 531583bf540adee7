"""Running a distributed case: one process per rank, started by PyTorch's elastic launcher.

A workload with ``distributed=True`` is planned once per device *kind*, not per device: its
``world_size`` parameter says how many ranks, and :func:`device_groups` picks the devices —
``world_size`` GPUs of the kind, one rank each (named ``cuda:0-1``), or, for a kind whose one
device every rank shares (the CPU, split into equal slices of its cores; named ``cpu×2``), that
device once per rank. A group larger than the machine has (``cuda×4`` on two GPUs) is planned
all the same and stored as ``skipped`` with the reason.

:func:`run_group` launches ``python -m torch.distributed.run --standalone --nproc-per-node N -m
benchsite.measure.distributed.rank <spec>`` in its own session, **once for a list of cases** that
share a device group (every distributed workload at one world size on one device kind): starting the
launcher, the ranks and the process group costs more than measuring a case. The ranks measure the
cases one after another and write each case's result into the launch's temporary folder as soon as
it is done (:mod:`benchsite.measure.distributed.rank`); :func:`run_group` yields each case's
:class:`~benchsite.measure.outcome.Outcome` as soon as every rank has written it, so the runner
stores it before the next case ends. The row is the group's — every sample is the slowest rank's
time — and every rank's own numbers go to the ``ranks`` column. A rank that raises
(``error``/``oom``/``skipped``) is reported with its text and ends the launch; a rank that dies
without a word is a ``crash``; a case that runs past its timeout has every process of the group,
launcher and ranks and their children, killed (``timeout``). The cases after a failed one are
launched again, in a fresh group. NCCL's NVLink multicast is always switched off in the children's
environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchsite._infra.cores import usable_cores
from benchsite.measure import lifeline
from benchsite.measure.distributed.multinode import Nodes, rendezvous_args
from benchsite.measure.outcome import Outcome, Status
from benchsite.measure.sampling import MeasureSettings
from benchsite.records import Device

SHARED_KINDS = frozenset({"cpu"})  # one device that every rank shares, each with its own cores
BACKENDS = {"cpu": "gloo", "cuda": "cpu:gloo,cuda:nccl"}  # others: torch's default per device
CHILD_ENV = {  # NVLink multicast (NVLS) off: the GPU machines here require it
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
RANK_MODULE = "benchsite.measure.distributed.rank"
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
    nodes: Nodes | None = (
        None  # a group spread over several machines (benchsite.measure.distributed.multinode)
    )


def device_groups(
    devices: Sequence[Device], params: dict[str, Any], nodes: Nodes | None = None
) -> list[DeviceGroup]:
    """One group per device kind among ``devices`` for the ``world_size`` in ``params``; with
    ``nodes``, the ranks are spread evenly over that many machines (this one drives its share)."""
    world_size = int(params.get("world_size", 1))
    kinds: dict[str, list[Device]] = {}
    for device in devices:
        kinds.setdefault(device.kind, []).append(device)
    groups = [_group(kind, same_kind, world_size) for kind, same_kind in kinds.items()]
    if nodes is None:
        return groups
    if world_size < nodes.count or world_size % nodes.count:
        return []  # not a case of this job: every node leaves it out alike
    return [spread(group, nodes, devices) for group in groups]


def spread(group: DeviceGroup, nodes: Nodes, devices: Sequence[Device]) -> DeviceGroup:
    """``group`` over ``nodes.count`` machines: this one runs ``world_size / count`` ranks."""
    same_kind = [d for d in devices if d.kind == group.kind]
    local = _group(group.kind, same_kind, group.world_size // nodes.count)
    name = (
        f"{group.kind if group.kind not in SHARED_KINDS else same_kind[0].name}"
        f"×{group.world_size}@{nodes.count}-nodes"
    )
    return replace(
        local, world_size=group.world_size, device=replace(local.device, name=name), nodes=nodes
    )


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
    return usable_cores()


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


@dataclass(frozen=True)
class GroupCase:
    """One case of a launch: which workload, its parameters and its timeout."""

    workload: str
    params: dict[str, Any]
    timeout_s: float


def run_group(
    group: DeviceGroup,
    cases: Sequence[GroupCase],
    settings: MeasureSettings,
    plugin_specs: Sequence[str],
) -> Iterator[Outcome]:
    """Measure ``cases`` on one device group this machine can form (``problem`` is ``None``:
    the runner's plan skips the others), launched once (again after a failed case); yield each
    case's outcome, in order, as soon as it is known (see the module docstring)."""
    done, launches = 0, 0
    while done < len(cases):
        for outcome in _one_launch(group, cases[done:], settings, plugin_specs, launches):
            done += 1
            yield outcome
        launches += 1


def _one_launch(
    group: DeviceGroup,
    cases: Sequence[GroupCase],
    settings: MeasureSettings,
    plugin_specs: Sequence[str],
    launch: int = 0,
) -> Iterator[Outcome]:
    """One launch for ``cases``: yields the outcome of each case it finished, then (if it ended
    early) of the case it ended on; the caller launches again for the rest."""
    with tempfile.TemporaryDirectory(prefix="benchsite-group-") as temp:
        folder = Path(temp)
        spec = {
            "cases": [{"workload": c.workload, "params": c.params} for c in cases],
            "members": list(group.members),
            "backend": BACKENDS.get(group.kind),
            "threads": group.threads,
            "settings": asdict(settings),
            "plugins": list(plugin_specs),
            "gather": group.nodes is not None,  # ranks elsewhere: every node gets every result
        }
        (folder / "spec.json").write_text(json.dumps(spec))
        command = launch_command(group, folder, launch)
        with Launch(command, child_env(group), folder) as running:
            for index, case in enumerate(cases):
                returncode = running.wait_for(index, group.world_size, case.timeout_s)
                outcome = gather(folder, index, group, returncode, case.timeout_s)
                if group.nodes is not None and not (folder / "pid-0").exists():
                    outcome = replace(outcome, stored_elsewhere=True)  # rank 0 ran elsewhere
                yield outcome
                if outcome.status != Status.OK or returncode is None or running.ended():
                    return  # the rest in a fresh launch (this one is reaped on leaving)


class Launch:
    """The launcher process of one launch, in its own session; every process it started is
    killed when the ``with`` block ends, whatever happens (Ctrl-C included)."""

    def __init__(self, command: list[str], env: dict[str, str], folder: Path) -> None:
        self.command, self.env, self.folder = command, env, folder

    def __enter__(self) -> Launch:
        self._log = open(self.folder / "launcher.log", "wb")  # closed in __exit__
        self.process = subprocess.Popen(
            self.command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,
            preexec_fn=lifeline.parent_death_signal,  # never outlive a killed run
        )
        return self

    def wait_for(self, index: int, world_size: int, timeout_s: float) -> int | None:
        """Wait until every rank wrote case ``index`` (0), the launcher ended (its status), or
        ``timeout_s`` passed (``None``)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if len(list(self.folder.glob(f"case-{index}-rank-*.json"))) >= world_size:
                return 0
            status = self.process.poll()
            if status is not None:
                return status
            time.sleep(0.05)
        return None

    def ended(self) -> bool:
        return self.process.poll() is not None

    def __exit__(self, *exc_info: object) -> None:
        reap(self.process, self.folder)
        self._log.close()


def launch_command(group: DeviceGroup, folder: Path, launch: int = 0) -> list[str]:
    """The ``torch.distributed.run`` command line of a group (free rendezvous port, no restart;
    over several nodes, their rendezvous:
    :func:`benchsite.measure.distributed.multinode.rendezvous_args`). Its log folder is inside
    ``folder``, which goes with the launch: without ``--log-dir`` every launch
    leaves a ``torchelastic_*`` folder in the temporary directory."""
    where = ["--standalone"] if group.nodes is None else rendezvous_args(group, launch)
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        *where,
        f"--nproc-per-node={group.world_size // (group.nodes.count if group.nodes else 1)}",
        "--max-restarts=0",
        "--monitor-interval=0.1",
        f"--log-dir={folder / 'torchrun'}",
        "-m",
        RANK_MODULE,
        str(folder / "spec.json"),
    ]


def child_env(group: DeviceGroup) -> dict[str, str]:
    """This process's environment, NVLink multicast off, and each rank's share of the cores."""
    return {**os.environ, **CHILD_ENV, "OMP_NUM_THREADS": str(group.threads)}


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


def gather(
    folder: Path, index: int, group: DeviceGroup, returncode: int | None, timeout_s: float
) -> Outcome:
    """Case ``index``'s outcome from what its ranks wrote and how the launch went on."""
    ranks = _read_ranks(folder, index)
    failed = sorted((r for r in ranks if r["status"] != "ok"), key=lambda r: r["failed_at"])
    base = {"world_size": group.world_size, "ranks": [r["rank"] for r in ranks]}
    if failed:
        first = failed[0]
        error = f"rank {first['rank']['rank']}: {first['error']}"
        return Outcome(Status(first["status"]), error, notices=_notices(ranks), **base)
    if len(ranks) == group.world_size:  # every rank measured; leaving the group is not the case
        outcome = Outcome.from_json({**ranks[0], "status": "ok"})
        measured = outcome.measured
        assert measured is not None
        rules = {k: v for r in ranks for k, v in r.get("merge", {}).items()}
        devices = [(r["rank"].get("host"), r["rank"]["device"]) for r in ranks]
        measured["metrics"] = combine_metrics([r["metrics"] for r in ranks], rules, devices)
        return Outcome(Status.OK, measured=measured, notices=_notices(ranks), **base)
    if returncode is None:
        error = f"case timed out after {timeout_s:g} s; every process of the group was killed"
        return Outcome(Status.TIMEOUT, error, **base)
    missing = sorted(set(range(group.world_size)) - {r["rank"]["rank"] for r in ranks})
    error = f"rank(s) {missing} ended without a result: {_log_tail(folder)}"
    return Outcome(Status.CRASH, error, **base)


def _read_ranks(folder: Path, index: int) -> list[dict[str, Any]]:
    paths = sorted(folder.glob(f"case-{index}-rank-*.json"))
    results = [json.loads(path.read_text()) for path in paths]
    return sorted(results, key=lambda r: r["rank"]["rank"])


def combine_metrics(
    per_rank: Sequence[dict[str, Any]],
    rules: Mapping[str, str] | None = None,
    devices: Sequence[Hashable] | None = None,
) -> dict[str, Any]:
    """One value per metric for the group, by the rule its collector declared
    (:attr:`benchsite.records.Collector.merge`, given here as ``{metric: rule}``): ``sum``,
    ``device_sum``, ``or``, ``min``, or ``max`` (a metric named by no rule: a peak per device,
    the worst rank). ``devices`` names the device each rank measured on (host and device name;
    by default every rank its own): ``device_sum`` counts a device several ranks share once."""
    rules = rules or {}
    devices = list(devices) if devices is not None else list(range(len(per_rank)))
    combined: dict[str, Any] = {}
    for key in sorted({key for metrics in per_rank for key in metrics}):
        rule = rules.get(key, "max")
        values = [
            (device, m[key])
            for device, m in zip(devices, per_rank, strict=True)
            if isinstance(m.get(key), int | float)
        ]
        if not values:
            combined[key] = None
        elif rule == "device_sum":
            combined[key] = _sum_over_devices(values)
        else:
            combined[key] = _MERGE[rule]([value for _, value in values])
    return combined


def _sum_over_devices(values: list[tuple[Hashable, int | float]]) -> int | float:
    """The sum over devices of each device's largest value: the ranks of one device read the
    same counters over nearly the same time."""
    largest: dict[Hashable, int | float] = {}
    for device, value in values:
        largest[device] = max(value, largest.get(device, value))
    return sum(largest.values())


def merge_rules(collectors: Mapping[str, Any]) -> dict[str, str]:
    """``{<collector>.<metric>: rule}`` of every metric a registered collector declared a rule
    for (``collectors``: name → registered :class:`~benchsite.records.Collector`)."""
    return {
        f"{name}.{metric}": rule
        for name, registered in collectors.items()
        for metric, rule in getattr(registered.item, "merge", {}).items()
    }


def _bitwise_or(values: list[int | float]) -> int:
    total = 0
    for value in values:
        total |= int(value)
    return total


_MERGE: dict[str, Callable[[list[Any]], Any]] = {
    "max": max,
    "min": min,
    "sum": sum,
    "or": _bitwise_or,
}


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
