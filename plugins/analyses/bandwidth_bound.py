"""How close does a memory-bound case run to its physical limit? Each one (a decoder's token
generation, most of all at batch 1) beside its device's measured memory bandwidth.

The numbers are :attr:`benchsite.tables.Tables.bandwidth_shares`: the bytes a call must read
(every weight once per generated token plus the KV cache so far) over its median time, as a
share of the best GB/s the same device reached in a buffer copy. A share near 100% means the
generation cannot get much faster on this device without reading fewer bytes (a smaller
precision, a quantized model); far below it, something else (kernel launches, the host) holds
it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchsite import Analysis, Finding, hookimpl
from benchsite.toolkit.findings import case_text, finding, metric_value, percent
from benchsite.units import format_items_rate, format_per_item, format_rate_in, item_of

if TYPE_CHECKING:
    from benchsite.tables import Tables


@hookimpl
def register_analyses() -> list[Analysis]:
    return [
        Analysis(
            name="bandwidth-bound",
            description="Memory-bound cases (LLM generation) as a share of the device's "
            "measured memory bandwidth.",
            analyze=bandwidth_findings,
        )
    ]


def bandwidth_findings(tables: Tables) -> list[Finding]:
    shares = tables.bandwidth_shares
    if shares.empty:
        return []
    rows = tables.ok.set_index("row_id")
    return [_finding(share, rows.loc[share.row_id]) for share in shares.itertuples()]


def _finding(share: Any, row: Any) -> Finding:
    case = case_text(row["p"])
    item = row.get("item_unit")
    latency = metric_value(row["m"], "token_p50_s")  # a generation case's per-token latency
    per_item = f" ({format_per_item(latency, item)}, p50)" if latency else ""
    answer = (
        f"{format_items_rate(row['items_per_s'], item)}{per_item} reading "
        f"{format_rate_in(share.gbps, 'GB/s')}: {percent(share.share)} of the "
        f"{format_rate_in(share.bandwidth_gbps, 'GB/s')} this device reached copying memory, "
        f"the bound on how fast it can read the weights and KV cache each {item_of(item)} needs."
    )
    return finding(
        "bandwidth-bound",
        [share.host, share.device, share.workload, case],
        f"{share.workload} ({case}) on {share.device}: share of the bandwidth bound",
        answer,
        numbers={"share": share.share, "gbps": share.gbps, "bound_gbps": share.bandwidth_gbps},
        evidence=[share.row_id],
        scope={"hosts": [share.host], "devices": [share.device], "workloads": [share.workload]},
        strength="moderate",
        workload=share.workload,
    )
