"""The built-in workload suite, run for real on this machine's CPU.

Every case of every built-in workload's quick grid is set up and called; a case may only be
skipped with a reason. Derived numbers are checked against independent counts: matmul and MLP
FLOPs against analytic formulas and PyTorch's FlopCounterMode on a real CPU run, copy bytes
against the buffer size.
"""

from __future__ import annotations

import pytest
import torch
from benchsite.plugins.devices.cpu import register_devices
from benchsite.plugins.workloads import max_batch as workload_max_batch
from torch.utils.flop_counter import FlopCounterMode

from benchsite import SkipCase
from benchsite.host import registry
from benchsite.host.manager import load_plugins
from benchsite.records import Device
from benchsite.toolkit import models as _models
from benchsite.toolkit import precision as _precision

SUITE = {
    "matmul",
    "copy",
    "transfer",
    "mlp-train",
    "mlp-infer",
    "cnn-train",
    "cnn-infer",
    "transformer-train",
    "transformer-infer",
    "lstm-infer",
    "preprocess",
    "cpu-threads",
    "max-batch",
    "max-model",
}
MODULE_PREFIX = "benchsite.plugins.workloads."


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One intra-op thread: these tests check correctness, and on a loaded 2-core machine two
    OpenMP threads wait on each other far longer than one thread computes."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def workloads():
    found = registry.workloads(load_plugins())
    return {name: reg.item for name, reg in found.items() if name in SUITE}


@pytest.fixture(scope="module")
def cpu() -> Device:
    return register_devices()[0]


def quick_cases() -> list[tuple[str, dict]]:
    found = registry.workloads(load_plugins())
    names = sorted(SUITE - {"max-batch", "max-model"})  # their own tests below run them
    return [(name, params) for name in names for params in found[name].item.grid("quick")]


def test_the_whole_suite_is_registered_by_builtin_plugins(workloads) -> None:
    assert set(workloads) == SUITE
    for workload in workloads.values():
        module = __import__(workload.setup.__module__, fromlist=["_"])
        assert workload.setup.__module__.startswith(MODULE_PREFIX)
        assert len(module.__doc__ or "") > 200, f"{workload.name}: say what it measures and why"
        assert workload.grid("quick") and len(workload.grid("full")) >= len(workload.grid("quick"))


def test_parameter_names_follow_the_conventions(workloads) -> None:
    for workload in workloads.values():
        for params in workload.grid("full"):
            assert "dtype" not in params
            assert params.get("precision", "fp32") in _precision.PRECISIONS
    compiled = {w.name for w in workloads.values() for p in w.grid("full") if p.get("compile")}
    assert compiled == {"mlp-train", "transformer-infer"}
    assert not any(p.get("compile") for w in workloads.values() for p in w.grid("quick"))


@pytest.mark.parametrize(("name", "params"), quick_cases(), ids=lambda v: str(v))
def test_quick_case_runs_on_the_cpu(workloads, cpu, name: str, params: dict) -> None:
    workload = workloads[name]
    if cpu.kind not in workload.devices:
        return
    try:
        case = workload.setup(cpu, params)
    except SkipCase as skip:
        assert len(str(skip)) > 20, "a skip must explain itself"
        assert name == "transfer" or params.get("include_transfer"), f"unexpected skip: {skip}"
        return
    try:
        for _ in range(2):
            case.run()
        assert case.items and case.items > 0
        assert case.flops is None or case.flops > 0
    finally:
        if case.teardown:
            case.teardown()


def test_matmul_declares_two_n_cubed_flops_and_computes_the_product(workloads, cpu) -> None:
    case = workloads["matmul"].setup(cpu, {"size": 64, "precision": "fp32"})
    assert case.flops == 2 * 64**3
    with FlopCounterMode(display=False) as counter:
        result = case.run()
    assert counter.get_total_flops() == case.flops
    assert result.shape == (64, 64) and torch.isfinite(result).all()


