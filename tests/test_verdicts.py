"""Each verdict issue #20 found wrong on the example store, held against its expected verdict and
number (analysed once for the module: real plugins, the committed Parquet store)."""

from __future__ import annotations

import re

import pytest

from benchsite.host.manager import load_plugins
from benchsite.site.analyse import analyse
from benchsite.store import parts as store
from benchsite.toolkit.findings import side_of
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
    # transformer-train: 857 → 456 MB. Its time pair is flagged noisy, which says nothing about
    # memory: it stayed out of this claim until memory claims read suspect pairs too
    assert (
        "transformer-train (batch 8, fp32, seq len 512) on the NVIDIA H200 (cuda:0): falls by "
        "47%" in claim.answer
    )
    assert "cnn-train" in claim.answer and "falls by 5.7%" in claim.answer


def test_the_memory_claims_say_what_was_measured_not_an_extrapolation(analysed):
    cpu, gpu = one(analysed, "claim-cpu-memory"), one(analysed, "claim-gpu-memory")
    assert (cpu.verdict, gpu.verdict) == ("contradicted", "supported")
    for claim in (cpu, gpu):  # the CPU's search stopped at its 4 GiB budget: no straight line
        assert "limit was not reached at 4 GiB (a batch of 847 samples" in claim.answer
        assert "which memory is the tighter limit was not measured" in claim.answer
        assert "would hold" not in claim.answer and "27,575" not in claim.answer
    assert "34,304 samples on the NVIDIA H200 (cuda:0)" in gpu.answer
    assert "model size was not measured" in gpu.answer  # the example store has no max-model
    faq = one(analysed, "faq-memory")
    assert "Model size was not measured" in faq.answer and "samples fills its" in faq.answer
    for text in (cpu.answer, gpu.answer, faq.answer):  # every batch size carries its unit
        bare = re.findall(r"\b\d{1,3}(?:,\d{3})+\b(?! samples)", text)
        assert not bare, bare


def test_a_peak_leaves_out_in_cache_rows(analysed):
    peak = one(analysed, "efficiency-h200-cuda-0-peak")
    assert "4.24 TB/s memory copy" in peak.answer  # 1 GiB; a 16 MiB copy fits in the L2
    flagged = analysed.tables.rows.set_index("row_id")["flags"]
    assert not any("in-cache" in flagged[row] for row in peak.evidence)


def test_efficiency_uses_the_peak_of_the_same_precision(analysed):
    h200 = one(analysed, "efficiency-h200-cpu-mlp-train")
    assert "43% of the Intel(R) Xeon(R) Processor (cpu)'s measured fp32 compute rate" in h200.answer
    assert "(843 GFLOP/s of 1.95 TFLOP/s)" in h200.answer
    small = one(analysed, "efficiency-cpu-2core-cpu-mlp-train")
    assert "bf16 compute rate (2.11 GFLOP/s of 2.13 GFLOP/s)" in small.answer
    # a host↔device transfer is bound by the host link, not the device's memory: no share
    assert not [f for f in of_kind(analysed, "efficiency") if f.workload == "transfer"]


def test_energy_and_cost_compare_only_the_same_case_on_both_devices(analysed):
    # this H200 host's CPU has no energy counter (no RAPL in its VM) and no price is configured:
    # nothing to compare, and the answer says why rather than compare different cases
    copy = one(analysed, "energy-cost-h200-copy")
    assert copy.answer.startswith(
        "copy on h200, not compared (no case has an energy or cost "
        "figure on both a CPU and an accelerator); each device alone"
    )
    assert "(cpu): energy not measured here (no readable RAPL counter" in copy.answer
    assert "less per item" not in copy.answer
    assert copy.numbers["same_case"] is False
    params = analysed.tables.rows.set_index("row_id")["params_text"]
    assert len({params[row] for row in copy.evidence}) == 1  # each device's largest: 1 GiB


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
    assert "runs 7.6× faster on 16 threads than on 1 (parallel efficiency 48%)" in matmul.answer


def test_the_gap_between_a_workload_and_cpu_threads_is_shown_with_why(analysed):
    twin = one(analysed, "cpu-threads-h200-mlp-step-twin")
    assert "took 8.75 ms in the mlp-train workload and 8.08 ms in cpu-threads" in twin.answer
    assert "7.6% faster here" in twin.answer and "the 95% intervals do not overlap" in twin.answer
    assert "74 samples of 3 calls" in twin.answer and "83 samples of 3 calls" in twin.answer
    # matmul n=1024 on 16 threads: 1.97 ms here, 1.94 ms in the matmul workload (1.6%): no gap
    assert not [f for f in analysed.findings if f.id == "cpu-threads-h200-matmul-twin"]


