"""No page of a built site is over 300 KB, also from a store of many hosts: run tables are
split over pages, a workload page lists its cases only when they are few, and a chart of many
hosts draws one line per device model (``benchmarks/fleet.py`` shows it at a million rows)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from benchsite.site import WORKLOAD_TABLE_ROWS, BuildOptions, build_site
from tests.conftest import TESTS

LIMIT = 300 * 1024


def synthetic():
    """``benchmarks/_synthetic.py``: the benchmarks' store generator."""
    spec = importlib.util.spec_from_file_location(
        "_synthetic", TESTS.parent / "benchmarks" / "_synthetic.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("_synthetic", module)  # its dataclasses look their module up
    spec.loader.exec_module(sys.modules["_synthetic"])
    return sys.modules["_synthetic"]


def test_every_page_of_a_many_host_store_stays_under_300_kb(tmp_path: Path) -> None:
    generator = synthetic()
    hosts = WORKLOAD_TABLE_ROWS // 50  # 50 cases a workload per host: the longest case table
    shape = generator.Shape(hosts=hosts, runs=2, workloads=1, sizes=(64, 128, 256, 512, 1024))
    generator.write_store(tmp_path / "results", shape)
    out = tmp_path / "site"
    build_site(BuildOptions(results=tmp_path / "results", out=out))
    sizes = {str(page.relative_to(out)): page.stat().st_size for page in out.rglob("*.html")}
    largest = max(sizes.items(), key=lambda item: item[1])
    print(largest)
    assert largest[1] < LIMIT, largest
    workload = (out / "workloads" / "workload-00.html").read_text(encoding="utf-8")
    assert len(re.findall(r'<tr id="row-', workload)) == WORKLOAD_TABLE_ROWS  # the table is full


def test_a_fleet_folds_its_hosts_by_hardware_and_a_few_hosts_stay_apart(tmp_path: Path) -> None:
    """Above FLEET_HOSTS hosts, one current row per (hardware, device, case): the median
    host's real row, with the host count and the hosts' fastest and slowest median; at
    FLEET_HOSTS hosts or fewer, every host's row as it is (a real Parquet store each)."""
    from benchsite.store import parts as store
    from benchsite.tables import Tables
    from benchsite.tables.fold import FLEET_HOSTS

    generator = synthetic()
    for hosts in (FLEET_HOSTS, FLEET_HOSTS + 4):
        shape = generator.Shape(
            hosts=hosts, runs=1, workloads=1, variants=1, sizes=(64, 128), models=2
        )
        generator.write_store(tmp_path / str(hosts), shape)
        results = store.read_results(tmp_path / str(hosts))
        tables = Tables.of(results)
        current = tables.current
        if hosts <= FLEET_HOSTS:
            assert len(current) == len(results) and current["host"].nunique() == hosts
            continue
        assert sorted(current["host"].unique()) == [
            f"Synthetic CUDA + Synthetic CPU ({hosts // 2} hosts)",
            f"Synthetic H200 + Synthetic Xeon ({hosts // 2} hosts)",
        ]
        assert len(current) == 2 * 4 and (current["hosts"] == hosts // 2).all()
        for row in current.itertuples():  # the median host's own row, inside the hosts' range
            same = results[results["row_id"] == row.row_id].iloc[0]
            assert same["median_s"] == row.median_s and same["host"] == row.median_host
            assert row.hosts_low_s <= row.median_s <= row.hosts_high_s
        assert len(tables.speedups) == 2 * 2  # per hardware and size, not per host


def test_a_fleets_overview_names_its_hardware_not_every_host(tmp_path: Path) -> None:
    """The overview's facts of 16 hosts: the hardware kinds and device models, counted (200
    hosts named one by one filled a screen)."""
    from benchsite.tables.fold import FLEET_HOSTS

    generator = synthetic()
    hosts = FLEET_HOSTS + 4
    shape = generator.Shape(hosts=hosts, runs=1, workloads=1, variants=1, sizes=(64, 128), models=2)
    rows = generator.write_store(tmp_path / "results", shape)
    build_site(BuildOptions(results=tmp_path / "results", out=tmp_path / "site"))
    overview = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    facts = re.sub(r"\s+", " ", overview[overview.index('<dl class="facts">') :].split("</dl>")[0])
    assert f"{hosts} hosts of 2 kinds" in facts and "host-1," not in facts
    assert f"Synthetic H200 + Synthetic Xeon ({hosts // 2} hosts)" in facts
    assert f"Synthetic H200 ({hosts // 2} devices)" in facts
    assert f"{hosts} · {rows}</dd>" in facts  # runs · rows
    hardware = (tmp_path / "site" / "hardware.html").read_text(encoding="utf-8")
    assert "host-2, host-4, host-6, host-8, host-10," in hardware  # as people count
