"""Distributed cases for real: two gloo processes on the CPU, launched by torch's elastic
launcher through the runner, into a real Parquet store — a success, a rank that raises, a rank
that hangs past the timeout (nothing may be left running), and the planning of groups."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from benchsite.host import registry
from benchsite.host.manager import load_plugins
from benchsite.measure import runner
from benchsite.measure.distributed import launch as distributed
from benchsite.measure.worker import Worker
from benchsite.records import Collector, Device
from benchsite.store import parts as store
from tests.conftest import TESTS

FAULTS = str(TESTS / "plugins" / "distributed_faults.py")
KINDS = str(TESTS / "plugins" / "distributed_kinds.py")


def measure(
    results: Path, workload: str, params: dict[str, Any], plugins: tuple[str, ...] = (), **opts: Any
) -> dict[str, Any]:
    """Plan ``workload`` with ``params`` on this machine's CPU group, measure it through the
    runner, store the row in ``results`` and return the row as read back from the store."""
    options = runner.RunOptions(results=results, plugins=plugins, **opts)
    loaded = load_plugins(plugins)
    cpu = [d for d in runner.select_devices(loaded, ("cpu",))]
    registered = runner.select_workloads(loaded, (workload,))[0]
    (group,) = distributed.device_groups(cpu, params)
    planned = runner.plan_case(registered, group.device, params, group)
    context = runner.RunContext(options, loaded, "run-1", "host-1", runner.SilentReporter())
    with Worker(plugins) as worker:
        ((_, row, _),) = runner.measure_in_order(worker, [planned], context)
    store.write_rows(results, "host-1", "run-1", [row])
    frame = store.read_results(results)
    return frame[frame["row_id"] == row["row_id"]].iloc[0].to_dict()


def test_ddp_train_on_two_gloo_processes_is_stored_with_every_rank(results_dir: Path) -> None:
    params = {"model": "mlp", "scaling": "strong", "world_size": 2, "precision": "fp32"}
    row = measure(results_dir, "ddp-train", params)
    assert row["status"] == "ok", row["error"]
    assert row["world_size"] == 2 and row["device"] == "cpu×2" and row["device_kind"] == "cpu"
    ranks = json.loads(row["ranks"])
    assert [r["rank"] for r in ranks] == [0, 1]
    assert len({r["pid"] for r in ranks}) == 2  # two processes
    samples = list(row["samples_s"])
    for rank in ranks:  # the group's sample is its slowest rank's
        assert len(rank["samples_s"]) == len(samples)
        assert all(mine <= group for mine, group in zip(rank["samples_s"], samples, strict=True))
    metrics = json.loads(row["metrics"])
    assert metrics["rank_batch"] == 32 and row["items"] == 64  # strong: the global batch split
    assert row["items_per_s"] == pytest.approx(64 / row["median_s"])
    stored_calls = row["n_samples"] * row["calls_per_sample"]  # the kept (last) pass
    assert metrics["measured_calls"] >= stored_calls  # every pass's calls, for energy per call
    assert row["sampling_passes"] > 1 or metrics["measured_calls"] == stored_calls


def test_allreduce_reports_algorithm_and_bus_bandwidth(
    results_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the launcher's and ranks' temp files
    row = measure(results_dir, "allreduce", {"size": 2**16, "world_size": 2})
    assert not list((tmp_path / "tmp").iterdir())  # torchrun's log folders went with the launch
    assert row["status"] == "ok", row["error"]
    metrics = json.loads(row["metrics"])
    algbw = 2**16 / row["median_s"] / 1e9
    assert metrics["algbw_gbps"] == pytest.approx(algbw)
    assert metrics["busbw_gbps"] == pytest.approx(algbw * 2 * (2 - 1) / 2)
    assert row["gbps"] == pytest.approx(metrics["busbw_gbps"])
    assert row["axis"] == "size" and row["axis_value"] == 2**16
    assert all(r["metrics"]["message_bytes"] == 2**16 for r in json.loads(row["ranks"]))


@pytest.fixture(scope="session")  # the slow test that uses it runs first, the other later
def raised(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], float, Path]:
    """A launch whose rank 1 raises: (its row, the seconds the launch took, its pid folder).
    The seconds are what a launch of two ranks costs on this machine now (interpreters,
    torch, the gloo group), which a hang's timeout must leave room for."""
    folder = tmp_path_factory.mktemp("raised")
    params = {"world_size": 2, "pid_dir": str(folder / "pids")}
    started = time.monotonic()
    row = measure(folder / "results", "dist-rank-raises", params, plugins=(FAULTS,), timeout_s=600)
    return row, time.monotonic() - started, folder / "pids"


def test_a_rank_that_raises_is_an_error_row_naming_the_rank(raised) -> None:
    row, _, pids = raised
    assert row["status"] == "error"
    assert row["error"].startswith("rank 1: RuntimeError: rank 1 gives up on purpose")
    assert row["world_size"] == 2
    assert_all_gone(pids)


