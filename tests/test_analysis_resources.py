"""CPU threads, batch scaling, memory, techniques, efficiency, energy, multi-GPU and hosts on
constructed results with known answers."""

from __future__ import annotations

import pytest
from analysis_frames import CPU_INFO, frame, row
from benchsite.plugins.analyses import batch_scaling as analysis_batch_scaling
from benchsite.plugins.analyses import cpu_threads as analysis_cpu_threads
from benchsite.plugins.analyses import efficiency as analysis_efficiency
from benchsite.plugins.analyses import energy_cost as analysis_energy_cost
from benchsite.plugins.analyses import hosts as analysis_hosts
from benchsite.plugins.analyses import memory as analysis_memory
from benchsite.plugins.analyses import multi_gpu as analysis_multi_gpu
from benchsite.plugins.analyses import techniques as analysis_techniques

from benchsite.tables import Tables

QUOTA_2 = {**CPU_INFO, "cgroup_cpu_quota": 2.0, "usable_cpus": 2}


def _threads(times: dict[int, float], info: dict, op: str = "matmul") -> list[dict]:
    return [
        row("cpu-threads", "cpu", t, {"threads": n, "op": op}, info=info, threads=n)
        for n, t in times.items()
    ]


def test_flat_thread_curve_is_flagged_with_the_cgroup_quota_as_reason(tmp_path):
    results = frame(_threads({1: 1.0, 2: 0.5, 4: 0.5, 8: 0.5}, QUOTA_2), tmp_path)
    found, advice = analysis_cpu_threads.cpu_thread_findings(Tables.of(results))
    assert advice.kind == "recommendation" and "Use about 2 threads" in advice.answer
    assert found.numbers["scales"] is False
    assert found.numbers["speedup"] == pytest.approx(2.0)
    assert found.numbers["efficiency"] == pytest.approx(0.25)
    assert "cgroup CPU quota allows 2 CPUs of the 16" in found.answer


def test_linear_thread_curve_scales_and_memory_bound_reason(tmp_path):
    linear = _threads({1: 8.0, 2: 4.0, 4: 2.0, 8: 1.0}, CPU_INFO)
    bound = [
        dict(r, flops=1e6, bytes=1e6, workload="cpu-threads")
        for r in _threads({1: 1.0, 2: 0.9, 4: 0.9}, CPU_INFO, op="copy")
    ]
    found = {
        f.numbers["scales"]: f
        for f in analysis_cpu_threads.cpu_thread_findings(
            Tables.of(frame(linear + bound, tmp_path))
        )
        if f.kind == "cpu-threads"
    }
    assert found[True].numbers["efficiency"] == pytest.approx(1.0)
    assert "memory-bound" in found[False].answer


def test_batch_saturation_is_the_first_batch_after_which_growth_is_below_10_percent(tmp_path):
    # items/s: 1000, 4000, 8000, 8400 (+5%), 8500 → saturation at batch 64
    times = {1: 1 / 1000, 4: 4 / 4000, 16: 16 / 8000, 64: 64 / 8400, 256: 256 / 8500}
    results = frame(
        [row("mlp-train", "cuda:0", t, {"batch": b}) for b, t in times.items()], tmp_path
    )
    (found,) = analysis_batch_scaling.saturation_table(Tables.of(results))
    assert found.batch == 16.0 and found.items_per_s == pytest.approx(8000)


def test_memory_per_sample_is_the_slope_and_gpu_memory_limit_is_named(tmp_path):
    key = "memory.gpu_peak_allocated_bytes"
    rows = [
        row(
            "mlp-train",
            "cuda:0",
            1e-3,
            {"batch": b},
            metrics={key: 5e8 + 2e6 * b, "memory.per_case": 1.0},
        )
        for b in (16, 64, 256)
    ]
    # a CPU series measured against an older baseline (no per_case mark) is not used
    rss = "memory.cpu_peak_rss_bytes"
    rows += [
        row("mlp-infer", "cpu", 1e-3, {"batch": b}, metrics={rss: 9e9 + 2e6 * b})
        for b in (16, 64, 256)
    ]
    rows.append(
        row(
            "max-batch",
            "cpu",
            1.0,
            {"model": "mlp"},
            metrics={"max_batch": 8192, "max_batch_limit_bytes": 2**34},
        )
    )
    rows.append(row("max-batch", "cuda:0", 1.0, {"model": "mlp"}, metrics={"max_batch": 2048}))
    results = frame(rows, tmp_path)
    (line,) = analysis_memory.memory_lines(Tables.of(results))
    assert line.per_sample == pytest.approx(2e6) and line.fixed == pytest.approx(5e8)
    found = analysis_memory.memory_findings(Tables.of(results))
    limit = next(f for f in found if f.workload == "max-batch")
    # the CPU searched within 16 GiB of its 256 GiB and already fits 4× the GPU's batch: measured,
    # not extrapolated to all of its RAM
    assert "would hold" not in limit.answer
    assert "fits a batch of 8,192 samples in 16 GiB: here GPU memory is the tighter" in limit.answer


