"""Each verdict issue #20 found wrong on the example store, held against its expected verdict and
number (analysed once for the module: real plugins, the committed Parquet store)."""

from __future__ import annotations

import re

import pytest

from benchsite import store
from benchsite.analysis import analyse
from benchsite.plugin_manager import load_plugins
from tests.conftest import EXAMPLE_RESULTS


@pytest.fixture(scope="module")
def analysed():
    return analyse(load_plugins(), store.read_results(EXAMPLE_RESULTS))


def one(analysed, finding_id: str):
    (found,) = [f for f in analysed.findings if f.id == finding_id]
    return found


def of_kind(analysed, kind: str) -> list:
    return [f for f in analysed.findings if f.kind == kind]


def test_checkpointing_rows_pair_with_the_plain_rows_and_save_gpu_memory(analysed):
    # the store omits checkpointing=false: the plain rows are the baseline (it read "untested")
    claim = one(analysed, "claim-checkpointing-memory")
    assert claim.verdict == "supported" and claim.evidence
    assert "peak GPU memory falls by 46%" in claim.answer  # transformer-train: 855 → 459 MiB
    assert "cnn-train" in claim.answer and "falls by 5.6%" in claim.answer


def test_the_two_memory_claims_agree_on_which_memory_is_tighter(analysed):
    cpu, gpu = one(analysed, "claim-cpu-memory"), one(analysed, "claim-gpu-memory")
    assert (cpu.verdict, gpu.verdict) == ("contradicted", "supported")
    for claim in (cpu, gpu):
        assert "the CPU's RAM, not the GPU's memory, is the tighter limit" in claim.answer
        assert "is not the limit" not in claim.answer
    assert "35,328 on the NVIDIA H200 (cuda:0)" in gpu.answer and "30,393" in cpu.answer


def test_a_peak_leaves_out_in_cache_rows(analysed):
    peak = one(analysed, "efficiency-h200-cuda-0-peak")
    assert "4.2 TB/s memory copy" in peak.answer  # the 16 MiB copy in L2 reached 5.12 TB/s
    flagged = analysed.tables.rows.set_index("row_id")["flags"]
    assert not any("in-cache" in flagged[row] for row in peak.evidence)


def test_efficiency_uses_the_peak_of_the_same_precision(analysed):
    h200 = one(analysed, "efficiency-h200-cpu-mlp-train")
    assert "59% of the Intel(R) Xeon(R) Processor (cpu)'s measured fp32 compute rate" in h200.answer
    assert "(991 GFLOP/s of 1.68 TFLOP/s)" in h200.answer
    small = one(analysed, "efficiency-cpu-2core-cpu-mlp-train")
    assert "bf16 compute rate (2.11 GFLOP/s of 2.13 GFLOP/s)" in small.answer
    # a host↔device transfer is bound by the host link, not the device's memory: no share
    assert not [f for f in of_kind(analysed, "efficiency") if f.workload == "transfer"]


def test_energy_and_cost_compare_the_same_case_on_both_devices(analysed):
    copy = one(analysed, "energy-cost-h200-copy")
    assert copy.answer.startswith("copy (size 1 GiB) on h200, the same case on each device")
    assert "costs 11× less per item" in copy.answer
    params = analysed.tables.rows.set_index("row_id")["params_text"]
    assert len({params[row] for row in copy.evidence}) == 1


def test_pinned_memory_advice_carries_no_accuracy_caveat(analysed):
    advice = [f for f in of_kind(analysed, "recommendation") if f.id.startswith("recommendation")]
    pinned = [f for f in advice if "pinned" in f.title]
    lower = [f for f in advice if "instead of fp32" in f.title]
    assert pinned and lower
    assert all("accuracy" not in f.explanation for f in pinned)
    assert all("accuracy" in f.explanation for f in lower)


def test_thread_text_says_only_what_was_measured(analysed):
    texts = [f.answer for f in of_kind(analysed, "cpu-threads")]
    texts += [f.answer for f in of_kind(analysed, "recommendation") if "threads" in f.id]
    assert texts and not [t for t in texts if "beyond 16" in t or "hyper-thread" in t]
    matmul = one(analysed, "cpu-threads-h200-matmul")
    assert "still grows up to the most threads measured (16)" in matmul.answer


def test_the_17_percent_between_matmul_and_cpu_threads_is_shown_with_why(analysed):
    twin = one(analysed, "cpu-threads-h200-matmul-twin")
    assert "took 1.75 ms in the matmul workload and 2.05 ms in cpu-threads" in twin.answer
    assert "17% slower here" in twin.answer and "do not overlap" in twin.answer
    assert "44 samples of 2 calls" in twin.answer and "15 samples of 1 call" in twin.answer


def test_the_batch_rule_reads_the_whole_curve(analysed):
    # mlp-infer on the 2-core CPU dips at 64 → 512 less than 10% apart, but 512 is 13× batch 1
    found = one(analysed, "batch-scaling-cpu-2core-mlp-infer-fp32-sparsity-0")
    assert "still grows at the largest measured batch (512: 10,400 items/s)" in found.answer
    advice = [f.answer for f in of_kind(analysed, "recommendation") if "batch 1 for" in f.answer]
    assert advice == ["On the AMD EPYC (cpu), use batch 1 for preprocess: no larger measured "
                      "batch adds more than 10% throughput; they only cost memory and latency."]


def test_per_sample_memory_never_reads_zero_bytes_per_sample(analysed):
    texts = [f.answer for f in of_kind(analysed, "memory")]
    assert texts and not [t for t in texts if re.search(r"\b0 B per sample", t)]
    mlp = one(analysed, "memory-h200-mlp-infer-fp32-sparsity-0")
    assert "no memory that grows with the batch could be measured (peak 936 MiB" in mlp.answer


def test_the_overview_answers_with_each_workloads_plain_variant(analysed):
    answers = analysed.tables.answers.set_index("workload")
    assert "cpu-2core" not in set(answers["host"])  # a CI host answers only when it is alone
    mlp = answers.loc["mlp-train"]
    assert (mlp.variant, mlp.at_size, round(mlp.speedup, 1)) == ("precision=fp32", 4096.0, 39.8)
    assert answers["plain"].all()
    assert "sparsity=0.9" not in answers.loc["cnn-infer"].variant
    matmul = answers.loc["matmul"]  # its largest size is noisy: the largest usable stands
    assert (matmul.at_size, matmul.largest, matmul.largest_reasons) == (4096.0, 8192.0, ("noisy",))
    assert (matmul.kernel_from, matmul.copies_from) == (256.0, 1024.0)


def test_answers_are_short_and_name_their_variants(analysed):
    for f in of_kind(analysed, "faq") + of_kind(analysed, "claim"):
        bullets = [line for line in f.answer.splitlines() if line.startswith("- ")]
        assert len(bullets) <= 8, f.id
        assert len(set(bullets)) == len(bullets), f.id


def test_transfer_has_no_cpu_counterpart_by_design(analysed):
    from benchsite.plugins.pages.workloads import by_design

    rows = analysed.tables.current
    said = by_design(rows[rows["workload"] == "transfer"])
    assert said is not None and said.startswith("No counterpart by design (no transfer on the CPU")
    assert by_design(rows[rows["workload"] == "matmul"]) is None
