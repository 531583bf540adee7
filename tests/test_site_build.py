"""`benchsite build` from real Parquet stores: what every page holds, escaping, theme overrides,
relative links, page sizes and the downloadable data."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from benchsite.plugins.pages import runs as runs_page
from conftest import EXAMPLE_RESULTS

from benchsite.errors import PluginError, StoreError
from benchsite.host.manager import load_plugins
from benchsite.measure.runner import RunReport
from benchsite.records import Page, RenderedPage
from benchsite.site import BuildOptions, build_site, publish
from benchsite.site import build as build_module
from benchsite.store import parts as store

NAV = (
    "index.html",
    "workloads/index.html",
    "hardware.html",
    "findings.html",
    "recommendations.html",
    "faq.html",
    "claims.html",
    "runs.html",
    "methodology.html",
    "data.html",
)


def records(frame: pd.DataFrame) -> list[dict]:
    """Store rows from a data frame (missing values as None, as the store expects)."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def html_files(site: Path) -> dict[str, str]:
    return {str(p.relative_to(site)): p.read_text() for p in site.rglob("*.html")}


def test_example_site_has_every_page_a_page_per_workload_and_run_and_nojekyll(example_site):
    site, report = example_site
    example = store.read_results(EXAMPLE_RESULTS)
    files = html_files(site)
    assert set(NAV) <= set(files) and (site / ".nojekyll").exists()
    for workload in example["workload"].unique():
        assert f"workloads/{workload}.html" in files
    for run_id in example["run_id"].unique():
        assert f"runs/{run_id}.html" in files
    assert report.rows == len(example) and not report.page_errors and not report.analysis_errors


def test_every_row_has_an_anchor_and_every_link_is_relative(example_site):
    site, _ = example_site
    files = html_files(site)
    everything = "\n".join(files.values())
    for row_id in store.read_results(EXAMPLE_RESULTS)["row_id"]:
        assert f'id="row-{row_id}"' in everything
    for name, html in files.items():
        links = re.findall(r'(?:href|src)="([^"]*)"', html)
        assert links, name
        assert not [u for u in links if u.startswith(("/", "http:", "https:", "//"))], name
        assert len(html.encode()) < 300_000, f"{name} is {len(html.encode())} bytes"


def test_pages_show_the_measurements_and_say_what_is_missing(example_site):
    site, _ = example_site
    example = store.read_results(EXAMPLE_RESULTS)
    overview = (site / "index.html").read_text()
    hosts = sorted(example["host"].unique())
    assert all(host in overview for host in hosts)
    if (example["device_kind"] == "cpu").all():
        assert "no speedup to show" in overview and "CUDA or MPS GPU" in overview
    else:
        assert "GPU versus CPU" in overview and "×" in overview
    hardware = (site / "hardware.html").read_text()
    assert all(model in hardware for model in example["device_model"].unique())
    assert "TFLOP/s" in hardware
    workload = (site / "workloads/matmul.html").read_text()
    assert "benchsite run -w matmul" in workload and 'type="application/json"' in workload


def test_data_page_offers_every_row_as_parquet_and_csv(example_site):
    site, _ = example_site
    example = store.read_results(EXAMPLE_RESULTS)
    parquet = pd.read_parquet(site / "data/results.parquet")
    csv = pd.read_csv(site / "data/results.csv")
    assert sorted(parquet["row_id"]) == sorted(example["row_id"]) == sorted(csv["row_id"])
    assert "samples_s" not in csv and "median_s" in csv  # the samples: in the Parquet file
    first = example[example["status"] == "ok"].iloc[0]
    stored = parquet.set_index("row_id").loc[first["row_id"]]
    assert list(stored["samples_s"]) == list(first["samples_s"])


