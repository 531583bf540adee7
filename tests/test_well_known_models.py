"""The well-known architectures and LLM generation (``benchsite[models]``): without
``transformers`` they are listed as unavailable with the install command and record a skip,
never an error; with it their quick grids run on the CPU, generation stores tokens/s, per-token
latency and the KV cache, and a generation row is shown as a share of the device's measured
copy bandwidth. Each row stores what one of its items is, and a site built from those rows
reads in the models' own units (images/s, sequences/s, tokens/s, ms per token) on their pages,
the one-screen answer, the FAQ and the "up to 50×" claim; a workload that declares nothing
still reads items/s."""

from __future__ import annotations

import html
import json
import re
import sys

import pytest
from analysis_frames import GPU_INFO, row

from benchsite.cli import listing
from benchsite.host.manager import load_plugins
from benchsite.measure.runner import RunOptions, run_benchmarks
from benchsite.site import BuildOptions, build_site
from benchsite.site.analyse import analyse
from benchsite.store import parts as store
from benchsite.testing import complete_row
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
    workloads = ("llm-generate", "bert-base-infer", "resnet50-infer", "copy")
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


def test_each_row_stores_what_one_of_its_items_is(measured):
    _, rows = measured
    items = dict(zip(rows["workload"], rows["item_unit"], strict=True))
    assert items["resnet50-infer"] == "image" and items["bert-base-infer"] == "sequence"
    assert items["llm-generate"] == "token"
    assert items["copy"] is None  # declares nothing: read as items


# a third-party workload that declares no item: its throughput still reads items/s
UNDECLARED = """
from benchsite import Case, Workload, hookimpl

@hookimpl
def register_workloads():
    case = lambda device, params: Case(run=lambda: None, items=params["batch"])
    return [Workload(name="widgets", description="w", setup=case, params={"batch": [1, 8]},
                     axis="batch")]
"""
SPEEDUP = 40.0  # the GPU twins of the measured model rows


def gpu_twin(cpu: dict) -> dict:
    """The measured CPU row as if measured 40× faster on an H200 of the same host."""
    faster = {k: cpu[k] * SPEEDUP for k in ("tflops", "gbps", "items_per_s") if cpu[k] == cpu[k]}
    slower = {k: cpu[k] / SPEEDUP for k in ("median_s", "ci_low_s", "ci_high_s", "min_s")}
    samples = [value / SPEEDUP for value in cpu["samples_s"]]
    return (
        cpu
        | faster
        | slower
        | {"samples_s": samples, "row_id": cpu["row_id"] + "-gpu"}
        | {
            "device": "cuda:0",
            "device_kind": "cuda",
            "device_model": "NVIDIA H200",
            "device_info": json.dumps(GPU_INFO),
        }
    )


@pytest.fixture(scope="module")
def model_site(measured, tmp_path_factory):
    """A site built from a real store: the measured rows, their GPU twins and two rows of a
    plugin's workload that declares no item; (site folder, text of each page)."""
    _, rows = measured
    folder = tmp_path_factory.mktemp("model-site")
    (folder / "undeclared.py").write_text(UNDECLARED)
    models = rows.to_dict("records")  # the copies too: the bandwidth bound needs them
    widgets = [
        complete_row({"workload": "widgets", "params": {"batch": b}, "median_s": 1e-3 * b}, "batch")
        | {"host": models[0]["host"], "items": float(b), "items_per_s": 1000.0}
        for b in (1, 8)
    ]
    run = models[0]["run_id"]
    store.write_rows(folder / "results", models[0]["host"], run, [*models, *map(gpu_twin, models)])
    store.write_rows(folder / "results", models[0]["host"], "widgets", widgets)
    options = BuildOptions(
        results=folder / "results", out=folder / "site", plugins=(str(folder / "undeclared.py"),)
    )
    build_site(options)
    return folder / "site"


def page_text(site, path: str) -> str:
    text = (site / path).read_text(encoding="utf-8")
    return html.unescape(
        re.sub(r"<[^>]+>", " ", re.sub(r"<script.*?</script>", "", text, flags=re.S))
    )


def test_the_workload_pages_read_in_the_models_units(model_site):
    resnet = page_text(model_site, "workloads/resnet50-infer.html")
    assert "Throughput (images/s) against batch" in resnet and "items/s" not in resnet
    llm = page_text(model_site, "workloads/llm-generate.html")
    assert "Throughput (tokens/s) against batch" in llm
    seconds = r"[\d.]+ (s|ms|µs)"  # in its unit, not a bare number of seconds
    assert re.search(rf"time per token p50\s+{seconds}\s", llm)  # the community's ms per token
    assert re.search(rf"time to first token\s+{seconds}\s", llm)
    assert re.search(rf"[\d,.]+ tokens/s \({seconds} per token, p50\) reading", llm)
    charts = "".join(p.read_text() for p in (model_site / "assets" / "charts").glob("*.svg"))
    assert "throughput (images/s)" in charts and "throughput (tokens/s)" in charts
    widgets = page_text(model_site, "workloads/widgets.html")
    assert "Throughput (items/s) against batch" in widgets and "1,000 items/s" in widgets


def test_the_answers_and_the_claim_name_the_models_in_their_units(model_site):
    overview = page_text(model_site, "index.html")
    assert re.search(r"[\d,.]+ images/s against [\d,.]+ images/s", overview)  # the table
    assert re.search(r"a batch, [\d,.]+ (images|sequences|tokens)/s against", overview)  # the lead
    faq = page_text(model_site, "faq.html")
    assert "How much faster is inference of a model like mine on a GPU than on a CPU?" in faq
    lead = "For a model like yours: the GPU is 40× in each as fast as the CPU on the models "
    assert (
        lead + "measured in their own units (bert-base-infer, llm-generate, resnet50-infer)." in faq
    )
    for unit in ("images/s", "sequences/s", "tokens/s"):
        assert re.search(rf"[\d,.]+ {unit} on the NVIDIA H200 \(cuda:0\) against", faq), unit
    claim = page_text(model_site, "claims.html")
    assert "Judged on the models alone, the GPU is 40× in each as fast as the CPU on" in claim
    assert "the best of them is near 50×" in claim  # 40×: the twins' speedup
    assert "widgets" not in claim.split("Judged on the models alone")[1].split(".")[0]


def test_rows_stored_before_item_unit_take_their_workloads_declared_item():
    """A row of schema 2 (no ``item_unit``) of a registered model workload reads in that
    workload's item at build time; a stored item is kept; an unknown workload stays items."""
    import pandas as pd

    from benchsite.host import registry
    from benchsite.host.manager import load_plugins
    from benchsite.site.build import with_declared_items

    workloads = {n: r.item for n, r in registry.workloads(load_plugins((), quiet=True)).items()}
    rows = pd.DataFrame(
        {
            "workload": ["resnet50-infer", "bert-base-infer", "matmul", "gone-plugin"],
            "item_unit": [None, "query", None, None],
        }
    )
    filled = with_declared_items(rows, workloads)
    assert filled["item_unit"].tolist() == ["image", "query", None, None]
    older = with_declared_items(rows.drop(columns="item_unit"), workloads)
    assert older["item_unit"].tolist() == ["image", "sequence", None, None]