def test_the_batch_rule_reads_the_whole_curve(analysed):
    # mlp-infer on the 2-core CPU dips at 64 → 512 less than 10% apart, but 512 is 13× batch 1
    found = one(analysed, "batch-scaling-cpu-2core-mlp-infer-fp32-sparsity-0")
    assert "still grows at the largest measured batch (512: 10,400 items/s)" in found.answer
    advice = [f.answer for f in of_kind(analysed, "recommendation") if "batch 1 for" in f.answer]
    assert advice == [
        "On the AMD EPYC (cpu), use batch 1 for preprocess: no larger measured "
        "batch adds more than 10% throughput; they only cost memory and latency."
    ]


def test_per_sample_memory_never_reads_zero_bytes_per_sample(analysed):
    texts = [f.answer for f in of_kind(analysed, "memory")]
    assert texts and not [t for t in texts if re.search(r"\b0 B per sample", t)]
    mlp = one(analysed, "memory-h200-mlp-infer-fp32-sparsity-0")
    assert "about 12 KiB per sample plus 78.1 MiB fixed (126 MiB at batch 4,096)" in mlp.answer


def test_the_overview_answers_with_each_workloads_plain_variant(analysed):
    answers = analysed.tables.answers.set_index("workload")
    assert "cpu-2core" not in set(answers["host"])  # a CI host answers only when it is alone
    cnn = answers.loc["cnn-train"]
    assert (cnn.variant, cnn.at_size, round(cnn.speedup, 1)) == (
        "image_size=224, precision=fp32",
        128.0,
        57.5,
    )
    # the distributed workloads train a ~0.9 B-parameter model on the GPU and a small one on the
    # CPU under the same parameters (their rows declare 126,000× the FLOPs on the GPU): no pair,
    # so no answer (the overview had read "ddp-train: the GPU 0.24× the CPU at world_size 1")
    assert not {"ddp-train", "fsdp-train", "pipeline-train"} & set(answers.index)
    assert answers["plain"].all()
    assert "sparsity=0.9" not in answers.loc["cnn-infer"].variant
    mlp = answers.loc["mlp-train"]  # its largest batch is flagged: it stands, widened
    assert (mlp.variant, mlp.at_size, mlp.uncertain) == ("precision=fp32", 4096.0, ("unstable",))
    assert round(mlp.speedup) == 47 and mlp.low < 45 < 49 < mlp.high
    matmul = answers.loc["matmul"]
    assert (matmul.at_size, matmul.largest_reasons) == (8192.0, ())
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


def test_cases_of_a_byte_sized_workload_name_their_size_in_bytes(analysed):
    copy = one(analysed, "speedup-h200-cuda-0-copy")
    assert "size 256 MiB" in copy.answer and "size 4 KiB" in copy.answer
    assert "million" not in copy.explanation and "65,536" not in copy.explanation


def test_a_scaling_finding_whose_largest_world_size_is_flagged_keeps_it_and_says_so(analysed):
    flagged = one(analysed, "multi-gpu-h200-cpu-ddp-train-mlp-bf16-strong")
    assert "runs at 2.8% scaling efficiency" in flagged.answer
    assert "- Flagged at 8 devices (flagged noisy): kept" in flagged.explanation
    clean = one(analysed, "multi-gpu-h200-cpu-fsdp-train-transformer-bf16-strong")
    assert clean.answer.startswith("On h200, FSDP training")


# -- issue 38: every verdict held against its own numbers ----------------------------------------


def _ratios(text: str) -> list[float]:
    """Every ``12×`` / ``0.9×`` of a sentence, as numbers."""
    return [float(x.replace(",", "")) for x in re.findall(r"([\d,.]+)×", text)]


def test_a_flagged_pair_stays_in_the_headline_and_the_best_case(analysed):
    answers = analysed.tables.answers.set_index("workload")
    copy = answers.loc["copy"]  # its 1 GiB CPU row drifted: 61x with a wider interval, not 1.5x
    assert copy.at_size == 2**30 and round(copy.speedup) == 61 and copy.uncertain == ("unstable",)
    best = one(analysed, "recommendation-device-h200-cuda-0-mlp-train")
    pairs = analysed.tables.speedups
    mine = pairs[(pairs.workload == "mlp-train") & (pairs.host == "h200")]
    assert "47× (95% CI" in best.answer and "best case (batch 4,096" in best.answer
    assert round(mine.speedup.max()) == 47


