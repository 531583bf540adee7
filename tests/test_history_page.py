"""The History page in real headless Chromium: a store of six runs of two matmul cases, one
with a planted step (30% slower in the sixth run), builds a page per workload whose charts
draw, with the step marked as a regression in the run it happened and nowhere else, and the
steady case unmarked. Linked from the workload page and from Compare."""

from __future__ import annotations

import pytest

from benchsite.site import BuildOptions, build_site
from benchsite.toolkit.charts import VERDICT_COLORS
from tests.analysis_frames import frame, row
from tests.test_site_browser import CHARTS_DRAWN, load, watched

# the newest run steps up: a step inside the history is "within reruns" once later runs sit at
# its new level (benchsite.tables.reruns.within_spread counts every other run of the case)
STEP_RUN = 5
REGRESSION_RED = VERDICT_COLORS["regression"]


@pytest.fixture(scope="module")
def history_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("history")
    rows = []
    for run in range(6):
        step = 1.3 if run >= STEP_RUN else 1.0
        rows.append(
            row("matmul", "cpu", 0.010 * step, {"size": 1024, "precision": "fp32"}, run=run)
        )
        rows.append(row("matmul", "cpu", 0.002, {"size": 256, "precision": "fp32"}, run=run))
    frame(rows, tmp / "store")
    build_site(BuildOptions(results=tmp / "store", out=tmp / "site"))
    return tmp / "site"


def test_the_history_chart_renders_and_marks_the_planted_step(history_site, chromium):
    page = chromium.new_page()
    problems = watched(page)
    load(page, (history_site / "history" / "matmul.html").as_uri())
    drawn = page.evaluate(CHARTS_DRAWN)
    assert len(drawn) == 2 and all(count > 0 for count in drawn), drawn
    assert not problems, problems
    sections = page.locator("section.case-history")
    stepped = sections.filter(has_text="size=1024")
    steady = sections.filter(has_text="size=256")
    changes = stepped.locator("ul.changes li")
    assert changes.count() == 1
    assert "regression" in changes.inner_text() and f"run-{STEP_RUN:03d}" in changes.inner_text()
    assert "1.3×" in changes.inner_text()
    # the chart draws the change as a red triangle: one in the stepped case, none in the steady
    red = f'path[fill="{REGRESSION_RED}"]'
    assert stepped.locator(f".vega svg .mark-symbol.role-mark {red}").count() == 1  # not the legend
    assert (
        steady.locator(f".vega svg {red}").count() == 0
        and steady.locator("ul.changes").count() == 0
    )
    page.close()


def test_the_workload_and_compare_pages_link_to_it(history_site):
    assert (
        'href="../history/matmul.html"' in (history_site / "workloads" / "matmul.html").read_text()
    )
    assert 'href="history/matmul.html"' in (history_site / "compare.html").read_text()