def test_a_data_file_over_the_limit_is_gzipped_or_cut_into_parts_of_whole_rows(
    site_from_rows, monkeypatch
):
    """A store whose CSV would be over GitHub's limits a file: every file stays under it, and
    the parts together hold every row once (a fleet's million rows: a 520 MB CSV before)."""
    from benchsite.plugins.pages import data

    limit = 40_000
    monkeypatch.setattr(data, "MAX_FILE_BYTES", limit)  # the forked page workers inherit it
    rows = [
        {
            "workload": "matmul",
            "params": {"size": 2**k, "precision": precision},
            "host": host,
            "median_s": 1e-3 * k,
            "samples_s": [1e-3 * k + j * 1e-6 for j in range(40)],
        }
        for k in range(4, 24)
        for host in ("lab-a", "lab-b", "lab-c")
        for precision in ("fp32", "bf16", "fp16", "tf32", "fp64")
    ]
    site, _ = site_from_rows(rows)
    files = sorted((site / "data").iterdir())
    assert all(file.stat().st_size <= limit for file in files)
    parquets = [f for f in files if f.name.startswith("results-") and f.suffix == ".parquet"]
    csvs = [f for f in files if f.name.endswith(".csv.gz")]
    assert len(parquets) > 1 and csvs and not (site / "data/results.csv").exists()
    stored = sorted(store.read_results(site.parent / "site-results")["row_id"])
    assert sorted(pd.concat(map(pd.read_parquet, parquets))["row_id"]) == stored
    assert sorted(pd.concat(map(pd.read_csv, csvs))["row_id"]) == stored
    assert all(csv.read_bytes()[4:8] == bytes(4) for csv in csvs)  # no time: same rows, same file
    page = (site / "data.html").read_text()
    assert all(f'href="data/{file.name}"' in page for file in files)
    assert "results = pd.concat(" in page and "Gzipped: as plain text it is" in page


def test_in_parts_keeps_every_part_under_the_limit(monkeypatch):
    import pyarrow as pa
    from benchsite.plugins.pages import data
    from benchsite.plugins.pages.data import in_parts, named_parts

    table = pa.table({"n": list(range(1000)), "text": ["x" * (n % 50) for n in range(1000)]})

    def write(part: pa.Table) -> bytes:  # a writer whose output grows with its rows
        return b"." * part.nbytes

    assert [len(blob) for blob in in_parts(table, write)] == [table.nbytes]
    monkeypatch.setattr(data, "MAX_FILE_BYTES", 5_000)
    blobs = in_parts(table, write)
    assert len(blobs) > 1 and all(len(blob) <= 5_000 for blob in blobs)
    named = [name for name, _ in named_parts("r", "csv.gz", [b"a", b"b"])]
    assert named == ["r-1.csv.gz", "r-2.csv.gz"]


XSS_PLUGIN = """
from benchsite import Analysis, Finding, hookimpl

@hookimpl
def register_analyses():
    def analyze(results):
        return [Finding(id="x<y>", kind="faq", question="<b onmouseover=alert(5)>?</b>",
                        title="<script>alert(2)</script>",
                        answer="Hi <script>alert(3)</script> <img src=x onerror=alert(4)> "
                               "[click](javascript:alert(6))",
                        evidence=tuple(results["row_id"]), workload=results["workload"][0])]
    return [Analysis(name="hostile", description="d", analyze=analyze)]
"""
HOSTILE = "<script>alert(1)</script>"
ACTIVE_CONTENT = """() => [...document.querySelectorAll('*')].filter(el =>
    [...el.attributes].some(a => a.name.startsWith('on') ||
        /^\\s*javascript:/i.test(a.name === 'href' || a.name === 'src' ? a.value : '')) ||
    (el.tagName === 'SCRIPT' && !el.src && el.type !== 'application/json')
).map(el => el.outerHTML)"""


@pytest.fixture
def hostile_store(tmp_path: Path) -> Path:
    """A store whose workload, host and error texts are HTML, plus a hostile analysis plugin."""
    frame = store.read_results(EXAMPLE_RESULTS).head(3).copy()
    frame["workload"] = HOSTILE
    frame["host"] = '"><svg onload=alert(7)>'
    frame.loc[frame.index[0], ["status", "error"]] = ["error", "<img src=x onerror=alert(8)>"]
    rows = records(frame)
    store.write_rows(tmp_path / "results", "hostile", "run-1", rows)
    (tmp_path / "hostile.py").write_text(XSS_PLUGIN)
    return tmp_path


