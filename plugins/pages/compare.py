"""The Compare page: two hosts, two runs or two device models side by side, case by case.

Every number is :func:`benchsite.tables.compare.compare`'s, computed at build time for the
pairs a reader most often wants (every two device models of one kind, each run against its
host's previous run, newest first, every two hosts; at most :data:`MAX_PAIRS` pairs and
:data:`MAX_CASES` case lines, so a big fleet's page stays small) and embedded in the page as
JSON. A case is coloured slower or faster by the rule ``benchsite compare A B
--fail-on-regression 5%`` gates on (:func:`benchsite.tables.compare.verdicts`): its interval
leaves out no change, its NEW median lies outside what the store's other runs of that hardware
gave, and it moved by more than 5%. Plain JS
reads ``compare.html?a=BASE&b=NEW`` and shows that pair (the other way round too: the ratio and
its interval inverted), so a comparison can be linked, also from ``file://``; any other pair is
one ``benchsite compare A B`` away.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd
from markupsafe import Markup

from benchsite import Page, RenderedPage, hookimpl
from benchsite.units import format_rate_in, format_seconds

if TYPE_CHECKING:  # the site stack and the tables load when a site is built, not at start-up
    from benchsite.site import Site
    from benchsite.tables import compare as comparing

MAX_PAIRS = 60
MAX_CASES = 1500  # case lines embedded at most (~80 bytes each): the page stays small and quick
MAX_SIDES_OF_A_KIND = 12  # every two of up to 12 hosts (66 pairs) or models
SEPARATOR = "\x1f"


@dataclass(frozen=True)
class CompareContext:
    """``compare.html``: the sides (name, label), the first pair shown, hosts grouped by
    hardware, and ``data``, the HTML-safe JSON the page's script reads."""

    sides: list[tuple[str, str]]
    first: tuple[str, str] | None
    groups: list[tuple[str, list[str]]]
    data: Markup
    boards: list[Board] = field(default_factory=list)


@dataclass(frozen=True)
class Board:
    """The leaderboard of one workload and device kind: its case and its ranked lines (rank,
    model, where, median with its interval, rate, fraction of the best)."""

    workload: str
    kind: str
    case: str
    lines: list[tuple[int, str, str, str, str, str]]


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="compare", nav="Compare", order=75, render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.tables import compare as comparing
    from benchsite.tables.reruns import run_medians

    rows = site.tables.rows
    sides, pairs, cases, store_sides = {}, {}, 0, comparing.Sides(rows)
    medians = run_medians(rows)  # the reruns' spread: a change inside it is no change
    for base, new in chosen_pairs(rows):
        common = store_sides.cases_in_common(base, new)
        if not common or cases + common > MAX_CASES:
            continue  # nothing in common, or over the page's budget: `benchsite compare` has it
        cases += common
        one, two = store_sides[base], store_sides[new]
        table = comparing.compared(comparing.matched(one, two), medians=medians)
        sides.update({s.name: f"{s.name} ({s.kind})" for s in (one, two)})
        pairs[f"{one.name}{SEPARATOR}{two.name}"] = pair_data(table, one, two, medians)
    groups = sorted(comparing.hardware_groups(rows).items())
    first = tuple(next(iter(pairs)).split(SEPARATOR)) if pairs else None
    data = {"pairs": pairs, "sides": sides}
    boards = leader_boards(site.tables.leaderboard)
    context = CompareContext(sorted(sides.items()), first, groups, _safe_json(data), boards)
    return [site.render("compare.html", "compare.html", context, "compare")]


def leader_boards(table: pd.DataFrame) -> list[Board]:
    """:attr:`benchsite.tables.Tables.leaderboard` as one board per workload and device kind."""
    boards = []
    for (workload, kind), rows in table.groupby(["workload", "device_kind"], sort=True):
        lines = [
            (
                int(r.rank),
                r.model,
                f"{r.host} {r.device}",
                f"{format_seconds(r.median_s)} [{format_seconds(r.ci_low_s)}–"
                f"{format_seconds(r.ci_high_s)}]",
                format_rate_in(r.rate, r.rate_unit) if r.rate_unit else "",
                f"{r.versus_best:.0%}",
            )
            for r in rows.itertuples(index=False)
        ]
        boards.append(Board(str(workload), str(kind), str(rows["case"].iloc[0]), lines))
    return boards


