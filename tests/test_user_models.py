"""``benchsite run --model MODULE:FACTORY`` and ``[[models]]``: a user's own ``nn.Module`` from a
module in a temporary folder (no installed package) is measured on the CPU through the real
command, gets its workload page and its row in the overview's one-screen answer, and each
mistake a user can make is one line naming the model while the other models are measured and
nothing stored is lost."""

from __future__ import annotations

import io
import json
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from analysis_frames import row

from benchsite.cli.app import main
from benchsite.store import parts as store
from benchsite.toolkit import user_models as models
from tests.test_cli import cli

USER_MODULE = """
import torch

def tiny_net():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))

def example(batch):
    return torch.randn(batch, 16)

def frozen():
    net = tiny_net()
    net.requires_grad_(False)
    return net

def not_a_module():
    return [1, 2]

def broken():
    raise ValueError("no weights here")
"""
# one round (one worker process): the errors and the rows are the point here, not the rounds
ARGS = ("run", "-d", "cpu", "--budget", "0.05", "--rounds", "1", "--host", "host-a")
GOOD = "usernets:tiny_net,inputs=example,item=sample"  # its throughput: samples/s


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The current folder holds ``usernets.py``: the worker imports it from there."""
    folder = tmp_path_factory.mktemp("user-models")
    (folder / "usernets.py").write_text(USER_MODULE)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.delenv("BENCHSITE_CONFIG", raising=False)
        yield folder


BAD = {
    "not-a-module": "usernets:not_a_module,shape=16",
    "broken": "usernets:broken,shape=16",
    "wrong": "usernets:tiny_net,name=wrong,shape=8",
    "missing": "nowhere:tiny_net,name=missing,shape=16",
    "absent": "usernets:absent,shape=16",
}


@pytest.fixture(scope="module")
def measured(user_folder: Path) -> tuple[int, str, Path]:
    """One real quick run on the CPU of the good model beside every bad one (inference), and
    of a model with nothing to train (training): (exit status, what it printed, the store)."""
    results = user_folder / "results"
    picks = [arg for name in [*BAD, "tiny-net"] for arg in ("-w", f"{name}-infer")]
    specs = [arg for spec in [*BAD.values(), GOOD] for arg in ("--model", spec)]
    frozen = ("-w", "frozen-train", "--model", "usernets:frozen,shape=16")
    with pytest.MonkeyPatch.context() as patch:
        capture = io.StringIO()
        patch.setattr(sys, "stdout", capture)
        with pytest.raises(SystemExit) as exited:
            main([*ARGS, *picks, *specs, *frozen, "--results", str(results)])
    return exited.value.code or 0, capture.getvalue(), results


def error_lines(out: str, workload: str) -> list[str]:
    return [line for line in out.splitlines() if re.match(rf"\[\d+/\d+\] error {workload} ", line)]


@pytest.mark.slow
def test_bad_models_are_one_line_each_and_the_good_one_is_measured(measured):
    status, out, results = measured
    assert status == 0  # the good model's cases succeeded
    expected = {
        "not-a-module": "its factory returned list, not a torch.nn.Module: return the model",
        "broken": "its factory raised ValueError: no weights here (usernets.py:",
        "wrong": "its input does not fit the model (RuntimeError: mat1 and mat2 shapes",
        "missing": "cannot import nowhere (ModuleNotFoundError: No module named 'nowhere'",
        "absent": "usernets has no function absent: fix the name",
    }
    for name, text in expected.items():
        lines = error_lines(out, f"{name}-infer")
        assert lines, out
        for line in lines:
            assert f"ModelError: model {name} (--model {BAD[name]}): {text}" in line
    rows = store.read_results(results)
    good = rows[rows["workload"] == "tiny-net-infer"]
    assert set(good["status"]) == {"ok", "skipped"}  # tf32 and fp16 skip on a CPU, with why
    assert good[good["status"] == "ok"]["flops"].gt(0).all()  # counted by FlopCounterMode
    bad = rows[rows["workload"].isin([f"{name}-infer" for name in BAD])]
    assert set(bad["status"]) == {"error"} and bad["workload"].nunique() == len(BAD)


def test_a_model_without_trainable_parameters_skips_training(measured):
    _, out, _ = measured
    assert (
        "skipped frozen-train batch=1 precision=fp32 on cpu: model frozen has no trainable" in out
    )


def test_only_broken_models_exit_1_and_keep_what_was_stored(measured, capsys):
    _, _, results = measured
    before = store.read_results(results)
    status, _, err = cli(
        capsys, *ARGS, "-w", "broken-*", "-m", "usernets:broken,shape=4", "--results", str(results)
    )
    assert status == 1
    assert err.startswith("error: no case succeeded (")
    after = store.read_results(results)
    assert set(before["row_id"]) <= set(after["row_id"])  # nothing stored is lost


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("usernets.tiny_net", "give the factory as MODULE:FUNCTION, not 'usernets.tiny_net'"),
        ("usernets:tiny_net,shape=16,colour=red", "unknown key colour (known: name, inputs,"),
        ("usernets:tiny_net,batches=1/two,shape=16", "batches must be positive whole numbers"),
        ("usernets:tiny_net", "say what the model takes: inputs=FUNCTION or shape=3x224"),
        ("usernets:tiny_net,shape=16,dtype=int64", "integer dtype int64 needs high="),
        ("usernets:tiny_net,shape=16,dtype=floaty", "dtype 'floaty' is no torch dtype"),
        ("usernets:tiny_net,shape=16,item=Image", "item 'Image': name one item as a singular"),
    ],
)
def test_a_malformed_model_is_one_line_and_exit_2(user_folder, capsys, spec, problem):
    results = user_folder / "malformed"
    status, _, err = cli(capsys, *ARGS, "--model", spec, "--results", str(results))
    assert status == 2
    assert err.startswith(f"error: --model {spec}: {problem}")
    assert err.count("\n") == 1 and not list(results.rglob("*.parquet"))  # nothing measured


def test_models_from_benchsite_toml_are_read_and_checked(user_folder, monkeypatch):
    monkeypatch.setenv("BENCHSITE_CONFIG", str(user_folder / "benchsite.toml"))
    (user_folder / "benchsite.toml").write_text(
        textwrap.dedent(
            """
            [[models]]
            factory = "usernets:tiny_net"
            name = "tiny"
            shape = [16]
            batches = [2, 4]

            [[models]]
            factory = "usernets:tiny_net"
            inputs = "example"
            """
        )
    )
    found = models.user_models()
    assert [m.name for m in found] == ["tiny", "tiny-net"]
    assert found[0].shape == (16,) and found[0].batches == (2, 4)
    (user_folder / "benchsite.toml").write_text('[[models]]\nfactory = "usernets:tiny_net"\n')
    with pytest.raises(models.ConfigError, match=r"\[\[models\]\] #1: say what the model"):
        models.user_models()
    (user_folder / "benchsite.toml").unlink()


def test_the_site_gives_the_model_its_page_and_its_overview_row(user_folder, measured, capsys):
    _, _, results = measured
    real = store.read_results(results)
    ok = real[(real["status"] == "ok") & (real["workload"] == "tiny-net-infer")]
    # a second host with a GPU, constructed because this machine has none (and may be busy):
    # the same cases, the GPU 4x faster
    params = [json.loads(text) for text in ok["params"]]
    pair = [
        row("tiny-net-infer", device, seconds, case, host="host-b", axis="batch")
        | {"item_unit": "sample", "items_per_s": case["batch"] / seconds}
        for case in params
        for device, seconds in (("cpu", 4e-3 * case["batch"]), ("cuda:0", 1e-3 * case["batch"]))
    ]
    store.write_rows(results, "host-b", pair[0]["run_id"], pair)
    site = user_folder / "site"
    status, _, err = cli(capsys, "build", "--results", str(results), "--out", str(site))
    assert status == 0, err
    page = (site / "workloads" / "tiny-net-infer.html").read_text()
    assert "tiny-net-infer" in page and "Throughput (samples/s) against batch" in page
    overview = (site / "index.html").read_text()
    answer = overview.split('<table class="answers">', 1)[1].split("</table>", 1)[0]
    assert 'href="workloads/tiny-net-infer.html"' in answer
    assert re.search(r"[\d,.]+ samples/s against [\d,.]+ samples/s", answer)  # its own unit
