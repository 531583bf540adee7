"""Two hosts, two runs or two device models compared case by case: the one definition of a
comparison and of a regression.

A **side** is what one name selects (:func:`side`): a host (its current ok rows), a run (its ok
rows, the newest of each case), or a device model such as ``NVIDIA H200`` (the current ok rows
of every device of that model on any host, the newest of each case). The two sides' rows are
matched on workload, world size and parameters, and on the device too when neither side is a
model (``cuda:0`` with ``cuda:0``).

``ratio`` = NEW median time / BASE median time (above 1: NEW is slower). ``low``–``high`` is
its 95% interval from the moving-block bootstrap of the stored samples that the speedups use
(:func:`benchsite.tables.speedups.ratio_intervals`; where a side stored no samples, the ratio
of the stored medians bounded by their stored intervals). A difference is **significant**
when the interval leaves out 1; ``change`` is then ``slower`` or ``faster``, else ``same``.
A **regression** beyond a threshold (:func:`verdicts`, ``--fail-on-regression 5%``) is a
significantly slower case whose ratio exceeds 1 + threshold (asv's ``continuous`` rule), an
**improvement** a significantly faster one whose ratio is below 1 − threshold. Between runs
(:func:`run_comparison`: each run against the previous run of its host) the site uses 5%: the
Runs pages, the history finding and the overview read these verdicts and no other.
``same_hardware`` says whether the two rows' devices share a hardware fingerprint.
Given the store's run medians (:func:`benchsite.tables.reruns.run_medians`), a case whose NEW
median lies within what other runs of it on the same device model gave
(:func:`benchsite.tables.reruns.within_spread`, ``within_reruns``) is ``same``: reruns of
that hardware differ that much anyway.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from benchsite.errors import SelectionError
from benchsite.tables import reruns
from benchsite.tables.rows import current
from benchsite.tables.speedups import from_medians_where_no_samples, ratio_intervals
from benchsite.units import format_seconds

__all__ = [  # public: docs/toolkit.md
    "REGRESSION",
    "RunComparison",
    "Side",
    "Sides",
    "compare",
    "compared",
    "hardware_differences",
    "hardware_groups",
    "matched",
    "parse_threshold",
    "regressions",
    "reversed_comparison",
    "run_comparison",
    "run_pairs",
    "side",
]

COLUMNS = [
    "workload",
    "variant",
    "params_text",
    "axis",
    "axis_value",
    "world_size",
    "device_base",
    "device_new",
    "host_base",
    "host_new",
    "model_base",
    "model_new",
    "median_base_s",
    "median_new_s",
    "ratio",
    "low",
    "high",
    "significant",
    "change",
    "suspect",
    "reasons",
    "row_base",
    "row_new",
    "run_base",
    "run_new",
    "same_hardware",
    "case_key",
    "within_reruns",
]
KINDS = ("host", "run", "model")
# the columns a side keeps: a comparison moves these through merges, not the store's seventy
NEEDED = [
    "row_id",
    "run_id",
    "timestamp",
    "host",
    "device",
    "device_kind",
    "device_model",
    "fingerprint",
    "workload",
    "case_key",
    "axis",
    "axis_value",
    "world_size",
    "median_s",
    "ci_low_s",
    "ci_high_s",
    "samples_s",
    "torch_version",
    "p",
    "dev",
    "params_text",
    "variant",
    "suspect",
    "uncertain",
    "reasons",
]


@dataclass(frozen=True)
class Side:
    """The rows one name selects: ``kind`` is ``host``, ``run`` or ``model``."""

    name: str
    kind: str
    rows: pd.DataFrame
    _keyed: dict[bool, pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)

    def keyed(self, by_device: bool) -> pd.DataFrame:
        """The rows with their ``match`` key (:func:`match_keys`), one row a key; made once
        per side, which a page pairs with many others."""
        if by_device not in self._keyed:
            keys = match_keys(self.rows, by_device)
            self._keyed[by_device] = self.rows.assign(match=keys).drop_duplicates(
                "match", keep="last"
            )
        return self._keyed[by_device]


def side(rows: pd.DataFrame, name: str) -> Side:
    """The side ``name`` selects among prepared rows (:attr:`benchsite.tables.Tables.rows`): a
    host name, a run id (or a unique start of one), ``HOST~N`` (the host's Nth run before its
    newest: ``gpu-01~0`` is its newest run, ``gpu-01~1`` the one before), or a device model
    (case-insensitive); a name matching none, or several runs, is a :class:`SelectionError`."""
    ok = _ok(rows)
    host, tilde, back = name.rpartition("~")
    if tilde and back.isdigit() and (ok["host"].astype(str) == host).any():
        return side(rows, _run_before(ok, host, int(back)))
    if (ok["host"].astype(str) == name).any():
        return Side(name, "host", current(ok[ok["host"].astype(str) == name]))
    runs = sorted({str(r) for r in ok["run_id"].unique() if str(r).startswith(name)})
    runs = [name] if name in runs else runs  # a whole id wins over the longer ids it starts
    if len(runs) == 1:
        return Side(runs[0], "run", current(ok[ok["run_id"].astype(str) == runs[0]]))
    models = ok["device_model"].astype(str).str.casefold()
    if (models == name.casefold()).any():
        chosen = ok[models == name.casefold()]
        newest = chosen.sort_values("timestamp", kind="stable")
        return Side(name, "model", newest.drop_duplicates(_model_key(newest), keep="last"))
    raise SelectionError(_unknown(ok, name, runs))


def _ok(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.loc[rows["ok"].to_numpy(bool), [c for c in NEEDED if c in rows]]


class Sides:
    """Every host, run and device model of a store, grouped once: ``sides[name]`` is
    ``side(rows, name)`` without a scan of the whole store per name (a page compares many)."""

    def __init__(self, rows: pd.DataFrame) -> None:
        self.rows = rows
        self.ok = _ok(rows)
        self.hosts = self.ok.groupby(self.ok["host"].astype(str), sort=False).indices
        self.runs = self.ok.groupby(self.ok["run_id"].astype(str), sort=False).indices
        self.made: dict[str, Side] = {}  # each side once: a host is in a pair with every other

    def __getitem__(self, name: str) -> Side:
        if name not in self.made:
            self.made[name] = self._side(name)
        return self.made[name]

    def _side(self, name: str) -> Side:
        if name in self.hosts:
            return Side(name, "host", current(self.ok.take(self.hosts[name])))
        if name in self.runs:
            return Side(name, "run", current(self.ok.take(self.runs[name])))
        return side(self.rows, name)  # a model, the start of a run id, HOST~N

    def cases_in_common(self, base: str, new: str) -> int:
        """``len(matched(self[base], self[new]))``; for two hosts or runs without making either
        side: a page pairs many sides and keeps the few its budget holds (the compare page, 1 of
        the 56 pairs of the 100,000-row benchmark's store, where making and matching every one
        took half of its 1.35 CPU-s)."""
        keys = self._match_codes
        if base in keys and new in keys:
            return len(np.intersect1d(keys[base], keys[new], assume_unique=True))
        return len(matched(self[base], self[new]))

    @functools.cached_property
    def _match_codes(self) -> dict[str, np.ndarray]:
        """Every host's and run's match keys (by device, :func:`match_keys`, numbered) among
        its side's rows (the newest row of each case, :func:`current`), for all at once."""
        codes, _ = pd.factorize(match_keys(self.ok, by_device=True))
        keyed = self.ok.assign(match=codes)
        found: dict[str, np.ndarray] = {}
        for column in ("run_id", "host"):  # a host's name wins over a run's, as in _side
            newest = current(keyed, per=[column])  # the current rows of every run (host) apart
            names = newest[column].astype(str)
            found |= {name: np.unique(group) for name, group in newest["match"].groupby(names)}
        return found


