"""The FAQ, recommendations and claims: every stated number carries its evidence, a store that
cannot answer says so, and the whole analysis pipeline runs on a real CPU store."""

from __future__ import annotations

import re

import pytest
from analysis_frames import frame, row

from benchsite.host.manager import load_plugins
from benchsite.measure.runner import RunOptions, run_benchmarks
from benchsite.site.analyse import analyse
from benchsite.store import parts as store
from benchsite.toolkit.findings import without

ANSWER_KINDS = ("recommendation", "faq", "claim")
NUMBER = re.compile(r"\d")


def _rich_rows() -> list[dict]:
    rows = []
    for size, cpu in ((64, 1e-5), (256, 6e-4), (1024, 4e-2)):
        for kind, median in (("cpu", cpu), ("cuda:0", 2e-4)):
            rows.append(row("matmul", kind, median, {"size": size, "precision": "fp32"}))
        rows.append(row("matmul", "cuda:0", 1e-4, {"size": size, "precision": "bf16"}))
    for batch in (1, 16, 256):
        rows.append(
            row(
                "mlp-train",
                "cpu",
                1e-3 * batch,
                {"batch": batch},
                metrics={"memory.cpu_peak_rss_bytes": 1e8 + 1e6 * batch},
            )
        )
        rows.append(
            row(
                "mlp-train",
                "cuda:0",
                1e-3,
                {"batch": batch},
                metrics={
                    "memory.gpu_peak_allocated_bytes": 1e8 + 1e6 * batch,
                    "nvml.energy_j": 10.0,
                    "measured_calls": 50,
                },
            )
        )
        rows.append(row("mlp-infer", "cpu", 1e-4 * batch, {"batch": batch}))
        rows.append(row("mlp-infer", "cuda:0", 2e-4, {"batch": batch}))
    rows += [row("cpu-threads", "cpu", 1 / n, {"threads": n, "op": "matmul"}) for n in (1, 2, 4)]
    rows.append(row("transfer", "cuda:0", 2e-3, {"size": 2**26, "pinned": False}))
    rows.append(row("transfer", "cuda:0", 1e-3, {"size": 2**26, "pinned": True}))
    rows.append(row("mlp-train", "cuda:0", 1.0, {"batch": 2**20}, status="oom"))
    return rows


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    results = frame(_rich_rows(), tmp_path_factory.mktemp("rich"))
    return analyse(load_plugins(), results)


def test_every_stated_number_carries_evidence(rich):
    assert rich.errors == {}
    answers = [f for f in rich.findings if f.kind in ANSWER_KINDS]
    assert {f.kind for f in answers} == set(ANSWER_KINDS)
    known = set(rich.results["row_id"])
    for found in answers:
        if NUMBER.search(found.answer) or found.numbers or found.strength != "none":
            assert found.evidence, f"{found.id} states a number without evidence"
            assert set(found.evidence) <= known, found.id
        else:
            assert found.evidence == () and found.strength == "none", found.id
    assert len({f.id for f in rich.findings}) == len(rich.findings)  # ids are unique anchors


def test_every_finding_of_every_kind_is_backed_or_marked_not_measured(rich):
    for found in rich.findings:
        assert found.evidence or found.strength == "none", found.id
        assert found.answer and found.title


def test_faq_and_claims_answer_from_the_rows(rich):
    faq = {f.id: f for f in rich.findings if f.kind == "faq"}
    assert "median" in faq["faq-training-speed"].answer
    assert faq["faq-inference-speed"].evidence  # mlp-infer measured on both
    assert faq["faq-multi-gpu"].strength == "none"
    claims = {f.id: f for f in rich.findings if f.kind == "claim"}
    assert claims["claim-not-all-ops"].verdict == "supported"  # mlp-infer is slower on the GPU
    assert claims["claim-pinned"].verdict == "supported"
    assert claims["claim-cpu-small"].verdict in ("supported", "depends")
    assert claims["claim-data-parallel"].verdict == "untested"
    assert claims["claim-data-parallel"].evidence == ()
    recommendations = [f for f in rich.findings if f.kind == "recommendation"]
    assert any("from size" in f.answer for f in recommendations)


def test_empty_store_runs_every_analysis_without_error(tmp_path):
    analysed = analyse(load_plugins(), store.read_results(tmp_path))
    assert analysed.errors == {}
    assert all(f.strength == "none" and not f.evidence for f in analysed.findings)


def test_real_cpu_run_gives_plain_cpu_only_answers(tmp_path):
    options = RunOptions(
        results=tmp_path,
        workloads=("matmul", "mlp-train"),
        devices=("cpu",),
        budget_s=0.2,
        rounds=1,
    )
    run_benchmarks(options)
    results = store.read_results(tmp_path)
    assert (results["status"] == "ok").any()
    analysed = analyse(load_plugins(), results)
    assert analysed.errors == {}
    by_id = {f.id: f for f in analysed.findings}
    assert by_id["speedup-no-gpu"].strength == "none"
    assert "Only the CPU was measured" in by_id["speedup-no-gpu"].answer
    assert by_id["faq-training-speed"].strength == "none"
    assert by_id["faq-cpu-cores"].evidence  # answered from the CPU rows' device info
    assert by_id["claim-up-to-50x"].verdict == "untested"
    assert any(f.kind == "batch-scaling" and f.evidence for f in analysed.findings)
    assert "flags" in analysed.results


def test_committed_example_results_analyse_cleanly():
    from conftest import EXAMPLE_RESULTS

    analysed = analyse(load_plugins(), store.read_results(EXAMPLE_RESULTS))
    assert analysed.errors == {}
    for found in analysed.findings:
        assert found.evidence or found.strength == "none", found.id
    assert {f.kind for f in analysed.findings} >= {"faq", "claim", "recommendation", "validity"}


def test_a_case_key_without_some_parameters_keeps_the_type_of_each_value():
    """without() is cached by value; 1, 1.0 and True are equal keys in Python, not in JSON."""
    assert without({"size": 1, "transfer": True}, "transfer") == '{"size": 1}'
    assert without({"size": 1.0, "transfer": True}, "transfer") == '{"size": 1.0}'
    assert without({"size": True}) == '{"size": true}'
    assert without({"shape": [2, 3], "b": "x"}, "b") == '{"shape": [2, 3]}'  # not hashable
