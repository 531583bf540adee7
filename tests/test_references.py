"""Reference results as a CPU-only user meets them: a store measured on a 2-core CPU alone
(the real quick run of ``examples/h200/results/host=cpu-2core``) plus the shipped H200 results
(``benchsite.toml``'s ``[build] reference = ["h200"]``) builds a site whose overview and FAQ
compare that CPU with the H200 on the same cases, every reference number labelled with its
host, date and benchsite version; the ``data/results.parquet`` of a published site served over
``http://127.0.0.1`` works the same; each bad reference is one line, exit 2, before any work,
and no reference ever changes the user's store (every file hashed before and after)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import re
import shutil
import threading
from html import unescape
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsite.store import parts
from benchsite.store.reference import read_references
from tests.conftest import EXAMPLE_RESULTS
from tests.test_cli import cli

CPU_HOST = "cpu-2core"


def cpu_only_store(folder: Path) -> Path:
    shutil.copytree(EXAMPLE_RESULTS / f"host={CPU_HOST}", folder / f"host={CPU_HOST}")
    return folder


def hashes(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def section_of(html: str, anchor: str) -> str:
    start = html.index(anchor)
    return html[start : html.find("</section>", start)]


def text_of(html: str, anchor: str) -> str:
    return words(section_of(html, anchor))


def words(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())


def rows_of(html: str) -> list[str]:
    """Each table row of ``html`` as its cells' words joined by `` | ``."""
    return [
        " | ".join(words(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S))
        for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)
    ]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served(tmp_path):
    """A folder served on http://127.0.0.1:PORT/ by a thread: (folder, base URL)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def cpu_site(tmp_path_factory):
    """The CPU-only store built with the h200 reference named in benchsite.toml:
    (store, site, hashes of the store before the build)."""
    tmp = tmp_path_factory.mktemp("cpu")
    store = cpu_only_store(tmp / "store")
    before = hashes(store)
    config = tmp / "benchsite.toml"
    config.write_text('[build]\nreference = ["h200"]\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCHSITE_CONFIG", str(config))
        code = _build(store, tmp / "site")
    assert code == 0
    return store, tmp / "site", before


def _build(store: Path, site: Path, *extra: str) -> int:
    """``benchsite build`` through the real entry point, in this process: its exit status."""
    from benchsite.cli.app import main

    try:
        main(["build", "--results", str(store), "--out", str(site), *extra])
    except SystemExit as exited:
        return exited.code or 0
    return 0


@pytest.mark.slow  # its fixture builds a site
def test_the_overview_answers_cpu_against_the_h200_on_the_same_cases(cpu_site):
    store, site, before = cpu_site
    html = section_of((site / "index.html").read_text(), 'id="reference"')
    answer = words(html)
    assert "Your CPU against a reference GPU" in answer
    assert "different machines" in answer
    # the store's matmul fp32 1,024 ran 31.1 ms on the 2-core EPYC, the H200 56.9 µs
    matmul = next(line for line in rows_of(html) if line.startswith("matmul"))
    assert re.fullmatch(
        r"matmul \(fp32\) \| size 1,024 \| your AMD EPYC, 2 cores: 31\.1 ms \| "
        r"NVIDIA H200 \(reference h200, 2026-12\): 56\.9 µs \| 5\d\d× \(95% interval .*\) \| "
        r"reference h200: host h200, measured 2026-12-02, benchsite 0\.2\.0\.dev0; 9 shared cases",
        matmul,
    ), matmul
    assert "reference h200: host h200, measured 2026-12-02, benchsite 0.2.0.dev0" in answer
    # a workload the H200 never ran with these parameters is named as lacking
    assert "Cases the reference lacks" in answer and "cnn-infer: all 3 cases" in answer
    assert hashes(store) == before  # the reference wrote nothing into the store


def test_the_faq_answers_it_and_the_data_page_holds_only_the_users_rows(cpu_site):
    store, site, _ = cpu_site
    faq = text_of((site / "faq.html").read_text(), 'id="finding-faq-reference-gpu"')
    assert "What would a GPU buy me" in faq and "reference h200" in faq
    assert "your AMD EPYC, 2 cores: 31.1 ms; NVIDIA H200 (reference h200, 2026-12)" in faq
    published = pq.read_table(site / "data" / "results.parquet")
    assert set(published.column("host").to_pylist()) == {CPU_HOST}
    assert "reference" not in published.column_names
    assert published.num_rows == parts.read_table(store).num_rows


def test_the_hardware_page_ranks_the_cpu_among_the_references_within_the_noise(cpu_site):
    _, site, _ = cpu_site
    standing = text_of((site / "hardware.html").read_text(), 'id="standing"')
    assert "Where your machine stands" in standing
    # the reference holds this very run: the two EPYC rows share a rank inside their intervals
    assert "matmul" in standing and "tied with AMD EPYC (reference h200)" in standing
    assert re.search(r"2 of 3 \(tied with AMD EPYC \(reference h200\)\)", standing)


@pytest.mark.slow  # builds a second site
def test_a_published_sites_results_parquet_over_http_works_the_same(
    cpu_site, example_site, served, tmp_path
):
    _, site, _ = cpu_site
    root, base = served
    (root / "data").mkdir()
    shutil.copy(example_site[0] / "data" / "results.parquet", root / "data" / "results.parquet")
    url = f"{base}/data/results.parquet"
    store = cpu_only_store(tmp_path / "store")
    before = hashes(store)
    assert _build(store, tmp_path / "site", "--reference", url) == 0
    assert hashes(store) == before
    label = base.split("://", 1)[1]
    over_http = text_of((tmp_path / "site" / "index.html").read_text(), 'id="reference"')
    shipped = text_of((site / "index.html").read_text(), 'id="reference"')
    assert over_http.replace(f"reference {label}", "reference h200") == shipped


def _newer_schema(tmp_path: Path) -> str:
    store = tmp_path / "newer"
    table = pq.read_table(next((EXAMPLE_RESULTS / f"host={CPU_HOST}").rglob("*.parquet")))
    table = table.replace_schema_metadata({"benchsite.schema_version": "99"})
    folder = store / "host=a" / "run=b"
    folder.mkdir(parents=True)
    pq.write_table(table, folder / "part-000000000000.parquet")
    return str(store)


def _bad_references(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """name → (the source, what its one line must say)."""
    not_parquet = tmp_path / "notes.parquet"
    not_parquet.write_text("these are my notes, not a store\n")
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"name": ["a"], "value": [1.0]}), foreign)
    empty = tmp_path / "empty"
    (empty / "host=a" / "run=b").mkdir(parents=True)
    return {
        "unreachable": ("http://127.0.0.1:9/data/results.parquet", "cannot be reached"),
        "not parquet": (str(not_parquet), "not a Parquet file"),
        "not a store": (str(foreign), "not a benchsite store"),
        "newer schema": (_newer_schema(tmp_path), "newer benchsite"),
        "empty": (str(empty), "holds no results"),
    }


@pytest.mark.parametrize(
    "name", ["unreachable", "not parquet", "not a store", "newer schema", "empty"]
)
def test_a_bad_reference_is_one_line_exit_2_before_any_work(name, tmp_path, capsys, monkeypatch):
    source, says = _bad_references(tmp_path)[name]
    store = cpu_only_store(tmp_path / "store")
    before = hashes(store)
    code, out, err = cli(
        capsys,
        "build",
        "--results",
        str(store),
        "--out",
        str(tmp_path / "site"),
        "--reference",
        source,
    )
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: --reference ") and says in err, err
    assert "building the site" not in out and not (tmp_path / "site").exists()
    assert hashes(store) == before
    # nor is the quick suite run first where ./results does not exist yet
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "build", "--reference", source)
    assert code == 2 and says in err and not (tmp_path / "results").exists()


def test_the_shipped_reference_is_the_example_store():
    shipped = read_references(("h200",))
    example = parts.read_results(EXAMPLE_RESULTS)
    assert sorted(shipped["row_id"]) == sorted(example["row_id"])
    assert set(shipped["reference"]) == {"h200"}


def test_ranks_are_not_claimed_inside_the_noise(tmp_path):
    """Three CPU models on one case: A (10 ms ± 2%) and B (10.1 ms ± 2%) overlap and share
    rank 1; C (20 ms, a reference's) is clearly slower: rank 3, beaten by both."""
    from benchsite.host.manager import load_plugins
    from benchsite.site.analyse import prepare_results
    from benchsite.tables import Tables
    from tests.analysis_frames import CPU_INFO, frame, row

    case = {"size": 1024, "precision": "fp32"}
    own = frame(
        [
            row("matmul", "cpu", 0.0100, case, host="a", info={**CPU_INFO, "model": "CPU A"}),
            row("matmul", "cpu", 0.0101, case, host="b", info={**CPU_INFO, "model": "CPU B"}),
        ],
        tmp_path / "own",
    )
    frame(
        [row("matmul", "cpu", 0.020, case, host="c", info={**CPU_INFO, "model": "CPU C"})],
        tmp_path / "ref",
    )
    plugins = load_plugins(())
    references = prepare_results(plugins, read_references((str(tmp_path / "ref"),)))
    board = Tables.of(prepare_results(plugins, own), references=references).standing
    ranks = {line.model: (line.rank, line.percentile) for line in board.itertuples()}
    assert ranks == {
        "CPU A": (1, 50.0),
        "CPU B": (1, 50.0),
        "CPU C (reference ref)": (3, 0.0),
    }
    assert board.set_index("model")["own"].to_dict() == {
        "CPU A": True,
        "CPU B": True,
        "CPU C (reference ref)": False,
    }


def test_the_reference_pages_read_as_prose(cpu_site):
    from tests.test_site_text import problems

    _, site, _ = cpu_site
    for page in ("index.html", "faq.html", "hardware.html"):
        assert not problems(site / page), (page, problems(site / page))