@pytest.mark.parametrize("name", ["mlp-train", "mlp-infer"])
def test_mlp_flops_match_flop_counter_on_a_real_step(workloads, cpu, name: str) -> None:
    case = workloads[name].setup(cpu, {"batch": 32, "precision": "fp32"})
    with FlopCounterMode(display=False) as counter:
        case.run()
    assert counter.get_total_flops() == case.flops
    expected = _models.mlp_train_flops(32) if name == "mlp-train" else _models.mlp_forward_flops(32)
    assert case.flops == expected


def test_copy_declares_read_plus_write_bytes(workloads, cpu) -> None:
    case = workloads["copy"].setup(cpu, {"size": 2**20})
    assert case.bytes == 2 * 2**20
    assert case.run().sum().item() == 2**20  # every byte of the source (ones) arrived


def test_gpu_only_precisions_and_transfers_are_skipped_with_reasons(workloads, cpu) -> None:
    with pytest.raises(SkipCase, match="TF32"):
        workloads["matmul"].setup(cpu, {"size": 64, "precision": "tf32"})
    with pytest.raises(SkipCase, match="fp16"):
        workloads["mlp-train"].setup(cpu, {"batch": 4, "precision": "fp16"})
    with pytest.raises(SkipCase, match="no transfer on the CPU"):
        workloads["matmul"].setup(cpu, {"size": 64, "precision": "fp32", "include_transfer": True})
    with pytest.raises(SkipCase, match="no transfer"):
        workloads["transfer"].setup(cpu, {"size": 4096, "pinned": True, "direction": "h2d"})


def test_emulated_bf16_is_measured_small_and_skipped_large(cpu) -> None:
    without = Device("cpu", "cpu", {"extensions": ["avx2"]}, "x", timer=cpu.timer)
    with_amx = Device("cpu", "cpu", {"extensions": ["amx_bf16"]}, "x", timer=cpu.timer)
    _precision.check_emulated_bf16(without, "bf16", 2.0 * 1024**3)
    _precision.check_emulated_bf16(with_amx, "bf16", 2.0 * 8192**3)
    with pytest.raises(SkipCase, match="no bf16 instructions"):
        _precision.check_emulated_bf16(without, "bf16", 2.0 * 2048**3)


def test_tf32_switches_are_set_for_the_case_and_restored_in_teardown(workloads, cpu) -> None:
    gpu = Device("cuda:0", "cuda", {}, "x", timer=cpu.timer)
    torch.backends.cuda.matmul.allow_tf32 = False
    restore = _precision.apply_tf32(gpu, "tf32")
    assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    restore()
    assert not torch.backends.cuda.matmul.allow_tf32
    restore = _precision.apply_tf32(gpu, "fp32")  # strict fp32 switches cuDNN's TF32 off too
    assert not torch.backends.cudnn.allow_tf32
    restore()
    assert torch.backends.cudnn.allow_tf32


def test_pruning_zeroes_the_asked_share_and_keeps_the_kernels_dense(workloads, cpu) -> None:
    case = workloads["mlp-infer"].setup(cpu, {"batch": 8, "precision": "fp32", "sparsity": 0.9})
    assert case.metrics["weight_sparsity"] == pytest.approx(0.9, abs=0.001)
    assert case.flops == _models.mlp_forward_flops(8)  # dense FLOPs: nothing is skipped


def test_model_flops_do_not_count_checkpoint_recomputation(workloads, cpu) -> None:
    params = {"batch": 2, "seq_len": 16, "precision": "fp32"}
    plain = workloads["transformer-train"].setup(cpu, params)
    checkpointed = workloads["transformer-train"].setup(cpu, {**params, "checkpointing": True})
    assert plain.flops == checkpointed.flops > 0
    counted = []
    for case in (plain, checkpointed):
        with FlopCounterMode(display=False) as counter:
            case.run()
        counted.append(counter.get_total_flops())
    assert counted[1] > counted[0] * 1.2  # checkpointing really recomputes the forward
    infer = workloads["transformer-infer"].setup(cpu, params)
    assert plain.flops > 2.5 * infer.flops  # backward ≈ twice the forward


def test_cpu_threads_pins_the_thread_count_and_skips_unusable_counts(workloads, cpu) -> None:
    case = workloads["cpu-threads"].setup(cpu, {"op": "conv", "threads": 1})
    assert case.threads == 1 and case.flops > 0
    too_many = int(cpu.info["usable_cpus"]) + 1
    with pytest.raises(SkipCase, match="usable"):
        workloads["cpu-threads"].setup(cpu, {"op": "matmul", "threads": too_many})