def test_html_from_results_and_plugins_renders_inert(hostile_store, chromium):
    out = hostile_store / "site"
    build_site(
        BuildOptions(
            results=hostile_store / "results", out=out, plugins=(str(hostile_store / "hostile.py"),)
        )
    )
    files = html_files(out)
    for html in files.values():
        assert "<script>alert" not in html and "<img src=x" not in html and "<svg" not in html
        assert 'href="javascript:' not in html and "<b " not in html  # as text it is inert
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in files["index.html"]
    page = chromium.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for name in files:
        page.goto((out / name).as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate(ACTIVE_CONTENT) == [], name
    (workload_page,) = [n for n in files if n.startswith("workloads/script")]
    page.goto((out / workload_page).as_uri())
    assert page.locator("h1").inner_text() == HOSTILE
    assert dialogs == []
    page.close()


def test_user_templates_override_any_file_and_extend_the_default(tmp_path, example_site):
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "base.html").write_text(
        '{% extends "default:base.html" %}{% block footer %}Made by the lab{% endblock %}'
    )
    (theme / "site.css").write_text("body { color: rebeccapurple; }")
    out = tmp_path / "site"
    build_site(BuildOptions(results=EXAMPLE_RESULTS, out=out, templates=theme, title="Lab report"))
    for html in html_files(out).values():
        assert "Made by the lab" in html and "Lab report" in html and 'href="' in html
    assert (out / "assets/site.css").read_text() == "body { color: rebeccapurple; }"


def test_a_page_cannot_write_outside_the_site(tmp_path):
    site = tmp_path / "site"
    for path in ("../escape.html", "a/../../escape.html", "/tmp/escape.html"):
        with pytest.raises(PluginError, match="outside the site"):
            build_module.write_file(site, RenderedPage(path, "x"))
    assert (
        build_module.write_file(site, RenderedPage("a/../inside.html", "x")) == "a/../inside.html"
    )
    assert (site / "inside.html").read_text() == "x"
    assert not (tmp_path / "escape.html").exists()


def test_a_page_that_yields_its_files_has_each_written_as_it_comes_and_none_left_if_it_fails(
    tmp_path,
):
    site = SimpleNamespace(charts={})  # all render_page reads of the site: its charts

    def pages(folder, fail: bool):
        for n in range(3):
            if fail and n == 2:
                raise RuntimeError("the third page broke")
            yield RenderedPage(f"many/page-{n}.html", f"page {n}")
            assert (folder / f"many/page-{n}.html").exists()  # written before the page goes on

    def page(folder, fail: bool) -> Page:
        return Page("many", lambda _: pages(folder, fail))

    good = build_module.render_page(site, page(tmp_path / "ok", False), tmp_path / "ok", False)
    assert good.error is None and good.files == [f"many/page-{n}.html" for n in range(3)]
    failed = build_module.render_page(site, page(tmp_path / "bad", True), tmp_path / "bad", False)
    assert failed.files == [] and "the third page broke" in failed.error
    assert not list((tmp_path / "bad").rglob("*.html"))  # the two it had written are gone
    with pytest.raises(PluginError, match=r"page many failed: .*the third page broke"):
        build_module.render_page(site, page(tmp_path / "strict", True), tmp_path / "strict", True)


def test_run_pages_are_made_a_batch_of_whole_runs_at_a_time():
    ordered = pd.DataFrame({"run_id": ["a"] * 3 + ["b"] * 4 + ["c"] * 1 + ["d"] * 5})
    batches = list(runs_page.whole_runs(ordered, 4))
    assert [b["run_id"].tolist() for b in batches] == [["a"] * 3 + ["b"] * 4, ["c"] * 1 + ["d"] * 5]
    assert [len(b) for b in runs_page.whole_runs(ordered, 1)] == [3, 4, 1, 5]
    assert [len(b) for b in runs_page.whole_runs(ordered, 100)] == [13]


