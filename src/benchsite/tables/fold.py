"""A fleet's hosts folded by hardware: one current row per (hardware, device, case) instead of
one per host.

A store of more than :data:`FLEET_HOSTS` hosts is a fleet (a lab's GPU boxes, CI runners,
cloud instances): hosts with the same hardware measure the same thing, and a finding, a chart
line or an evidence page per host says the same thing two hundred times. So the current rows of
the hosts that share a **hardware fingerprint** — the device models of the host, accelerators
and CPU — fold into one row per (hardware, device, workload, case): the row of the *median host*
(the host whose median time is the middle one of that hardware's hosts: a real measured row,
with its samples, its interval and its evidence link), with ``hosts`` (how many hosts of that
hardware measured the case) and ``hosts_low_s`` / ``hosts_high_s`` (the fastest and the slowest
host's median: the spread across hosts). Its ``host`` names the hardware and its host count,
``Synthetic H200 + Synthetic Xeon (50 hosts)`` (a hardware of one host keeps the host's name),
and ``median_host`` the host that measured the row.

Every table built on the current rows (speedups, crossovers, answers, scaling, effects, the
leaderboard) then works per hardware, and every analysis and page with it. The hosts stay
apart where a host is the question: every row in :attr:`~benchsite.tables.Tables.rows`, the
run pages, the compare page, the hardware page (devices), history (run against run).

A store of :data:`FLEET_HOSTS` hosts or fewer is not folded: its current rows are returned as
they are, so a one-host store, or a few machines compared, reads exactly as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchsite.tables.rows import CURRENT_ORDER, series

__all__ = ["FLEET_HOSTS", "device_models", "fold_hosts", "hardware_names", "is_fleet"]  # public

FLEET_HOSTS = 12  # more hosts than this make a fleet, folded by hardware (the charts' lines)
CASE = ["device", "workload", "case_key"]


def is_fleet(rows: pd.DataFrame, limit: int = FLEET_HOSTS) -> bool:
    """Whether ``rows`` come from more than ``limit`` hosts: a fleet, shown by hardware."""
    return rows["host"].nunique() > limit


def device_models(rows: pd.DataFrame) -> pd.Series:
    """Each row's device model, or its device kind where the model is unknown."""
    return rows["device_model"].where(rows["device_model"].notna(), rows["device_kind"])


def fold_hosts(current: pd.DataFrame, limit: int = FLEET_HOSTS) -> pd.DataFrame:
    """``current`` (the newest row of every host, device and case) folded by hardware (see the
    module docstring); as it is when it holds ``limit`` hosts or fewer."""
    if not is_fleet(current, limit):
        return current
    hardware = current["host"].map(hardware_names(current))
    ok = current["ok"].to_numpy(bool)
    # the median host of each (hardware, case) among the ok rows, else its newest row
    ordered = current.assign(hardware=hardware, failed=~ok, measured=ok.astype(int)).sort_values(
        ["hardware", *CASE, "failed", "median_s"], kind="stable"
    )
    groups = ordered.groupby(["hardware", *CASE], sort=False, observed=True)
    measured = groups["measured"].transform("sum")
    position = groups.cumcount()
    middle = np.where(measured > 0, (measured - 1) // 2, 0)
    chosen = ordered[(position == middle).to_numpy()].copy()
    spread = ordered[~ordered["failed"]].groupby(["hardware", *CASE], observed=True)["median_s"]
    lows, highs = spread.min(), spread.max()
    keys = pd.MultiIndex.from_frame(chosen[["hardware", *CASE]])
    chosen["hosts"] = measured[chosen.index].to_numpy()
    chosen["hosts_low_s"] = lows.reindex(keys).to_numpy()
    chosen["hosts_high_s"] = highs.reindex(keys).to_numpy()
    chosen["median_host"] = chosen["host"]
    chosen["host"] = chosen["hardware"]
    chosen["series"] = series(chosen)  # named as prepare names a line: hardware · device
    chosen = chosen.drop(columns=["hardware", "failed", "measured"])
    return chosen.sort_values(CURRENT_ORDER, kind="stable")


def hardware_names(current: pd.DataFrame) -> dict[str, str]:
    """Every host's hardware, by name: its device models, accelerators first, with the number
    of hosts that share them (``Synthetic H200 + Synthetic Xeon (50 hosts)``); a hardware of
    one host is named by the host."""
    devices = current.drop_duplicates(["host", "device_kind", "device_model"])
    models = device_models(devices)
    is_cpu = (devices["device_kind"].astype(str) == "cpu").to_numpy()  # sorts accelerators first
    per_host: dict[str, set[tuple[bool, str]]] = {}
    for host, cpu, model in zip(devices["host"], is_cpu, models.astype(str), strict=True):
        per_host.setdefault(str(host), set()).add((bool(cpu), model))
    prints = {
        host: " + ".join(model for _, model in sorted(found)) for host, found in per_host.items()
    }
    sharing = pd.Series(prints).value_counts()
    return {
        host: (f"{name} ({sharing[name]} hosts)" if sharing[name] > 1 else host)
        for host, name in prints.items()
    }