def test_the_model_size_claim_reads_the_largest_model_measured(tmp_path):
    """max-model rows: the largest model per device in parameters, the GPU's limit measured and
    the CPU's not reached at its budget; the claim about model size rests on them."""
    from benchsite.plugins.analyses import claims

    from tests.analysis_frames import CPU_INFO, GPU_INFO

    budget = {"width": 2048, "batch": 8, "precision": "fp32", "cpu_memory_budget_gib": 4.0}
    model = {"max_model_params": 2.5e8, "max_model_layers": 60, "max_model_limit_bytes": 2**32}
    gpu = {"max_model_params": 8.8e9, "max_model_layers": 2098, "max_model_limit_bytes": 1.5e11}
    rows = [
        row(
            "max-model", "cpu", 1.0, budget, metrics=model, info={**CPU_INFO, "memory_bytes": 2**37}
        ),
        row(
            "max-model",
            "cuda:0",
            0.05,
            budget,
            metrics=gpu,
            info={**GPU_INFO, "memory_bytes": 1.5e11},
        ),
    ]
    tables = Tables.of(frame(rows, tmp_path))
    (largest,) = [f for f in analysis_memory.memory_findings(tables) if f.workload == "max-model"]
    assert "a model of 250 million parameters (60 layers) on the" in largest.answer
    assert "within a 4 GiB budget" in largest.answer
    assert "a model of 8.8 billion parameters fills its 140 GiB" in largest.answer
    assert "limit was not reached at 4 GiB" in largest.answer
    claim = claims.gpu_memory_limits(tables, [largest])
    assert claim.verdict == "supported" and "8.8 billion parameters (2,098 layers" in claim.answer
    assert (
        "not reached at 4 GiB" in claim.answer and "not measured" not in claim.answer.split(".")[0]
    )
    assert set(claim.evidence) == set(largest.evidence)


def test_compile_breakeven_and_checkpointing_memory(tmp_path):
    peak = "memory.gpu_peak_allocated_bytes"
    rows = [
        row("mlp-train", "cuda:0", 2e-3, {"batch": 64, "compile": False}),
        row(
            "mlp-train", "cuda:0", 1e-3, {"batch": 64, "compile": True}, metrics={"compile_s": 5.0}
        ),
        row(
            "transformer-train",
            "cuda:0",
            1e-3,
            {"batch": 8, "checkpointing": False},
            metrics={peak: 1e9},
        ),
        row(
            "transformer-train",
            "cuda:0",
            1.3e-3,
            {"batch": 8, "checkpointing": True},
            metrics={peak: 4e8},
        ),
    ]
    effects = {
        e.technique: e
        for e in analysis_techniques.technique_effects(Tables.of(frame(rows, tmp_path)))
    }
    assert effects["compile"].speedup == pytest.approx(2.0)
    assert effects["compile"].breakeven_calls == pytest.approx(5000)
    assert effects["checkpointing"].memory_saved == pytest.approx(0.6)
    assert effects["checkpointing"].speedup == pytest.approx(1 / 1.3)