def test_worst_cases_and_medians_use_every_measured_pair(analysed):
    pairs = analysed.tables.speedups
    for workload, worst in (("transformer-train", 3.8), ("cnn-train", 4.5)):
        mine = pairs[(pairs.workload == workload) & (pairs.host == "h200")]
        assert round(mine.speedup.min(), 1) == worst
        advice = one(analysed, f"recommendation-device-h200-cuda-0-{workload}")
        said = advice.answer.split("in the worst")[0].rsplit(",", 1)[-1]
        assert round(_ratios(said)[0], 1) == worst
    mlp = one(analysed, "recommendation-device-h200-cuda-0-mlp-infer")  # batch 1: 0.90x
    assert "At batch 1 and below the CPU is as fast or faster (there the GPU is 1.1× slower)" in (
        mlp.answer
    )
    training = one(analysed, "faq-training-speed")
    assert "(median 17× over 24 cases)" in training.answer


def test_a_depends_has_cases_on_both_sides_and_a_parenthesis_names_their_hardware(analysed):
    for claim in of_kind(analysed, "claim"):
        if claim.verdict != "depends":
            continue
        lines = [line for line in claim.answer.split("\n") if line.startswith("- ")]
        if "(95% CI" in claim.answer and lines:
            sides = {side_of(*_ci(line)) for line in lines if _ci(line)}
            assert {"faster", "slower"} <= sides or "includes 1×" in claim.answer, claim.answer
    pinned = one(analysed, "claim-pinned")  # all ten pairs favour pinned memory (1.1-8.6x)
    assert pinned.verdict == "supported" and "faster in all 10 measured cases" in pinned.answer
    mixed = one(analysed, "claim-mixed-precision")  # the AMD case is named as the AMD's
    assert "0 of 1 on the AMD EPYC (cpu)" in mixed.answer
    assert "2 of 3 on the NVIDIA H200 (cuda:0)" in mixed.answer


def _ci(line: str) -> tuple[float, float] | None:
    found = re.search(r"95% CI ([\d.]+)–([\d.]+)×", line)
    return (float(found.group(1)), float(found.group(2))) if found else None


def test_the_cpu_wins_small_cases_names_every_series_it_wins(analysed):
    claim = one(analysed, "claim-cpu-small")
    won = claim.answer.split("the CPU wins ")[1].split(";")[0]
    for name in ("copy", "lstm-infer (bf16)", "matmul (fp32)", "matmul (fp32, with copies)"):
        assert name in won
    assert "but not of the others" not in claim.answer


def test_checkpointing_says_each_case_and_its_time_cost(analysed):
    claim = one(analysed, "claim-checkpointing-memory")
    assert "falls by 47% (transformer-train) and by 5.7% (cnn-train)" in claim.answer
    assert "run 1.8× slower and 1.5× slower" in claim.answer
    assert "typical" not in claim.answer


def test_threads_claims_hold_against_the_speedups_they_show(analysed):
    claim = one(analysed, "claim-cpu-threads")
    assert "do not scale" not in claim.answer and "do not speed up" not in claim.answer
    cores = one(analysed, "faq-cpu-cores")
    assert "do not speed up" not in cores.answer
    assert "2 speed up but stay below half of linear scaling (7.6× on 16 threads" in cores.answer
    for finding in of_kind(analysed, "cpu-threads"):
        speedup = finding.numbers.get("speedup")
        if speedup and speedup > 1.5:
            assert (
                "does not speed up" not in finding.answer and "does not scale" not in finding.answer
            )
    matmul = one(analysed, "recommendation-threads-h200-matmul")  # fastest at the 16 measured
    assert (
        matmul.answer.startswith("Use all 16 threads")
        and "more threads were not measured" in matmul.answer
    )
    mlp = one(analysed, "recommendation-threads-h200-mlp-step")  # 8 threads as fast as 16
    assert mlp.answer.startswith("Use about 8 threads")


def test_every_best_case_is_the_maximum_it_is_chosen_from(analysed):
    pairs = analysed.tables.speedups
    for advice in of_kind(analysed, "recommendation"):
        if "in the best case" not in advice.answer:
            continue
        rows = set(advice.evidence)
        mine = pairs[pairs.gpu_row.isin(rows) & pairs.cpu_row.isin(rows)]
        best = _ratios(advice.answer.split("in the best case")[0])[0]
        assert best == pytest.approx(float(f"{mine.speedup.max():.2g}"), rel=0.05), advice.answer