@pytest.mark.slow
def test_a_rank_that_hangs_times_out_and_nothing_is_left_running(
    results_dir: Path, tmp_path: Path, raised
) -> None:
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    params = {"world_size": 2, "pid_dir": str(tmp_path / "pids")}
    timeout = math.ceil(3 * raised[1] + 5)  # room for the launch at this machine's load
    row = measure(results_dir, "dist-rank-hangs", params, plugins=(FAULTS,), timeout_s=timeout)
    assert row["status"] == "timeout"
    assert f"timed out after {timeout} s" in row["error"]
    assert len(list((tmp_path / "pids").glob("rank-*.pid"))) == 2  # both reached the hang
    assert_all_gone(tmp_path / "pids")
    after = {p.pid for p in psutil.Process().children(recursive=True)}
    assert after <= before


def test_cases_of_one_group_share_a_launch_and_a_failure_relaunches_the_rest(
    tmp_path: Path,
) -> None:
    plugins = (FAULTS,)
    cpu = runner.select_devices(load_plugins(plugins), ("cpu",))
    (group,) = distributed.device_groups(cpu, {"world_size": 2})
    raises = {"world_size": 2, "pid_dir": str(tmp_path / "pids")}
    cases = [
        distributed.GroupCase("allreduce", {"size": 2**12, "world_size": 2}, 120),
        distributed.GroupCase("allreduce", {"size": 2**14, "world_size": 2}, 120),
        distributed.GroupCase("dist-rank-raises", raises, 120),
        distributed.GroupCase("allreduce", {"size": 2**12, "world_size": 2}, 120),
    ]
    outcomes = list(distributed.run_group(group, cases, runner.PROFILES["quick"], plugins))
    assert [o.status for o in outcomes] == ["ok", "ok", "error", "ok"]
    pids = [{rank.get("pid") for rank in o.ranks or []} - {None} for o in outcomes]
    assert pids[0] == pids[1] and len(pids[0]) == 2  # one launch for both
    assert not pids[3] & pids[0]  # the case after the failure ran in a fresh launch
    assert_all_gone(tmp_path / "pids")


def assert_all_gone(pid_dir: Path) -> None:
    """Both ranks got as far as their case, and no rank or launcher process is still alive."""
    files = sorted(pid_dir.glob("rank-*.pid"))
    assert len(files) == 2, "the ranks never reached their case"
    pids = {int(pid) for file in files for pid in file.read_text().split()}
    alive = [pid for pid in pids if _running(pid)]
    assert not alive, f"left running: {alive}"


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _device(name: str, kind: str, **info: Any) -> Device:
    return Device(name=name, kind=kind, info=info, fingerprint="f", timer=object)  # type: ignore[arg-type]


def test_groups_are_planned_once_per_kind_and_oversized_ones_are_skipped() -> None:
    devices = [_device("cpu", "cpu", usable_cpus=4)] + [
        _device(f"cuda:{i}", "cuda") for i in range(2)
    ]
    names = {
        size: [
            (g.device.name, g.members, g.problem is None)
            for g in distributed.device_groups(devices, {"world_size": size})
        ]
        for size in (1, 2, 8)
    }
    assert names[1] == [("cpu", ("cpu",), True), ("cuda:0", ("cuda:0",), True)]
    assert names[2] == [("cpu×2", ("cpu", "cpu"), True), ("cuda:0-1", ("cuda:0", "cuda:1"), True)]
    assert names[8] == [("cpu×8", (), False), ("cuda×8", (), False)]
    (cuda8,) = distributed.device_groups(devices[1:], {"world_size": 8})
    assert cuda8.problem == "world_size 8 needs 8 cuda ranks; 2 cuda devices here"
    (cpu2,) = distributed.device_groups(devices[:1], {"world_size": 2})
    assert cpu2.threads == 2  # the CPU's cores split between the ranks


def test_plan_puts_distributed_cases_last_once_per_kind() -> None:
    plugins = load_plugins()
    workloads = runner.select_workloads(plugins, ("mlp-train", "ddp-train"))
    devices = [_device("cpu", "cpu", usable_cpus=2), _device("cuda:0", "cuda")]
    plan = runner.plan_cases(workloads, devices, "quick")
    ddp = [p for p in plan if p.workload.item.name == "ddp-train"]
    assert plan[-len(ddp) :] == ddp and all(p.group is not None for p in ddp)
    (ddp_workload,) = [w.item for w in workloads if w.item.name == "ddp-train"]
    quick = ddp_workload.grid("quick")
    assert len(ddp) == 2 * len(quick)  # one group per device kind, not per device


def test_an_oversized_group_is_skipped_without_launching(results_dir: Path) -> None:
    params = {"size": 2**12, "world_size": 64}
    row = measure(results_dir, "allreduce", params)
    assert row["status"] == "skipped" and "world_size 64 needs 64 cpu ranks" in row["error"]
    assert row["world_size"] == 64 and row["device"] == "cpu×64"


