"""The well-known architectures and LLM generation (``benchsite[models]``): without
``transformers`` they are listed as unavailable with the install command and record a skip,
never an error; with it their quick grids run on the CPU, generation stores tokens/s, per-token
latency and the KV cache, and a generation row is shown as a share of the device's measured
copy bandwidth."""

from __future__ import annotations

import json
import sys

import pytest
from analysis_frames import row

from benchsite.cli import listing
from benchsite.host.manager import load_plugins
from benchsite.measure.runner import RunOptions, run_benchmarks
from benchsite.site.analyse import analyse
from benchsite.store import parts as store
from benchsite.toolkit import architectures

MODEL_WORKLOADS = {
    "resnet50-infer",
    "resnet50-train",
    "vit-b16-infer",
    "vit-b16-train",
    "bert-base-infer",
    "bert-base-train",
    "llm-generate",
}


def test_without_transformers_they_are_listed_unavailable_and_skip(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if not installed
    assert not architectures.available()
    rows = {r["name"]: r for r in listing.workload_rows(load_plugins(quiet=True))}
    for name in MODEL_WORKLOADS:
        assert rows[name]["description"].startswith(
            "unavailable: needs Hugging Face transformers, not installed here: "
            "pip install 'benchsite[models]'."
        )
    lines = listing.summary_lines("workloads", list(rows.values()), None)
    assert any(line.startswith("llm-generate") and "unavailable" in line for line in lines)
    with pytest.raises(architectures.SkipCase, match=r"pip install 'benchsite\[models\]'"):
        architectures.require()


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    pytest.importorskip("transformers")
    results = tmp_path_factory.mktemp("models") / "results"
    workloads = ("llm-generate", "bert-base-infer", "copy")
    options = RunOptions(
        results=results, workloads=workloads, devices=("cpu",), budget_s=0.05, rounds=1
    )
    report = run_benchmarks(options)
    return report, store.read_results(results)


def test_quick_grids_run_on_the_cpu_in_their_units(measured):
    report, rows = measured
    assert report.statuses.get("ok", 0) == len(rows)  # every quick case of these succeeded
    bert = rows[rows["workload"] == "bert-base-infer"].iloc[0]
    assert bert["items"] == json.loads(bert["params"])["batch"]  # sequences
    assert bert["flops"] > 0
    llm = rows[rows["workload"] == "llm-generate"]
    phases = {json.loads(r.params)["phase"]: r for r in llm.itertuples()}
    prompt, generate = phases["pp32"], phases["tg8"]
    assert prompt.items == 32 and generate.items == 8  # tokens of batch 1
    prompt_metrics, generate_metrics = json.loads(prompt.metrics), json.loads(generate.metrics)
    assert prompt_metrics["ttft_s"] > 0 and prompt.flops > 0
    assert 0 < generate_metrics["token_p50_s"] <= generate_metrics["token_p99_s"]
    # GPT-2 (tiny): 2 layers × 2 heads × 32 per head × 9 tokens, keys and values, fp32
    assert generate_metrics["kv_cache_bytes"] == 2 * 2 * 2 * 32 * 9 * 4
    assert generate_metrics["memory_bound"] == 1.0 and generate.gbps > 0


def test_generation_is_shown_against_the_measured_copy_bandwidth(measured):
    _, rows = measured
    plugins = load_plugins(quiet=True)
    analysed = analyse(plugins, rows)
    shares = analysed.tables.bandwidth_shares
    generate = rows[rows["metrics"].str.contains('"memory_bound"')]
    assert list(shares["row_id"]) == list(generate["row_id"])
    found = [f for f in analysed.findings if f.kind == "bandwidth-bound"]
    assert len(found) == 1 and "tokens/s" in found[0].answer
    assert found[0].evidence == tuple(generate["row_id"])


def test_the_share_divides_by_the_best_trusted_copy_of_the_same_device(tmp_path):
    big, small = 2**30, 2**10  # 1 KiB sits in the H200's 60 MiB L2: flagged in-cache, left out
    rows = [
        row("copy", "cuda:0", big / 2e12, {"size": big}, bytes=2.0 * big, gbps=4000.0),
        row("copy", "cuda:0", small / 1e12, {"size": small}, bytes=2.0 * small, gbps=20000.0),
        row("llm-generate", "cuda:0", 1.0, {"batch": 1, "phase": "tg128"}, bytes=2e12)
        | {"gbps": 2000.0, "metrics": {"memory_bound": 1.0}},
        row("llm-generate", "cuda:0", 1.0, {"batch": 1, "phase": "pp512"}, gbps=None),
    ]
    store.write_rows(tmp_path, "host-a", "run-000", rows)
    analysed = analyse(load_plugins(quiet=True), store.read_results(tmp_path))
    shares = analysed.tables.bandwidth_shares
    assert list(shares["row_id"]) == [rows[2]["row_id"]]
    assert shares["bandwidth_gbps"].iloc[0] == 4000.0
    assert shares["share"].iloc[0] == pytest.approx(0.5)
    (found,) = [f for f in analysed.findings if f.kind == "bandwidth-bound"]
    assert "50% of the 4 TB/s this device reached copying memory" in found.answer


def test_their_full_grids_run_in_the_models_profile_only():
    from benchsite.host import registry
    from benchsite.measure.runner import grid_of

    workloads = {n: r.item for n, r in registry.workloads(load_plugins(quiet=True)).items()}
    models = {name for name, w in workloads.items() if grid_of(w, "models")}
    assert models == MODEL_WORKLOADS
    for name in MODEL_WORKLOADS:
        assert grid_of(workloads[name], "full") == workloads[name].grid("quick")
    assert grid_of(workloads["matmul"], "full") == workloads["matmul"].grid("full")