def test_rebuild_removes_files_the_previous_build_wrote_and_no_longer_writes(tmp_path):
    frame = store.read_results(EXAMPLE_RESULTS)
    first_run = frame[frame["run_id"] == frame["run_id"].iloc[0]]
    results = tmp_path / "results"
    store.write_rows(results, "h", "r1", records(first_run.assign(run_id="r1")))
    second = first_run.assign(run_id="r2", row_id=first_run["row_id"] + "-2")
    store.write_rows(results, "h", "r2", records(second))
    out = tmp_path / "site"
    build_site(BuildOptions(results=results, out=out))
    assert (out / "runs/r1.html").exists()
    for part in (results / "host=h" / "run=r1").iterdir():
        part.unlink()
    build_site(BuildOptions(results=results, out=out))
    assert not (out / "runs/r1.html").exists() and (out / "runs/r2.html").exists()


@pytest.mark.slow
def test_a_rebuild_hands_out_first_the_pages_that_took_longest_last_time(tmp_path, monkeypatch):
    results, out = tmp_path / "results", tmp_path / "site"
    shutil.copytree(EXAMPLE_RESULTS / "host=cpu-2core", results / "host=cpu-2core")
    build_site(BuildOptions(results=results, out=out))
    names = [page.name for page in build_module.ordered_pages(load_plugins(()))]
    recorded = json.loads((out / publish.PAGE_SECONDS).read_text())
    assert list(recorded) == names and all(value >= 0 for value in recorded.values())
    assert publish.page_seconds(out) == recorded
    # as if the data page took longest last time, then runs; the rest had no record then
    (out / publish.PAGE_SECONDS).write_text(json.dumps({"overview": 0.1, "runs": 2, "data": 9}))
    handed, real = [], build_module.in_processes

    def spy(function, order, **options):
        handed.extend(names[index] for index in order)
        return real(function, order, **options)

    monkeypatch.setattr(build_module, "in_processes", spy)
    monkeypatch.setattr(build_module, "usable_cores", lambda: 2)
    report = build_site(BuildOptions(results=results, out=out))
    unknown = [name for name in names if name not in ("overview", "runs", "data")]
    assert handed == [*unknown, "data", "runs", "overview"] and not report.page_errors
    assert list(json.loads((out / publish.PAGE_SECONDS).read_text())) == names  # page order
    (out / publish.PAGE_SECONDS).write_text("{not json")
    assert publish.page_seconds(out) == {} and publish.page_seconds(tmp_path / "none") == {}


def test_no_store_at_the_default_place_runs_the_quick_suite_first_and_says_so(
    tmp_path, monkeypatch
):
    # the decision is the CLI's (the site never imports the runner): `benchsite build` on a
    # fresh clone measures first, then builds
    from benchsite.cli import app

    calls, notices, stages = [], [], []

    class Reporter:
        def notice(self, text: str) -> None:
            notices.append(text)

        def stage(self, name: str, index: int, count: int) -> None:
            stages.append((name, index, count))

    def run_benchmarks(options, reporter):
        calls.append(options)
        rows = records(store.read_results(EXAMPLE_RESULTS))
        store.write_rows(options.results, "here", "r", rows)
        return RunReport("r", "here", options.results)

    monkeypatch.setattr("benchsite.measure.runner.run_benchmarks", run_benchmarks)
    monkeypatch.chdir(tmp_path)  # ./results is the default store, and it does not exist
    options = BuildOptions(out=tmp_path / "site")
    assert app.measure_first_if_new(options, Reporter())
    assert calls[0].profile == "quick" and "running the quick suite" in notices[0]
    assert not app.measure_first_if_new(options, Reporter())  # now there is a store
    build_site(options, Reporter())
    names = ("plugins", "read", "analyse", "pages", "files", "charts")
    assert stages == [(name, index, len(names)) for index, name in enumerate(names)]
    assert (tmp_path / "site" / "index.html").exists()


def test_a_missing_store_elsewhere_is_one_line_and_measures_nothing(tmp_path):
    from benchsite.cli import app

    options = BuildOptions(results=tmp_path / "none", out=tmp_path / "site")
    assert not app.measure_first_if_new(options, None)
    with pytest.raises(StoreError, match="does not exist"):
        build_site(options)


