"""Reruns: the same case measured by several runs on the same hardware model, and how far apart
their numbers fell — the one definition of a case's rerun spread.

A case here is (device model, device kind, case key, world size): the runs of every host with a
device of that model count, as a second lease of the same machine kind is what a reader's own
rerun would be. Each run contributes its newest ok row of the case (its median). The spread is
the lowest and the highest of those medians and how many runs gave them; a page shows it beside
the current value ("9–24 µs over 3 runs"), and ``benchsite compare`` and the Compare page
count a new median that falls inside the spread of the *other* runs of the same model (at least
two of them) as no change (:func:`within_spread`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["rerun_spread", "run_medians", "within_spread"]  # public: docs/toolkit.md

CASE = ["device_model", "device_kind", "case_key", "world_size"]
COLUMNS = [*CASE, "runs", "hosts", "low_s", "high_s"]


def run_medians(rows: pd.DataFrame) -> pd.DataFrame:
    """Each run's median of each case (its newest ok row): :data:`CASE`, ``run_id``, ``host``
    and ``median_s``, from prepared rows (``ok`` column)."""
    ok = rows.loc[rows["ok"].to_numpy(bool), [*CASE, "run_id", "host", "timestamp", "median_s"]]
    ok = ok.assign(device_model=ok["device_model"].fillna("").astype(str))
    newest = ok.sort_values("timestamp", kind="stable")
    return newest.drop_duplicates([*CASE, "run_id"], keep="last").drop(columns="timestamp")


def rerun_spread(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per case measured by two runs or more: ``runs``, ``hosts``, ``low_s`` and
    ``high_s`` (the lowest and highest run median)."""
    medians = run_medians(rows)
    if medians.empty:
        return pd.DataFrame(columns=COLUMNS)
    grouped = medians.groupby(CASE, sort=False, dropna=False)
    spread = grouped.agg(
        runs=("run_id", "nunique"),
        hosts=("host", "nunique"),
        low_s=("median_s", "min"),
        high_s=("median_s", "max"),
    ).reset_index()
    return spread[spread["runs"] >= 2].reset_index(drop=True)[COLUMNS]


def within_spread(compared: pd.DataFrame, medians: pd.DataFrame) -> np.ndarray:
    """For each compared case (rows of :func:`benchsite.tables.compare.compared`) whose two
    sides are devices of one model: whether its NEW median lies within the lowest and highest
    median that *other* runs of the case on that model gave (at least two such runs): a
    difference reruns of the same hardware show anyway. Two models' difference is never
    excused by one model's reruns."""
    if compared.empty or medians.empty:
        return np.zeros(len(compared), dtype=bool)
    same_model = (
        compared["model_new"].astype(str) == compared["model_base"].astype(str)
    ).to_numpy()
    by_case = {
        key: list(zip(group["run_id"].astype(str), group["median_s"], strict=True))
        for key, group in medians.groupby(["device_model", "case_key", "world_size"], sort=False)
    }
    found = []
    for alike, model, case, world, run, median in zip(
        same_model,
        compared["model_new"],
        compared["case_key"],
        compared["world_size"],
        compared["run_new"],
        compared["median_new_s"],
        strict=True,
    ):
        others = [m for r, m in by_case.get((str(model), case, world), ()) if r != run]
        found.append(alike and len(others) >= 2 and min(others) <= median <= max(others))
    return np.array(found, dtype=bool)