def _run_before(ok: pd.DataFrame, host: str, back: int) -> str:
    mine = ok[ok["host"].astype(str) == host]
    runs = [
        str(r)
        for r in mine.groupby("run_id", observed=True)["timestamp"]
        .min()
        .sort_values(kind="stable")
        .index
    ]
    if back >= len(runs):
        raise SelectionError(f"{host} has {len(runs)} run(s) with results: {host}~{back} is none")
    return runs[-1 - back]


def _unknown(ok: pd.DataFrame, name: str, runs: list[str]) -> str:
    if runs:
        return f"{name!r} starts {len(runs)} run ids ({', '.join(runs[:4])}): give more of one"
    hosts = ", ".join(sorted(set(ok["host"].astype(str))))
    models = ", ".join(sorted(set(ok["device_model"].dropna().astype(str))))
    return (
        f"{name!r} is no host, run or device model of this store; hosts: {hosts}; models: {models}"
    )


def _model_key(frame: pd.DataFrame) -> list[str]:
    return ["case_key", "world_size"] if not frame.empty else []


def compare(
    base: Side,
    new: Side,
    slower_than: float | None = None,
    medians: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per case measured on both sides (see the module docstring), slowest first. With
    ``slower_than``, only the cases whose median ratio exceeds 1 + it: the only ones that can be
    regressions beyond that threshold, and far fewer intervals to draw in a big store. With
    ``medians`` (the store's run medians), a case inside its reruns' spread is ``same``."""
    return compared(matched(base, new), slower_than, medians)


def compared(
    merged: pd.DataFrame, slower_than: float | None = None, medians: pd.DataFrame | None = None
) -> pd.DataFrame:
    """:func:`compare` of the cases :func:`matched` found."""
    if slower_than is not None:
        merged = merged[merged["median_s"] > merged["median_s_base"] * (1 + slower_than)]
    if merged.empty:
        return pd.DataFrame(columns=COLUMNS)
    pairs = list(zip(merged["samples_s"], merged["samples_s_base"], strict=True))
    intervals = from_medians_where_no_samples(merged, ratio_intervals(pairs), "", "_base")
    table = _with_reruns(_table(merged, intervals), medians)
    return table.sort_values("ratio", ascending=False, kind="stable")


def _with_reruns(table: pd.DataFrame, medians: pd.DataFrame | None) -> pd.DataFrame:
    """``table`` with its ``change`` from its interval and, given the store's run medians, the
    reruns' rule: a case inside its reruns' spread (``within_reruns``) is ``same``."""
    low, high = table["low"].to_numpy(float), table["high"].to_numpy(float)
    within = (
        reruns.within_spread(table, medians)
        if medians is not None
        else np.zeros(len(table), dtype=bool)
    )
    change = np.where(low > 1, "slower", np.where(high < 1, "faster", "same"))
    return table.assign(within_reruns=within, change=np.where(within, "same", change))


SWAPPED = [("device", "_base", "_new"), ("host", "_base", "_new"), ("model", "_base", "_new")]
SWAPPED += [("median", "_base_s", "_new_s"), ("row", "_base", "_new"), ("run", "_base", "_new")]


def reversed_comparison(table: pd.DataFrame, medians: pd.DataFrame | None = None) -> pd.DataFrame:
    """The :func:`compared` table of NEW against BASE, from that of BASE against NEW: the sides
    swapped, the ratio and its interval inverted, and the reruns' rule applied from the other
    side (it asks whether the *new* median lies within its other runs, so it is not symmetric)."""
    names = {f"{stem}{one}": f"{stem}{two}" for stem, one, two in SWAPPED}
    swapped = table.rename(columns={**names, **{new: old for old, new in names.items()}})
    ratio, low, high = (1 / table[name].to_numpy(float) for name in ("ratio", "high", "low"))
    return _with_reruns(swapped.assign(ratio=ratio, low=low, high=high), medians)[COLUMNS]


def matched(base: Side, new: Side) -> pd.DataFrame:
    """The two sides' rows of every case measured on both, merged (BASE's columns end in
    ``_base``)."""
    by_device = base.kind != "model" and new.kind != "model"
    return new.keyed(by_device).merge(base.keyed(by_device), on="match", suffixes=("", "_base"))


def match_columns(by_device: bool) -> list[str]:
    """What makes two rows the same case: the case key (workload and every parameter), the
    world size and, unless a side is a model, the device."""
    return ["case_key", "world_size", "device"] if by_device else ["case_key", "world_size"]


def match_keys(rows: pd.DataFrame, by_device: bool) -> np.ndarray:
    """:func:`match_columns` of each row as one text."""
    columns = [rows[name].astype(str) for name in match_columns(by_device)]
    return functools.reduce(lambda keys, column: keys + "\x1f" + column, columns).to_numpy()


def _table(merged: pd.DataFrame, intervals: list[tuple[float, float, float]]) -> pd.DataFrame:
    ratio, low, high = (np.array(column, dtype=float) for column in zip(*intervals, strict=True))
    significant = (low > 1) | (high < 1)
    text = lambda name: merged[name].astype(str).to_numpy()  # noqa: E731
    return pd.DataFrame(
        {
            "workload": text("workload"),
            "variant": merged["variant"],
            "params_text": merged["params_text"],
            "axis": merged["axis"],
            "axis_value": merged["axis_value"].astype(float),
            "world_size": merged["world_size"],
            "device_base": text("device_base"),
            "device_new": text("device"),
            "host_base": text("host_base"),
            "host_new": text("host"),
            "model_base": text("device_model_base"),
            "model_new": text("device_model"),
            "median_base_s": merged["median_s_base"].astype(float),
            "median_new_s": merged["median_s"].astype(float),
            "ratio": ratio,
            "low": low,
            "high": high,
            "significant": significant,
            "change": "same",  # _with_reruns: from the interval and the reruns' spread
            "suspect": _doubtful(merged),
            "reasons": [
                tuple(dict.fromkeys([*a, *ua, *b, *ub]))
                for a, ua, b, ub in zip(
                    merged["reasons"],
                    merged["uncertain"],
                    merged["reasons_base"],
                    merged["uncertain_base"],
                    strict=True,
                )
            ],
            "row_base": text("row_id_base"),
            "row_new": text("row_id"),
            "run_base": text("run_id_base"),
            "run_new": text("run_id"),
            "same_hardware": (
                merged["fingerprint"].astype(str) == merged["fingerprint_base"].astype(str)
            ).to_numpy(bool),
            "case_key": text("case_key"),
            "within_reruns": np.zeros(len(merged), dtype=bool),
        }
    )


def verdicts(table: pd.DataFrame, threshold: float) -> np.ndarray:
    """``regression``, ``improvement`` or ``unchanged`` for each compared case: the gate's
    verdict (:func:`gate_verdicts`, suspect rows counted) at a share ``threshold`` (0.05 for
    5%): a change (``change``: its interval leaves out 1 and, given the run medians, its NEW
    median is outside the reruns' spread) of more than ``threshold``."""
    return gate_verdicts(table, Threshold(share=threshold), strict=True)


def regressions(table: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """The cases significantly slower by more than ``threshold`` (0.05 for 5%)."""
    return table[verdicts(table, threshold) == "regression"]


@dataclass(frozen=True)
class Threshold:
    """How much slower a case may get before the gate counts it: a share of BASE's median
    (``share``, 0.05 for ``5%``) or a time (``seconds``, 0.002 for ``2ms``)."""

    share: float | None = None
    seconds: float | None = None

    def exceeded(self, table: pd.DataFrame) -> np.ndarray:
        """Whether each compared case's NEW median is beyond BASE's by more than this."""
        new, base = table["median_new_s"].to_numpy(float), table["median_base_s"].to_numpy(float)
        if self.seconds is not None:
            return new - base > self.seconds
        return table["ratio"].to_numpy(float) > 1 + (self.share or 0.0)

    def __str__(self) -> str:
        if self.seconds is not None:
            return format_seconds(self.seconds)
        return f"{(self.share or 0.0) * 100:g}%"


TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def parse_threshold(text: str) -> Threshold:
    """``5%`` → a share of 0.05, ``1.5x`` → a share of 0.5 (NEW over 1.5 times BASE), ``2ms``
    (``ns``, ``us``, ``ms``, ``s``) → 2 ms more than BASE; a bare number, which reads either as
    a percentage or as a fraction, or anything else is a :class:`SelectionError`."""
    found = re.fullmatch(r"([0-9.eE+-]*?)([a-zµ%]*)", text.strip().replace(" ", ""))
    number, unit = found.groups() if found else ("", "?")
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if not unit and math.isfinite(value):
        raise SelectionError(
            f"--fail-on-regression {text} has no unit: write {value:g}% for a slowdown of "
            f"{value:g} percent, or {value * 100:g}% for one of {value * 100:g} percent (what "
            f"a bare {value:g} meant before), or a time such as 2ms"
        )
    if unit == "%" and 0 <= value:
        return Threshold(share=value / 100)
    if unit == "x" and 1 <= value:
        return Threshold(share=value - 1)
    if unit in TIME_UNITS and 0 <= value:
        return Threshold(seconds=value * TIME_UNITS[unit])
    raise SelectionError(
        f"--fail-on-regression takes a slowdown like 5% (a share of BASE's time), 1.5x "
        f"(a ratio) or 2ms (a time), got {text!r}"
    )


def gate_verdicts(table: pd.DataFrame, threshold: Threshold, strict: bool = False) -> np.ndarray:
    """The regression gate's verdict of each compared case: ``regression`` when it is
    significantly slower (its interval above 1) by more than ``threshold``; ``inconclusive``
    when it would be one but rests on a suspect row of either side (``suspect``: a flag
    registered as suspect, :mod:`benchsite.tables.flags`, the validity the site shows), unless
    ``strict``; ``improvement`` when significantly faster by more than it (a share) or by
    more than it (a time); else ``unchanged``."""
    change = table["change"].to_numpy()
    beyond = threshold.exceeded(table)
    slower = (change == "slower") & beyond
    suspect = table["suspect"].to_numpy(bool) & (not strict)
    if threshold.seconds is not None:
        gained = table["median_base_s"].to_numpy(float) - table["median_new_s"].to_numpy(float)
        faster = (change == "faster") & (gained > threshold.seconds)
    else:
        faster = (change == "faster") & (table["ratio"].to_numpy(float) < 1 - threshold.share)
    return np.select(
        [slower & suspect, slower, faster],
        ["inconclusive", "regression", "improvement"],
        "unchanged",
    )


def hardware_groups(rows: pd.DataFrame) -> dict[str, list[str]]:
    """Hosts grouped by the hardware of their devices: the sorted set of device fingerprints
    (with model names, for reading) → the hosts that have exactly those devices."""
    groups: dict[str, list[str]] = {}
    for host, frame in rows.groupby(rows["host"].astype(str), sort=True):
        devices = frame.drop_duplicates("fingerprint")
        label = " + ".join(
            sorted(
                f"{model} [{print_}]"
                for model, print_ in zip(
                    devices["device_model"].astype(str),
                    devices["fingerprint"].astype(str),
                    strict=True,
                )
            )
        )
        groups.setdefault(label, []).append(str(host))
    return groups


def hardware_differences(base: Side, new: Side) -> list[tuple[str, str, str]]:
    """(what, base value, new value) for every device property, device model and library
    version that differs between the sides' newest devices of each kind."""
    found = []
    for kind in sorted(set(base.rows["device_kind"].astype(str)) & set(new.rows["device_kind"])):
        one, two = (_newest_info(s.rows, kind) for s in (base, new))
        for key in sorted(set(one) | set(two)):
            if key not in ("index", "pci_bus_id") and one.get(key) != two.get(key):
                found.append((f"{kind} {key}", str(one.get(key, "—")), str(two.get(key, "—"))))
    return found


def _newest_info(rows: pd.DataFrame, kind: str) -> dict[str, object]:
    chosen = rows[rows["device_kind"].astype(str) == kind].sort_values("timestamp")
    if chosen.empty:
        return {}
    last = chosen.iloc[-1]
    info = dict(last["dev"]) if isinstance(last["dev"], dict) else {}
    return {"model": last["device_model"], **info, "torch": last["torch_version"]}


REGRESSION = 0.05  # the site marks a run whose case got significantly slower by more than 5%
RUNS_PER_HOST = 10


def run_pairs(rows: pd.DataFrame, per_host: int = RUNS_PER_HOST) -> list[tuple[str, str, str]]:
    """(host, previous run, run) of each host's newest ``per_host`` runs, oldest first."""
    ok = rows[rows["ok"].to_numpy(bool)]
    started = ok.groupby(["host", "run_id"], observed=True)["timestamp"].min().reset_index()
    pairs = []
    for host, runs in started.sort_values("timestamp", kind="stable").groupby("host", sort=True):
        ids = [str(run) for run in runs["run_id"]][-per_host:]
        pairs += [(str(host), base, new) for base, new in itertools.pairwise(ids)]
    return pairs


@dataclass(frozen=True)
class RunComparison:
    """Each run against the previous run of its host (:func:`run_pairs`).

    ``runs``: one row per such run (``host``, ``base_run``, ``run_id``, the ``cases`` both
    measured, its ``regressions`` and ``improvements``, and whether it is the host's
    ``newest``). ``cases``: the :func:`compared` rows, with their
    ``verdict`` (:func:`verdicts`), of every case whose median moved by more than the
    threshold either way: the only ones that can be a regression or an improvement; a case not
    listed is unchanged. ``matched``: ``run_id`` and ``row_id`` of every row of such a run
    whose case the run before measured too (what ``cases`` in ``runs`` counts)."""

    runs: pd.DataFrame
    cases: pd.DataFrame
    matched: pd.DataFrame


def run_comparison(rows: pd.DataFrame, threshold: float = REGRESSION) -> RunComparison:
    """:class:`RunComparison` of prepared rows: one merge for every pair of runs at once, and
    intervals only for the cases whose medians moved by more than ``threshold``, so a store of
    many hosts and runs stays quick to build."""
    columns = ["host", "base_run", "run_id", "cases", "regressions", "improvements", "newest"]
    pairs = run_pairs(rows)
    previous = {new: base for _, base, new in pairs}
    newest = {host: new for host, _, new in pairs}  # oldest first: the last pair of a host wins
    if not previous:
        return RunComparison(
            pd.DataFrame(columns=columns),
            pd.DataFrame(columns=[*COLUMNS, "verdict"]),
            pd.DataFrame(columns=["run_id", "row_id"]),
        )
    ok = _ok(rows).sort_values("timestamp", kind="stable")
    ok = ok.drop_duplicates(["run_id", "device", "case_key"], keep="last")
    # each row's run and case (match_columns) as numbers: merging on texts took ~1.5 s, and
    # making the texts ~0.6 s, at a million rows
    run, names = pd.factorize(ok["run_id"].astype(object).map(str))
    groups = ok.groupby(match_columns(by_device=True), sort=False, dropna=False)
    case = groups.ngroup().to_numpy()
    case_count = int(case.max()) + 1 if len(case) else 0
    code = {name: at for at, name in enumerate(names)}
    before = np.array([code.get(previous.get(name), -1) for name in names], int)[run]
    is_base = np.isin(run, [code[name] for name in set(previous.values()) if name in code])
    is_new = before >= 0  # a row of a run that has a run before it: paired with that run's row
    new = ok[is_new].assign(pair=before[is_new] * case_count + case[is_new])
    base = ok[is_base].assign(pair=run[is_base] * case_count + case[is_base])
    both = new.merge(base, on="pair", suffixes=("", "_base"))
    moved = both["median_s"] / both["median_s_base"]
    moved_much = ((moved > 1 + threshold) | (moved < 1 - threshold)).to_numpy(bool)
    cases = compared(both[moved_much], medians=reruns.run_medians(rows))
    cases = cases.assign(verdict=verdicts(cases, threshold))
    counts = cases.groupby(["run_new", "verdict"]).size()
    compared_cases = both.groupby("run_id", observed=True).size()
    return RunComparison(
        pd.DataFrame(
            [
                (
                    host,
                    base_run,
                    run,
                    int(compared_cases.get(run, 0)),
                    int(counts.get((run, "regression"), 0)),
                    int(counts.get((run, "improvement"), 0)),
                    newest[host] == run,
                )
                for host, base_run, run in pairs
            ],
            columns=columns,
        ),
        cases,
        both[["run_id", "row_id"]].astype(str),
    )


def _doubtful(merged: pd.DataFrame) -> np.ndarray:
    """Whether either side of each pair rests on a row the site doubts: suspect, or flagged
    uncertain (its interval widened: noisy, unstable, busy, irreproducible)."""
    doubt = merged["suspect"].astype(bool) | merged["suspect_base"].astype(bool)
    for column in ("uncertain", "uncertain_base"):  # the uncertain flags of each row, a tuple
        doubt = doubt | merged[column].map(bool)
    return doubt.to_numpy(bool)