def test_no_finding_recommendation_faq_answer_or_claim_is_rendered_without_evidence(example_site):
    """Every finding card that states a measured answer links to the rows it rests on; only a
    card marked ``none`` evidence (the store cannot answer) may stand without a link."""
    site, _ = example_site
    pages = [
        page
        for pattern in (
            "faq*.html",
            "faq/*.html",
            "recommendations*.html",
            "recommendations/*.html",
            "claims*.html",
            "claims/*.html",
            "findings*.html",
            "findings/*.html",
        )
        for page in site.glob(pattern)
    ]
    cards = 0
    for page in pages:
        html = page.read_text()
        for card in html.split('<article class="finding"')[1:]:
            card = card.split("</article>")[0]
            if "strength-none" in card:
                continue
            cards += 1
            evidence = card.split('<details class="evidence">')
            assert len(evidence) == 2, f"{page.name}: a card without evidence: {card[:300]}"
            assert "<a href=" in evidence[1], f"{page.name}: evidence without a link"
    assert cards > 20  # the example store answers many questions with a GPU host in it


def test_a_workload_page_shows_every_declared_rate_and_the_collectors_metrics(example_site):
    """matmul declares FLOPs, bytes and items: each row shows all three rates (items/s never
    appeared before), and its collector metrics (stored, shown on no page before)."""
    site, _ = example_site
    html = (site / "workloads" / "matmul.html").read_text()
    row = next(part for part in html.split("<tr id=")[1:] if "status-ok" in part)
    assert "FLOP/s" in row and "B/s" in row and "items/s" in row  # SI prefixes: GFLOP/s, MB/s
    assert "<dt>memory: CPU peak RSS (bytes)</dt>" in row and "collector metrics" in html


def test_a_theme_overrides_the_case_table_on_its_own(tmp_path):
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "_case_table.html").write_text(
        '{% for row in table.rows %}<p class="mine" id="row-{{ row.row_id }}">'
        "{{ row.median }} {{ row.rates | join(', ') }}</p>{% endfor %}"
    )
    results = tmp_path / "results"
    shutil.copytree(EXAMPLE_RESULTS / "host=cpu-2core", results / "host=cpu-2core")
    out = tmp_path / "site"
    build_site(BuildOptions(results=results, out=out, templates=theme))
    html = (out / "workloads" / "matmul.html").read_text()
    assert '<p class="mine" id="row-' in html and '<table class="cases">' not in html
    assert "items/s" in html


def test_case_table_cells_are_escaped_unless_no_text_needs_it():
    from benchsite.site import case_table

    rows = pd.DataFrame(
        {
            "row_id": ["r1", "r2"],
            "workload": ["<b>mm</b>", "mm"],
            "host": ["lab & co", "lab"],
            "device": ["cpu", "cpu"],
            "params_text": ['size=1, name="x"', "size=2"],
            "status": ["ok", "ok"],
            "median_s": [1e-3, 2e-3],
            "ci_low_s": [1e-3, 2e-3],
            "ci_high_s": [1e-3, 2e-3],
            "iqr_s": [0.0, 0.0],
            "n_samples": [5, 5],
            "calls_per_sample": [1, 1],
            "flags": [("noisy",), ()],
            "tflops": [None, None],
            "gbps": [None, None],
            "items_per_s": [None, None],
            "error": [None, None],
            "run_id": ["a", "a"],
            "timestamp": pd.to_datetime(["2026-01-01", "2026-01-02"], utc=True),
        }
    )
    first, second = case_table(rows, {"a": "runs/a.html"}).rows
    assert (first.workload, first.host, first.params) == (
        "&lt;b&gt;mm&lt;/b&gt;",
        "lab &amp; co",
        "size=1, name=&quot;x&quot;",
    )
    assert (second.row_id, second.workload, second.params) == ("r2", "mm", "size=2")
    assert first.flags == ("noisy",) and second.flags == ()
