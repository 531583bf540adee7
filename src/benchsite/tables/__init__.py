"""The tables: the one definition of every number the site derives from the store.

A build computes one :class:`Tables` from the prepared results (after every
``prepare_results`` hook) and hands it to every analysis and page; each table is worked out the
first time it is asked for and then kept, so what nobody reads costs nothing and what many read
is computed once. Analyses turn tables into findings; pages render tables and findings; neither
recomputes a number defined here.

- :attr:`Tables.rows`: every row, prepared (:func:`benchsite.tables.rows.prepare`): decoded
  ``p``/``m``/``dev`` dicts, ``variant``, ``series``, ``flags``, ``ok``, ``suspect``,
  ``reasons``.
- :attr:`Tables.current`: the newest row of every (host, device, workload, case), any status;
  in a fleet (more than :data:`~benchsite.tables.fold.FLEET_HOSTS` hosts) the hosts of one
  hardware folded into one row per case, the median host's (:mod:`benchsite.tables.fold`).
- :attr:`Tables.ok`: current rows that succeeded with a positive median (usable and suspect).
- :attr:`Tables.usable`: ok and trustworthy: what may be headlined.
- :attr:`Tables.suspect`: ok but flagged (a flag registered as suspect,
  :attr:`Tables.suspect_flags`), with ``reasons``; :attr:`Tables.flags`: what each flag means.
- :attr:`Tables.speedups`: accelerator-over-CPU speedup of every pair, with its block-bootstrap
  95% interval (:mod:`benchsite.tables.speedups`).
- :attr:`Tables.crossovers`: where the accelerator starts to win, with and without copies.
- :attr:`Tables.headline`: one speedup per workload and accelerator (never a suspect pair);
  :attr:`Tables.suspect_headlines`: the workloads whose largest size is all suspect.
- :meth:`Tables.scaling`: throughput curves along batch, threads or world size.
- :meth:`Tables.effects`: one parameter changed against its baseline (a technique).
- :attr:`Tables.precision_gains`: lower precision over fp32 on the same device.
- :attr:`Tables.devices`, :attr:`Tables.peaks`, :attr:`Tables.runs`: every device with its
  newest info, the best rate measured on each, and one row per run.
- :mod:`benchsite.tables.compare`: two hosts, runs or device models case by case (NEW/BASE
  time with the speedups' block-bootstrap interval), regressions beyond a threshold, hosts
  grouped by hardware fingerprint; :attr:`Tables.run_changes` and :attr:`Tables.case_changes`:
  each run against its host's previous run (regressions and improvements beyond 5%, the one
  definition the Runs pages and the history finding read); :attr:`Tables.case_history`: every
  case's median run by run with those changes marked; :attr:`Tables.leaderboard`:
  per workload, the fleet's device models ranked on its most widely measured case.
- :attr:`Tables.small_hosts`: CPU-only hosts smaller than a GPU host beside them (a CI runner).
- :attr:`Tables.byte_sized`: the workloads whose ``size`` counts bytes (shown as KiB, MiB, GiB).
- :attr:`Tables.answers`: the one-screen answer per workload (:mod:`benchsite.tables.answers`).
- :attr:`Tables.references`: the rows of the references (``benchsite build --reference``),
  prepared apart from :attr:`Tables.rows`; :attr:`Tables.cross_speedups`,
  :attr:`Tables.cross_answers`, :attr:`Tables.reference_lacks` and :attr:`Tables.standing`:
  the user's CPU against a reference's accelerator, and where each device model stands
  (:mod:`benchsite.tables.reference`).
- :attr:`Tables.reruns`: each case's spread (lowest and highest run median, how many runs) over
  the runs of its device model (:mod:`benchsite.tables.reruns`).
- :attr:`Tables.bandwidth_shares`: each memory-bound case's GB/s as a share of its device's
  measured memory bandwidth (:mod:`benchsite.tables.bandwidth`).
- :mod:`benchsite.tables.csvfile`: result rows as CSV, quoted against spreadsheet formulas
  (the site's ``data/results.csv`` and ``benchsite results --csv``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from benchsite.records import Flag
from benchsite.tables import (
    answers,
    bandwidth,
    compare,
    csvfile,
    curves,
    effects,
    fold,
    history,
    inventory,
    leaderboard,
    reference,
    reruns,
    speedups,
)
from benchsite.tables.answers import PLAIN
from benchsite.tables.compare import REGRESSION
from benchsite.tables.curves import CALLS, SCALING_AXES, SUPERLINEAR
from benchsite.tables.flags import (
    Flags,
    deprecated_suspect_flags,
    flag_map,
    not_a_peak_codes,
    suspect_codes,
    uncertain_codes,
)
from benchsite.tables.rows import (
    DERIVED_COLUMNS,
    best_rate,
    each_once,
    flag_tuple,
    metric_frame,
    prepare,
    rate_unit,
    run_order,
)
from benchsite.tables.speedups import precision_of, ratio_intervals, without, work_keys

# public (docs/toolkit.md lists them): what plugins import from here
__all__ = [
    "CALLS",
    "DERIVED_COLUMNS",
    "PLAIN",
    "REGRESSION",
    "SCALING_AXES",
    "SUPERLINEAR",
    "TABLE_GROUPS",
    "Tables",
    "best_rate",
    "compare",
    "csvfile",
    "each_once",
    "flag_tuple",
    "fold",
    "metric_frame",
    "precision_of",
    "rate_unit",
    "ratio_intervals",
    "reruns",
    "run_order",
    "without",
    "work_keys",
]


def __getattr__(name: str) -> object:  # PEP 562: the deprecated SUSPECT_FLAGS
    if name == "SUSPECT_FLAGS":
        return deprecated_suspect_flags()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# every table that takes no argument (what the built-in analyses and pages read), in groups:
# each table is made from the rows, from the first group (the current rows) or from a table of
# its own group, so the groups after the first can be worked out apart (Tables.compute) and
# kept where they are needed (Tables.adopt). A table in another group than one it reads is
# still right, only that one is then worked out twice.
TABLE_GROUPS = (
    ("current", "ok", "usable", "suspect"),
    ("speedups", "crossovers", "headline", "suspect_headlines"),
    ("precision_gains",),
    ("run_comparison",),
    ("runs", "devices", "peaks", "reruns"),
    ("cross_speedups", "cross_answers", "reference_lacks"),
    ("bandwidth_shares",),
)
EVERY_TABLE = tuple(name for group in TABLE_GROUPS for name in group)


@dataclass(frozen=True, eq=False)
class Tables:
    """Every derived table of one store (see the module docstring). Make one with
    :meth:`of`; read its attributes, never change the frames they return."""

    rows: pd.DataFrame
    flags: Flags = field(default_factory=flag_map)
    _scaling: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    _effects: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict, repr=False)
    references: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @classmethod
    def of(
        cls,
        results: pd.DataFrame,
        flags: Flags | Iterable[Flag] | None = None,
        references: pd.DataFrame | None = None,
    ) -> Tables:
        """The tables of ``results`` (the store after every ``prepare_results`` hook);
        ``flags`` say what the codes of its ``flags`` column mean (the ``register_flags``
        records; ``None``: those of the installed plugins). The rows of ``references``
        (prepared likewise) sit beside them, never among them."""
        meanings = flag_map(flags)
        codes, uncertain = suspect_codes(meanings), uncertain_codes(meanings)
        beside = (
            prepare(references, codes, uncertain)
            if references is not None and len(references)
            else None
        )
        return cls(
            prepare(results, codes, uncertain),
            meanings,
            references=pd.DataFrame() if beside is None else beside,
        )

    @property
    def suspect_flags(self) -> frozenset[str]:
        """The flag codes that make an ok row suspect (``Flag.suspect``)."""
        return suspect_codes(self.flags)

    @property
    def not_a_peak_flags(self) -> frozenset[str]:
        """The flag codes whose rates are no device's peak (``Flag.not_a_peak``)."""
        return not_a_peak_codes(self.flags)

    def computed(self) -> Tables:
        """These tables with every table that takes no argument worked out now (what the
        built-in analyses and pages read): the build does so once, before the analyses and
        pages run in processes forked from it, each of which would otherwise work them out
        again."""
        self.compute(EVERY_TABLE)
        return self

    def compute(self, names: tuple[str, ...]) -> dict[str, Any]:
        """The tables ``names`` (a group of :data:`TABLE_GROUPS`), worked out now."""
        return {name: getattr(self, name) for name in names}

    def adopt(self, tables: dict[str, Any]) -> None:
        """Keep ``tables`` (name → table, as :meth:`compute` of an equal :class:`Tables` gave
        them, e.g. in a forked process) as if worked out here."""
        unknown = set(tables) - set(EVERY_TABLE)
        if unknown:
            raise ValueError(f"not tables of Tables.computed(): {sorted(unknown)}")
        self.__dict__.update(tables)  # where functools.cached_property keeps what it made

    @functools.cached_property
    def current(self) -> pd.DataFrame:
        from benchsite.tables.rows import current

        return fold.fold_hosts(current(self.rows))  # by hardware, in a fleet only

    @functools.cached_property
    def ok(self) -> pd.DataFrame:
        return self.current[self.current["ok"].to_numpy(bool)]

    @functools.cached_property
    def usable(self) -> pd.DataFrame:
        return self.ok[~self.ok["suspect"].to_numpy(bool)]

    @functools.cached_property
    def suspect(self) -> pd.DataFrame:
        return self.ok[self.ok["suspect"].to_numpy(bool)]

    @functools.cached_property
    def speedups(self) -> pd.DataFrame:
        return speedups.speedups(self.ok)

    @functools.cached_property
    def crossovers(self) -> pd.DataFrame:
        return curves.crossovers(self.speedups)

    @functools.cached_property
    def headline(self) -> pd.DataFrame:
        return curves.headline(self.speedups)

    @functools.cached_property
    def suspect_headlines(self) -> pd.DataFrame:
        return curves.suspect_headlines(self.speedups)

    @functools.cached_property
    def precision_gains(self) -> pd.DataFrame:
        return effects.precision_gains(self.ok)

    def effects(self, parameter: str, baseline: object) -> pd.DataFrame:
        """:func:`benchsite.tables.effects.effects` of ``parameter`` against ``baseline``,
        computed once per (parameter, baseline)."""
        key = (parameter, repr(baseline))
        if key not in self._effects:
            self._effects[key] = effects.effects(self.ok, parameter, baseline)
        return self._effects[key]

    @functools.cached_property
    def devices(self) -> pd.DataFrame:
        return inventory.devices(self.rows)

    @functools.cached_property
    def peaks(self) -> pd.DataFrame:
        return inventory.peaks(self.rows, self.not_a_peak_flags)

    @functools.cached_property
    def bandwidth_shares(self) -> pd.DataFrame:
        return bandwidth.bandwidth_shares(self.ok, self.not_a_peak_flags)

    @functools.cached_property
    def answers(self) -> pd.DataFrame:
        return answers.answers(self.speedups, self.crossovers, self.small_hosts)

    @functools.cached_property
    def small_hosts(self) -> frozenset[str]:
        return inventory.small_hosts(self.devices)

    @functools.cached_property
    def byte_sized(self) -> frozenset[str]:
        return inventory.byte_sized(self.ok)

    def value_text(self, workload: str, parameter: str, value: object) -> str:
        """A parameter's value in words: ``1 GiB`` where ``workload``'s ``size`` counts bytes
        (:attr:`byte_sized`), else the number (``8,192``)."""
        from benchsite.units import format_value

        in_bytes = parameter == "size" and str(workload) in self.byte_sized
        return format_value(value, in_bytes)  # type: ignore[arg-type]

    @functools.cached_property
    def runs(self) -> pd.DataFrame:
        return inventory.runs(self.rows)

    @functools.cached_property
    def reruns(self) -> pd.DataFrame:
        """Each case's spread over the runs of its device model (:mod:`.reruns`)."""
        return reruns.rerun_spread(self.rows)

    @functools.cached_property
    def leaderboard(self) -> pd.DataFrame:
        """The fleet's device models ranked per workload (:mod:`.leaderboard`)."""
        return leaderboard.leaderboard(self.usable)

    @functools.cached_property
    def references_ok(self) -> pd.DataFrame:
        """The current ok rows of the references (:func:`reference.current_ok`)."""
        return reference.current_ok(self.references)

    @functools.cached_property
    def cross_speedups(self) -> pd.DataFrame:
        """This store's CPU against the references' accelerators (:mod:`.reference`)."""
        return reference.cross_speedups(self.ok, self.references_ok)

    @functools.cached_property
    def cross_answers(self) -> pd.DataFrame:
        """The one-screen answer of :attr:`cross_speedups` per CPU host and workload."""
        return reference.cross_answers(self.cross_speedups)

    @functools.cached_property
    def reference_lacks(self) -> pd.DataFrame:
        """This store's CPU cases that no reference accelerator measured, per workload."""
        return reference.lacking(self.ok, self.cross_speedups)

    @functools.cached_property
    def standing(self) -> pd.DataFrame:
        """Every device model of the store and the references ranked per workload and kind,
        ties within the 95% intervals sharing a rank (:func:`reference.standing`)."""
        refs = self.references_ok
        usable = refs[~refs["suspect"].to_numpy(bool)] if not refs.empty else refs
        return reference.standing(self.usable, usable)

    @functools.cached_property
    def run_comparison(self) -> compare.RunComparison:
        """Each run against its host's previous run (:func:`compare.run_comparison`)."""
        return compare.run_comparison(self.rows)

    @property
    def run_changes(self) -> pd.DataFrame:
        """Per run: the cases it shares with its host's previous run, its regressions and
        improvements (:class:`compare.RunComparison`)."""
        return self.run_comparison.runs

    @functools.cached_property
    def case_history(self) -> pd.DataFrame:
        """Every case's median in every run, with the changes :attr:`case_changes` flags
        (:mod:`.history`)."""
        return history.history(self.rows, self.runs, self.case_changes)

    @property
    def case_changes(self) -> pd.DataFrame:
        """The cases that moved beyond 5% between a run and its host's previous run, each with
        its interval and verdict (:class:`compare.RunComparison`)."""
        return self.run_comparison.cases

    def scaling(self, axis: str) -> pd.DataFrame:
        """:func:`benchsite.tables.curves.scaling` along ``axis``, computed once per axis."""
        if axis not in self._scaling:
            self._scaling[axis] = curves.scaling(self.ok, axis)
        return self._scaling[axis]
