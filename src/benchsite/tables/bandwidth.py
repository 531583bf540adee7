"""Memory-bound cases beside their physical limit: each one's GB/s as a share of the device's
measured memory bandwidth.

A case says it is bound by memory bandwidth with the metric ``memory_bound`` = 1 and declares
as its ``bytes`` what one call must read (a decoder's generation step reads every weight and
the KV cache so far). The device's bandwidth is the best GB/s measured on the same host and
device by a case that is no such case (a buffer copy, which counts read plus write), leaving
out rows the validity flags say measured something else (a cache, launch overhead). Where the
store holds no such row for a device, its memory-bound cases have no share.
"""

from __future__ import annotations

from collections.abc import Collection

import pandas as pd

COLUMNS = ["host", "device", "workload", "row_id", "gbps", "bandwidth_gbps", "share"]


def bandwidth_shares(ok: pd.DataFrame, not_a_peak: Collection[str]) -> pd.DataFrame:
    """One row per ok memory-bound row: its GB/s, the device's measured bandwidth, the share.

    ``not_a_peak`` holds the flag codes whose rates are no device's peak (``Flag.not_a_peak``).
    """
    not_a_peak = frozenset(not_a_peak)
    if ok.empty:
        return pd.DataFrame(columns=COLUMNS)
    bound = ok["m"].map(lambda metrics: bool((metrics or {}).get("memory_bound")))
    measured = ok["gbps"].notna().to_numpy(bool)
    trusted = ~ok["flags"].map(lambda codes: bool(not_a_peak & set(codes))).to_numpy(bool)
    reference = ok[measured & trusted & ~bound.to_numpy(bool)]
    best = reference.groupby(["host", "device"], observed=True)["gbps"].max()
    cases = ok[measured & bound.to_numpy(bool)]
    if cases.empty or best.empty:
        return pd.DataFrame(columns=COLUMNS)
    keys = pd.MultiIndex.from_arrays([cases["host"].astype(str), cases["device"].astype(str)])
    best.index = pd.MultiIndex.from_arrays(
        [best.index.get_level_values(0).astype(str), best.index.get_level_values(1).astype(str)]
    )
    limit = best.reindex(keys).to_numpy(float)
    table = cases[["host", "device", "workload", "row_id", "gbps"]].assign(
        bandwidth_gbps=limit, share=cases["gbps"].to_numpy(float) / limit
    )
    return table[table["bandwidth_gbps"].notna()].reset_index(drop=True)[COLUMNS]
