"""Each case's history: its median in every run of every host, with the run's 95% interval
and the changes the site flags between runs (asv's central view).

One row per (host, device, workload, case, run): the run's newest ok row of that case, at the
run's start (:attr:`benchsite.tables.Tables.runs`). ``verdict`` is ``regression`` or
``improvement`` where :func:`benchsite.tables.compare.run_comparison` — the one definition the
Runs pages and ``benchsite compare`` use — flags the case in that run against its host's run
before (``ratio``, ``low``, ``high``: its NEW/BASE ratio and interval), else empty.
"""

from __future__ import annotations

import pandas as pd

from benchsite.tables.rows import current

COLUMNS = [
    "workload",
    "case_key",
    "params_text",
    "host",
    "device",
    "series",
    "run_id",
    "started",
    "median_s",
    "ci_low_s",
    "ci_high_s",
    "row_id",
    "runs",
    "verdict",
    "ratio",
    "low",
    "high",
]


def history(rows: pd.DataFrame, runs: pd.DataFrame, changes: pd.DataFrame) -> pd.DataFrame:
    """The history of every case (module docstring); ``rows`` prepared, ``runs`` and ``changes``
    the :attr:`~benchsite.tables.Tables.runs` and :attr:`~benchsite.tables.Tables.case_changes`
    tables. ``runs`` counts the runs of that host and device that measured the case."""
    ok = rows[rows["ok"].to_numpy(bool)] if len(rows) else rows
    if ok.empty:
        return pd.DataFrame(columns=COLUMNS)
    each = current(ok, per=["run_id"])
    run_keys = zip(runs["host"].astype(str), runs["run_id"].astype(str), strict=True)
    start = dict(zip(run_keys, runs["started"], strict=True))  # run ids are unique per host
    flagged = changes[changes["verdict"].isin(["regression", "improvement"])]
    flagged = flagged.drop_duplicates("row_new", keep="last")  # a row compared once
    flagged = flagged.set_index(flagged["row_new"].astype(str)) if len(flagged) else flagged
    row_ids = each["row_id"].astype(str)
    table = pd.DataFrame(
        {
            "workload": each["workload"].astype(str),
            "case_key": each["case_key"].astype(str),
            "params_text": each["params_text"].astype(str),
            "host": each["host"].astype(str),
            "device": each["device"].astype(str),
            "series": each["series"].astype(str),
            "run_id": each["run_id"].astype(str),
            "started": [
                start.get(key)
                for key in zip(each["host"].astype(str), each["run_id"].astype(str), strict=True)
            ],
            "median_s": each["median_s"].astype(float),
            "ci_low_s": each["ci_low_s"].astype(float),
            "ci_high_s": each["ci_high_s"].astype(float),
            "row_id": row_ids,
        }
    )
    keys = ["host", "device", "workload", "case_key"]
    table["runs"] = table.groupby(keys)["run_id"].transform("nunique").astype(int)
    for column in ("verdict", "ratio", "low", "high"):
        found = flagged[column].reindex(row_ids) if len(flagged) else pd.Series(index=row_ids)
        table[column] = found.to_numpy()
    table["verdict"] = [v if isinstance(v, str) else "" for v in table["verdict"]]
    return table.sort_values([*keys, "started"], kind="stable").reset_index(drop=True)[COLUMNS]