def test_an_unsupported_kind_keeps_its_skipped_row_beside_a_group_of_that_kind(
    run_workloads: Any,
) -> None:
    """A distributed workload planned on a device kind it does not support is stored as
    skipped, even when another distributed workload shares that kind and world size (a
    launch batch of the kind and world size must not swallow it)."""
    report, rows = run_workloads("dist-*", plugins=(KINDS,))
    statuses = dict(zip(rows["workload"], rows["status"], strict=True))
    assert statuses == {"dist-huge": "skipped", "dist-cuda-only": "skipped"}
    errors = dict(zip(rows["workload"], rows["error"], strict=True))
    assert "world_size 4096 needs 4096 cpu ranks" in errors["dist-huge"]
    assert errors["dist-cuda-only"] == "dist-cuda-only runs only on cuda, not on cpu"
    assert set(rows["world_size"]) == {4096} and report.statuses == {"skipped": 2}


def test_launcher_environment_keeps_nvlink_multicast_off() -> None:
    group = distributed.device_groups([_device("cpu", "cpu", usable_cpus=2)], {"world_size": 2})[0]
    env = distributed.child_env(group)
    assert env["NCCL_NVLS_ENABLE"] == "0" and env["NVSHMEM_DISABLE_NVLS"] == "1"
    assert env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1" and env["OMP_NUM_THREADS"] == "1"
    command = distributed.launch_command(group, Path("/tmp/x"))
    assert command[1:4] == ["-m", "torch.distributed.run", "--standalone"]
    assert "--nproc-per-node=2" in command


def test_a_rank_that_dies_without_a_word_is_a_crash(tmp_path: Path) -> None:
    group = distributed.device_groups([_device("cpu", "cpu", usable_cpus=2)], {"world_size": 2})[0]
    ok = {"status": "ok", "rank": {"rank": 0}, "metrics": {}}
    (tmp_path / "case-0-rank-0.json").write_text(json.dumps(ok))
    (tmp_path / "launcher.log").write_text("****\nexitcode  : -9 (pid: 123)\nrank: 1\n")
    outcome = distributed.gather(tmp_path, 0, group, 1, 60)
    assert outcome.status == "crash"
    assert (
        outcome.error == "rank(s) [1] ended without a result: exitcode  : -9 (pid: 123) | rank: 1"
    )


def test_group_metrics_combine_by_the_rules_collectors_declare() -> None:
    """The engine names no collector: each declares how its metrics merge over ranks; a
    metric without a rule keeps the largest rank's value."""
    plugins = load_plugins(())
    rules = distributed.merge_rules(registry.collectors(plugins))
    assert rules["nvml.energy_j"] == "device_sum" and rules["nvml.throttle_reasons"] == "or"
    per_rank = [
        {
            "nvml.energy_j": 10.0,
            "memory.gpu_peak_allocated_bytes": 5,
            "nvml.throttle_reasons": 1,
            "mine.slowest_s": 2.0,
        },
        {
            "nvml.energy_j": 12.0,
            "memory.gpu_peak_allocated_bytes": 7,
            "nvml.throttle_reasons": 4,
            "mine.slowest_s": 3.0,
        },
    ]
    combined = distributed.combine_metrics(per_rank, {**rules, "mine.slowest_s": "min"})
    assert combined == {
        "nvml.energy_j": 22.0,
        "memory.gpu_peak_allocated_bytes": 7,
        "nvml.throttle_reasons": 5,
        "mine.slowest_s": 2.0,
    }
    assert distributed.combine_metrics(per_rank)["nvml.energy_j"] == 12.0  # no rule: max


def test_ranks_sharing_a_device_count_its_energy_once() -> None:
    """Four gloo ranks on one machine read the same RAPL package counters: the group used that
    machine's energy once, not four times; ranks on two machines add the machines up."""
    rules = {"cpu.energy_j": "device_sum", "mine.steps": "sum"}
    per_rank = [{"cpu.energy_j": 100.0 + rank, "mine.steps": 10} for rank in range(4)]
    one_machine = [("node-a", "cpu")] * 4
    two_machines = [("node-a", "cpu")] * 2 + [("node-b", "cpu")] * 2
    assert distributed.combine_metrics(per_rank, rules, one_machine) == {
        "cpu.energy_j": 103.0,
        "mine.steps": 40,
    }
    assert distributed.combine_metrics(per_rank, rules, two_machines)["cpu.energy_j"] == 204.0
    assert distributed.combine_metrics(per_rank, rules)["cpu.energy_j"] == 406.0  # own devices


def test_a_collector_with_an_unknown_merge_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="merge rule"):
        Collector(name="x", description="", start=lambda device: dict, merge={"a": "avg"})