def chosen_pairs(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """The pairs to embed, the most useful first (the page opens on the first pair with cases
    in common): every two device models of one device kind (two CPUs, two GPUs: like with
    like), then each run against its host's previous one, newest first, then every two models
    of different kinds, then every two hosts."""
    from benchsite.tables import compare as comparing

    ok = rows[rows["ok"].to_numpy(bool)]
    hosts = sorted(set(ok["host"].astype(str)))
    kinds = ok.dropna(subset=["device_model"]).groupby(ok["device_model"].astype(str))
    kind_of = {model: set(frame["device_kind"].astype(str)) for model, frame in kinds}
    models = sorted(set(kind_of) - set(hosts))
    two = list(itertools.combinations(models, 2)) if len(models) <= MAX_SIDES_OF_A_KIND else []
    alike = [(a, b) for a, b in two if kind_of[a] & kind_of[b]]
    started = ok.groupby(ok["run_id"].astype(str))["timestamp"].min()
    runs = sorted(comparing.run_pairs(rows), key=lambda pair: started[pair[2]], reverse=True)
    pairs = alike + [(base, new) for _, base, new in runs]  # the newest run of any host first
    pairs += [pair for pair in two if pair not in alike]
    if len(hosts) <= MAX_SIDES_OF_A_KIND:
        pairs += list(itertools.combinations(hosts, 2))
    return pairs[:MAX_PAIRS]


def pair_data(
    table: pd.DataFrame, base: comparing.Side, new: comparing.Side, medians: pd.DataFrame
) -> dict:
    """One pair as the page's script reads it: a row per case and the hardware differences.
    A case counts (and is coloured) as slower or faster by
    :func:`benchsite.tables.compare.verdicts` at :data:`benchsite.tables.compare.REGRESSION`
    (5%), the regression gate's rule, in each direction (the reruns' rule is not symmetric:
    the page shown the other way round reads the reversed comparison's verdicts); a case inside
    its reruns' spread says so."""
    from benchsite.tables import compare as comparing

    changes = {"regression": 1, "improvement": -1, "unchanged": 0}
    back = comparing.reversed_comparison(table, medians)
    verdicts = comparing.verdicts(table, comparing.REGRESSION) if len(table) else []
    back_verdicts = comparing.verdicts(back, comparing.REGRESSION) if len(back) else []
    cases = [
        [
            row.workload,
            _case(row),
            _device(row),
            _round(row.ratio),
            _round(row.low),
            _round(row.high),
            format_seconds(row.median_base_s),
            format_seconds(row.median_new_s),
            changes[verdict],
            int(row.suspect),
            int(row.same_hardware),
            int(row.within_reruns),
            changes[back_verdict],
            int(back_within),
        ]
        for row, verdict, back_verdict, back_within in zip(
            table.itertuples(index=False),
            verdicts,
            back_verdicts,
            back["within_reruns"],
            strict=True,
        )
    ]
    return {"cases": cases, "hardware": comparing.hardware_differences(base, new)}


def _case(row: object) -> str:
    case = str(row.variant or "")
    if isinstance(row.axis, str) and pd.notna(row.axis_value):
        value = int(row.axis_value) if float(row.axis_value).is_integer() else row.axis_value
        case = f"{case}, {row.axis}={value}" if case else f"{row.axis}={value}"
    return case


def _device(row: object) -> str:
    base = f"{row.model_base} ({row.device_base})"
    new = f"{row.model_new} ({row.device_new})"
    return new if base == new else f"{base} → {new}"


def _round(value: float) -> float:
    return float(f"{value:.5g}")


def _safe_json(data: dict) -> Markup:
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)