def test_a_technique_finding_keeps_its_noisy_cases_and_leaves_out_only_wrong_ones(tmp_path):
    rows = [row("mlp-train", "cuda:0", 2e-3, {"batch": b, "compile": False}) for b in (64, 256)]
    fast = [
        row("mlp-train", "cuda:0", 1e-3, {"batch": 64, "compile": True}),
        row("mlp-train", "cuda:0", 0.2e-3, {"batch": 256, "compile": True}),
    ]  # 2x and 10x
    results = frame(rows + fast, tmp_path)

    def compile_finding(flagged: set[str], code: str):
        flags = [[code] if r in flagged else [] for r in results["row_id"]]
        found = analysis_techniques.technique_findings(Tables.of(results.assign(flags=flags)))
        return next(f for f in found if f.kind == "technique")

    noisy = compile_finding({fast[1]["row_id"]}, "noisy")  # uncertain: kept, both cases said
    assert "makes mlp-train 2× faster and 10× faster (2 cases)" in noisy.answer
    assert noisy.numbers["median_speedup"] == pytest.approx(6.0) and not noisy.numbers["suspect"]
    wrong = compile_finding({fast[1]["row_id"]}, "above-peak")  # cannot be right: left out
    assert "makes mlp-train 2× faster (2× (95% CI" in wrong.answer
    assert wrong.answer.endswith("Left out: 1 of 2 cases, flagged above-peak.")
    every = compile_finding({fast[0]["row_id"], fast[1]["row_id"]}, "above-peak")
    assert every.answer.startswith("Suspect: every case is flagged above-peak. On the")
    assert every.numbers["suspect"] and every.strength == "weak"


def test_efficiency_is_a_share_of_the_measured_peak(tmp_path):
    rows = [
        row("matmul", "cuda:0", 1e-3, {"size": 4096, "precision": "bf16"}, tflops=500.0),
        row("mlp-train", "cuda:0", 1e-3, {"batch": 64, "precision": "bf16"}, tflops=125.0),
    ]
    found = analysis_efficiency.efficiency_findings(Tables.of(frame(rows, tmp_path)))
    share = next(f for f in found if f.workload == "mlp-train")
    assert share.numbers["best_share"] == pytest.approx(0.25)
    assert "25%" in share.answer


def test_a_workload_above_the_stored_peak_says_the_peak_is_missing_not_a_share_above_100(tmp_path):
    rows = [
        row("matmul", "cpu", 1e-3, {"size": 64, "precision": "fp32"}, tflops=0.002),
        row("mlp-train", "cpu", 1e-3, {"batch": 64, "precision": "fp32"}, tflops=0.004),
    ]
    found = analysis_efficiency.efficiency_findings(Tables.of(frame(rows, tmp_path)))
    share = next(f for f in found if f.workload == "mlp-train")
    assert share.strength == "weak" and "%" not in share.answer
    assert "does not hold the device's peak" in share.answer


def test_energy_per_item_known_and_unavailable_said_plainly(tmp_path):
    rows = [
        row(
            "mlp-train",
            "cuda:0",
            1e-3,
            {"batch": 100},
            metrics={"nvml.energy_j": 50.0, "measured_calls": 10, "cost.usd_per_hour": 3.6},
        ),
        row("mlp-train", "cpu", 1e-2, {"batch": 100}, metrics={"measured_calls": 10}),
    ]
    table = analysis_energy_cost.energy_table(Tables.of(frame(rows, tmp_path)))
    gpu = table[table["kind"] == "cuda"].iloc[0]
    assert gpu.j_per_item == pytest.approx(0.05)
    assert gpu.usd_per_million == pytest.approx(3.6 / 3600 * 1e-3 / 100 * 1e6)
    stale = analysis_energy_cost.energy_table(
        Tables.of(
            frame(
                [
                    row(
                        "mlp-train",
                        "cuda:0",
                        1e-3,
                        {"batch": 100},
                        metrics={"nvml.energy_j": 0.0, "measured_calls": 10},
                    )
                ],
                tmp_path / "stale",
            )
        )
    )
    assert stale["j_per_item"].isna().all()  # a counter that did not move is not 0 J
    unavailable = analysis_energy_cost.energy_cost_findings(
        Tables.of(frame([row("mlp-train", "cpu", 1e-2, {"batch": 1})], tmp_path / "cpu-only"))
    )
    assert unavailable[0].strength == "none" and "unavailable" in unavailable[0].answer


