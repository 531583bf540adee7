"""One definition per number: on the example site, the speedup and interval of a pair are the
same on every page that shows it — workload chart data, speedup finding, FAQ, claims, overview
table and headline chart — because each comes from :attr:`benchsite.tables.Tables.speedups`."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from benchsite.host.manager import load_plugins
from benchsite.site.analyse import prepare_results
from benchsite.site.specs import records
from benchsite.store import parts as store
from benchsite.tables import Tables
from benchsite.toolkit.findings import kind_of_workload, ratio_ci
from benchsite.units import format_ratio
from tests.conftest import EXAMPLE_RESULTS

SPEC = re.compile(r'<script type="application/json" id="chart-[0-9a-f]+-spec">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def tables() -> Tables:
    return Tables.of(prepare_results(load_plugins(), store.read_results(EXAMPLE_RESULTS)))


def _text(path: Path) -> str:
    return html.unescape(path.read_text())


def _chart_values(path: Path) -> list[dict]:
    """Every data point of every chart embedded in the page at ``path``."""
    return [
        value
        for spec in SPEC.findall(path.read_text())
        for values in json.loads(spec).get("datasets", {}).values()
        for value in values
    ]


def _charted(path: Path, pair: pd.Series) -> bool:
    """Whether a chart of the page holds exactly the pair's speedup and interval (as charts
    hold every number: :func:`benchsite.site.specs.records`, to 4 significant digits)."""
    (wanted,) = records(pd.DataFrame([[pair.speedup, pair.low, pair.high]]))
    wanted = tuple(wanted.values())
    return any(
        (v.get("speedup"), v.get("low"), v.get("high")) == wanted for v in _chart_values(path)
    )


def _best(pairs: pd.DataFrame) -> pd.Series:
    return pairs.loc[pairs["speedup"].idxmax()]


def test_the_best_pair_reads_the_same_in_its_chart_finding_and_the_claims(example_site, tables):
    site, _ = example_site
    usable = tables.speedups[~tables.speedups["suspect"]]
    best = _best(usable)
    said = ratio_ci(best.speedup, best.low, best.high)
    assert _charted(site / f"workloads/{best.workload}.html", best)
    findings = [_text(path) for path in (site / "findings").glob("speedup*.html")]
    assert any(said in text for text in [_text(site / "findings.html"), *findings])
    assert f"{said} ({best.workload}" in _text(site / "claims.html")


@pytest.mark.parametrize("kind", ["training", "inference"])
def test_the_faq_gives_the_same_best_pair_as_its_chart(example_site, tables, kind):
    site, _ = example_site
    usable = tables.speedups[~tables.speedups["suspect"]]
    best = _best(usable[usable["workload"].map(kind_of_workload) == kind])
    assert f"at {ratio_ci(best.speedup, best.low, best.high)}" in _text(site / "faq.html")
    assert _charted(site / f"workloads/{best.workload}.html", best)


def test_every_answer_reads_the_same_on_the_overview_and_its_workload_page(example_site, tables):
    site, _ = example_site
    overview = _text(site / "index.html")
    answers = tables.answers[tables.answers["speedup"].notna()]
    assert len(answers) >= 5 and answers["plain"].all()
    for pair in answers.itertuples():
        shown = (
            f"{format_ratio(pair.speedup)} ({format_ratio(pair.low)} – {format_ratio(pair.high)})"
        )
        assert shown in overview, pair.workload
        assert _charted(site / "index.html", pd.Series(pair._asdict()))
        assert _charted(site / f"workloads/{pair.workload}.html", pd.Series(pair._asdict()))


def test_a_flagged_pair_is_charted_and_headlined_with_its_widened_interval(example_site, tables):
    site, _ = example_site
    flagged = tables.speedups[tables.speedups["uncertain"].map(bool)]
    assert len(flagged), "the example store holds noisy rows"
    assert not tables.speedups["suspect"].any()  # no number in it that cannot be right
    pair = flagged.iloc[0]
    assert _charted(site / f"workloads/{pair.workload}.html", pair)
    overview = _text(site / "index.html")
    headlined = tables.answers[tables.answers["uncertain"].map(bool)]
    assert set(headlined["workload"]) >= {"copy", "mlp-train"}  # their largest sizes, flagged
    for answer in headlined.itertuples():  # shown with its interval and why it is wide
        assert answer.gpu_row in set(flagged["gpu_row"])
        assert f"widened: flagged {', '.join(answer.uncertain)}" in overview