class _FakeTrial:
    """Fits every batch up to ``capacity``; counts steps."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.calls = capacity, 0
        self.device = Device("cuda:0", "cuda", {}, "x", timer=object)

    def footprint(self, batch: int, baseline: int = 0) -> float | None:
        self.calls += 1
        return float(batch) if batch <= self.capacity else None


def test_max_batch_search_doubles_then_bisects_to_within_one_64th() -> None:
    trial = _FakeTrial(1000)
    found, peak = workload_max_batch.search_by_doubling(trial)  # type: ignore[arg-type]
    assert 1000 - 1000 // 64 <= found <= 1000 and peak == found
    assert trial.calls < 20


@pytest.mark.slow
def test_max_batch_on_the_cpu_stays_within_its_budget(workloads, cpu) -> None:
    params = {"image_size": 32, "precision": "fp32", "cpu_memory_budget_gib": 0.25}
    case = workloads["max-batch"].setup(cpu, params)
    try:
        limit = case.metrics["max_batch_limit_bytes"]
        assert limit == 0.25 * 2**30
        assert case.metrics["max_batch"] >= 16
        assert 0 < case.metrics["max_batch_peak_bytes"] <= limit
        assert case.items == case.metrics["max_batch"]
    finally:
        case.teardown()


def test_max_model_on_the_cpu_finds_the_largest_mlp_within_its_budget(workloads, cpu) -> None:
    (params,) = workloads["max-model"].grid("quick")
    case = workloads["max-model"].setup(cpu, params)
    try:
        limit, peak = case.metrics["max_model_limit_bytes"], case.metrics["max_model_peak_bytes"]
        layers, parameters = case.metrics["max_model_layers"], case.metrics["max_model_params"]
        assert limit == params["cpu_memory_budget_gib"] * 2**30
        assert 0.5 * limit < peak <= limit  # the search got close to the budget, never over it
        assert parameters == workload_max_batch.mlp_parameters(params["width"], int(layers))
        # fp32 weights, gradients and two AdamW states: at least 16 bytes a parameter
        assert peak >= 16 * parameters
        case.run()
    finally:
        case.teardown()


def test_max_model_search_on_a_gpu_stops_where_memory_runs_out() -> None:
    trial = _FakeTrial(300)  # fits up to 300 layers
    found, _ = workload_max_batch.search_by_doubling(trial)
    assert 300 - 300 // 64 <= found <= 300


def test_max_batch_budget_from_config_is_the_parameter_the_row_records(tmp_path, monkeypatch):
    config = tmp_path / "benchsite.toml"
    config.write_text("[max_batch]\ncpu_memory_budget_gib = 0.5\n")
    monkeypatch.setenv("BENCHSITE_CONFIG", str(config))
    for workload in workload_max_batch.register_workloads():  # max-batch and max-model
        for profile in ("quick", "full"):
            assert [p["cpu_memory_budget_gib"] for p in workload.grid(profile)] == [0.5]
    assert workload_max_batch.cpu_budget_bytes({"cpu_memory_budget_gib": 0.5}) == 0.5 * 2**30
    monkeypatch.delenv("BENCHSITE_CONFIG")
    monkeypatch.chdir(tmp_path / "..")
    import psutil

    half = psutil.virtual_memory().available / 2
    assert workload_max_batch.cpu_budget_bytes({}) == pytest.approx(half, rel=0.05)


def test_cpu_cache_sizes_come_from_sysfs(tmp_path):
    from benchsite.plugins.devices.cpu import cache_sizes

    for index, (level, kind, size) in enumerate(
        [(1, "Data", "32K"), (2, "Unified", "1024K"), (3, "Unified", "32M")]
    ):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        for name, value in (("level", level), ("type", kind), ("size", size)):
            (folder / name).write_text(f"{value}\n")
    assert cache_sizes(tmp_path) == {"l2_cache_bytes": 2**20, "l3_cache_bytes": 32 * 2**20}
    assert cache_sizes(tmp_path / "missing") == {}