def _train(
    workload: str,
    n: int,
    step_s: float,
    peak: float,
    scaling: str = "strong",
    host: str = "host-a",
    device: str = "cuda:0",
) -> dict:
    params = {"world_size": n, "model": "transformer", "scaling": scaling}
    if workload == "pipeline-train":
        params.pop("scaling")
    items = n if scaling == "weak" else 1  # weak scaling: the global batch grows with n
    return row(
        workload,
        device,
        step_s,
        params,
        world_size=n,
        host=host,
        axis="world_size",
        items=items,
        metrics={"memory.gpu_peak_allocated_bytes": peak},
    )


def test_strong_scaling_efficiency_and_missing_multi_gpu(tmp_path):
    rows = [_train("ddp-train", n, t, 1e9) for n, t in ((1, 1.0), (2, 0.625))]
    found = analysis_multi_gpu.multi_gpu_findings(Tables.of(frame(rows, tmp_path)))
    (case,) = [f for f in found if "efficiency" in f.numbers]
    assert case.numbers["efficiency"] == {"2": pytest.approx(0.8)}
    empty = analysis_multi_gpu.multi_gpu_findings(
        Tables.of(frame([row("matmul", "cpu", 1.0, {"size": 64})], tmp_path / "none"))
    )
    assert empty[0].strength == "none" and empty[0].evidence == ()


def test_scaling_memory_and_hosts_are_compared_within_a_host_only(tmp_path):
    rows = [
        _train("ddp-train", 1, 1.0, 30e9),
        _train("ddp-train", 2, 0.625, 22e9),
        _train("ddp-train", 1, 1.0, 30e9, "weak"),
        _train("ddp-train", 2, 1.05, 30e9, "weak"),
        _train("fsdp-train", 1, 1.1, 27e9),
        _train("fsdp-train", 2, 1.0, 15e9),
        _train("pipeline-train", 1, 1.2, 25e9),
        _train("pipeline-train", 2, 0.8, 13e9),
        # a second machine, twice as slow on one device: must not become anyone's baseline
        _train("ddp-train", 1, 2.0, 30e9, host="host-b"),
    ]
    found = [
        f
        for f in analysis_multi_gpu.multi_gpu_findings(Tables.of(frame(rows, tmp_path)))
        if "efficiency" not in f.numbers
    ]
    scaling, memory = found
    assert scaling.explanation.splitlines() == [
        "- DDP, transformer, weak: 1.90× (95% efficiency, weak scaling)",
        "- DDP, transformer, strong: 1.60× (80% efficiency, strong scaling)",
        "- pipeline, transformer: 1.50× (75% efficiency, strong scaling)",
        "- FSDP, transformer, strong: 1.10× (55% efficiency, strong scaling)",
    ]
    assert "1.10× (FSDP transformer) to 1.60× (DDP transformer)" in scaling.answer
    assert "1.90× (DDP transformer) with the same batch per device" in scaling.answer
    assert scaling.chart is not None
    assert memory.numbers["peak_bytes"] == {"pipeline": 13e9, "FSDP": 15e9, "DDP": 22e9}
    assert memory.numbers["ddp_one_device_bytes"] == 30e9  # strong scaling's, host-a's


def test_hosts_side_by_side_on_common_cases(tmp_path):
    rows = [
        row("matmul", "cpu", 4.0, {"size": 64}, host="laptop"),
        row("matmul", "cuda:0", 1.0, {"size": 64}, host="server"),
        row("matmul", "cpu", 9.0, {"size": 128}, host="laptop"),
    ]  # not common: ignored
    (found,) = analysis_hosts.host_findings(Tables.of(frame(rows, tmp_path)))
    speeds = found.numbers["relative_speed"]
    assert speeds["NVIDIA H200 (cuda:0) on server"] == pytest.approx(1.0)
    assert speeds["Test CPU (cpu) on laptop"] == pytest.approx(0.25)
    assert len(found.evidence) == 2


def test_an_out_of_memory_case_re_run_with_success_no_longer_counts(tmp_path):
    case = {"model": "cnn"}
    rows = [
        row("max-batch", "cuda:0", 1.0, case, run=0, status="oom"),
        row("max-batch", "cuda:0", 1.0, case, run=1, metrics={"max_batch": 512}),
    ]
    results = frame(rows, tmp_path)
    assert analysis_memory.oom_rows(Tables.of(results)) == []
    assert analysis_memory.oom_rows(Tables.of(frame(rows[:1], tmp_path / "only"))) == [
        rows[0]["row_id"]
    ]