def test_the_example_config_answers_what_it_costs_with_dated_sourced_list_prices(monkeypatch):
    monkeypatch.setenv("BENCHSITE_CONFIG", str(EXAMPLE_RESULTS.parent / "benchsite.toml"))
    priced = analyse(load_plugins(), store.read_results(EXAMPLE_RESULTS))
    cost = one(priced, "faq-cost")
    found = [f for f in of_kind(priced, "energy-cost") if f.numbers.get("cost_ratio")]
    ratios = [f.numbers["cost_ratio"] for f in found]
    assert ratios and all(r > 1 for r in ratios)  # the lead says what every line says
    assert cost.answer.startswith(
        f"Per item, the accelerator costs less in {len(ratios)} of {len(ratios)} workloads"
    )
    copy = one(priced, "energy-cost-h200-copy")
    # $4.54 a GPU-hour against $0.8064 for the host's 16 Intel Xeon vCPUs (an AWS m7i)
    assert "at its list price" in copy.answer and "costs 11× less per item" in copy.answer
    assert "Spheron on-demand H200 price as of 17 March 2026" in copy.explanation
    assert "m7i.xlarge (Intel Xeon, 4 vCPUs) $0.2016 an hour" in copy.explanation


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
def test_the_first_screen_answers_with_speedup_times_and_the_system(
    example_site, chromium, analysed, width, height
):
    site, _ = example_site
    page = chromium.new_page(viewport={"width": width, "height": height})
    page.goto((site / "index.html").as_uri())
    lead = page.locator("ul.lead-answers li")
    assert lead.count() == 2
    training, inference = lead.all_inner_texts()
    assert training.startswith("Training (") and inference.startswith("Inference (")
    answers = analysed.tables.answers.set_index("workload")
    for sentence in (training, inference):
        row = answers.loc[sentence.split("(", 1)[1].split(",", 1)[0]]
        assert f"is {_ratio_words(row.speedup)} faster than the {row.cpu_label}" in sentence
        assert re.search(r"[\d.]+ (ms|s|µs) against [\d.]+ (ms|s|µs) a (step|batch)", sentence)
        assert "The GPU is faster from: " in sentence
    assert lead.nth(0).bounding_box()["y"] < height  # on the first screen, at both widths
    system = page.locator("table.systems").inner_text()
    for word in ("Intel(R) Xeon(R) Processor", "126 GiB", "NVIDIA H200", "580.159.04", "2.11.0"):
        assert word in system
    page.close()


def _ratio_words(value: float) -> str:
    from benchsite.units import format_ratio

    return format_ratio(value)


def test_chart_ticks_are_words_with_units():
    from benchsite.units import tick_label

    def tick(kind: str, value: float) -> str:  # the expression read the way Vega does
        expression = tick_label(kind)
        for threshold, text in re.findall(
            r"abs\(datum\.value\) >= ([\de.+-]+) \? format\(datum\.value / [\de.+-]+, '\.3~g'\) "
            r"\+ ' ([^']+)'",
            expression,
        ):
            if abs(value) >= float(threshold):
                return f"{value / float(threshold):.3g} {text}"
        return expression.rsplit(" : ", 1)[-1]

    assert tick("bytes", 2**30) == "1 GiB" and tick("bytes", 256 * 2**20) == "256 MiB"
    assert tick("seconds", 0.012) == "12 ms" and tick("GB/s", 4240.0) == "4.24 TB/s"
    assert tick("count", 1e8) == "100 million" and "kGB/s" not in tick_label("GB/s")
    assert "~s" not in tick_label("items/s")


def test_the_memory_legend_draws_its_dash_styles_and_labels_are_words():
    import pandas as pd

    from benchsite.site import charts

    frame = pd.DataFrame(
        {
            "axis_value": [1.0, 8.0, 1.0, 8.0],
            "value": [2.0**28, 2.0**29, 2.0**27, 2.0**28],
            "metric": ["GPU peak allocated"] * 2 + ["GPU peak reserved"] * 2,
            "series": ["h200 · cuda:0"] * 4,
            "variant": ["fp32"] * 4,
        }
    )
    spec = charts.memory_chart(frame, "batch").to_dict()
    layers = spec.get("spec", spec)["layer"]
    dashed = [layer for layer in layers if "strokeDash" in layer.get("encoding", {})]
    assert len(dashed) == 1 and dashed[0]["mark"]["type"] == "line"
    assert dashed[0]["encoding"]["strokeDash"]["legend"]["symbolType"] == "stroke"
    y = layers[0]["encoding"]["y"]["axis"]
    assert "GiB" in y["labelExpr"] and y["values"][:3] == [0.0, 2.0**27, 2.0**28]


def test_findings_lead_with_the_main_host_and_jump_to_any_section(example_site):
    site, _ = example_site
    page = (site / "findings.html").read_text(encoding="utf-8")
    kinds = re.findall(r'<h2 id="kind-([^"]+)"', page)
    jump = re.search(r'<nav class="jump".*?</nav>', page, flags=re.S).group(0)
    assert kinds and all(f'href="#kind-{kind}"' in jump for kind in kinds)
    for kind in ("batch-scaling", "memory", "efficiency"):  # they led with the 2-core CI host
        section = page.split(f'<h2 id="kind-{kind}"')[1]
        first = section.split('class="finding')[1].split("</article>")[0]
        assert "cpu-2core" not in first and "AMD EPYC" not in first, kind
