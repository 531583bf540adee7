"""The hardware leaderboard: per workload and device kind, the fleet's device models ranked on
one case. Kinds are ranked apart: a workload may size its case to the device (the distributed
ones run tiny models on the CPU), so only devices of one kind surely ran the same work.

Per workload and kind the **reference case** is the case (parameters, world size and declared
work per call) measured on the most device models, the largest along the workload's axis among
those (the size where the hardware shows most). Each model is represented by its fastest usable
row of that case on any host (never a suspect row), with the row's own stored 95% interval;
``versus_best`` is the best model's median time over this one's (1 for the leader, 0.5 for half
as fast). ``hosts`` counts the hosts of that model that measured the case.
"""

from __future__ import annotations

import pandas as pd

from benchsite.tables.rows import RATES, best_rate
from benchsite.tables.speedups import without, work_keys

COLUMNS = [
    "workload",
    "case",
    "rank",
    "model",
    "device_kind",
    "host",
    "device",
    "median_s",
    "ci_low_s",
    "ci_high_s",
    "rate",
    "rate_unit",
    "versus_best",
    "hosts",
    "row_id",
]


def leaderboard(usable: pd.DataFrame) -> pd.DataFrame:
    """One row per (workload, device kind, model) on the reference case, fastest first;
    ``usable`` is :attr:`benchsite.tables.Tables.usable`."""
    if usable.empty:
        return pd.DataFrame(columns=COLUMNS)
    # only the columns a board reads: each board's split of all of them cost ~0.3 s in all
    read = [
        "workload",
        "device_kind",
        "host",
        "device",
        "axis_value",
        "params_text",
        "row_id",
        "median_s",
        "ci_low_s",
        "ci_high_s",
        *[c for c, _ in RATES if c in usable],
        *(["item_unit"] if "item_unit" in usable else []),  # what items_per_s counts
    ]
    keyed = usable[read].assign(  # a case: its world size, parameters and declared work
        _case=[
            f"{w}\x1f{without(p)}\x1f{work}"
            for w, p, work in zip(usable["world_size"], usable["p"], work_keys(usable), strict=True)
        ],
        _model=usable["device_model"].astype(str),
    )
    groups = keyed.groupby([keyed["workload"].astype(str), keyed["device_kind"].astype(str)])
    boards = [_board(workload, rows) for (workload, _), rows in groups]
    return pd.concat(boards, ignore_index=True) if boards else pd.DataFrame(columns=COLUMNS)


def _board(workload: str, rows: pd.DataFrame) -> pd.DataFrame:
    spread = rows.groupby("_case")["_model"].nunique()
    axis = rows.groupby("_case")["axis_value"].max().fillna(0)
    reference = (
        pd.DataFrame({"models": spread, "axis": axis})
        .sort_values(["models", "axis"], ascending=False, kind="stable")
        .index[0]
    )
    case = rows[rows["_case"] == reference].sort_values("median_s", kind="stable")
    best = case.drop_duplicates("_model", keep="first")
    hosts = case.groupby("_model")["host"].nunique()
    rate = best_rate(best)
    leader = float(best["median_s"].iloc[0])
    return pd.DataFrame(
        {
            "workload": workload,
            "case": str(best["params_text"].iloc[0]),
            "rank": range(1, len(best) + 1),
            "model": best["_model"].to_numpy(),
            "device_kind": best["device_kind"].astype(str).to_numpy(),
            "host": best["host"].astype(str).to_numpy(),
            "device": best["device"].astype(str).to_numpy(),
            "median_s": best["median_s"].to_numpy(float),
            "ci_low_s": best["ci_low_s"].to_numpy(float),
            "ci_high_s": best["ci_high_s"].to_numpy(float),
            "rate": best[rate[0]].to_numpy(float) if rate else float("nan"),
            "rate_unit": rate[1] if rate else "",
            "versus_best": leader / best["median_s"].to_numpy(float),
            "hosts": [int(hosts[m]) for m in best["_model"]],
            "row_id": best["row_id"].astype(str).to_numpy(),
        }
    )
