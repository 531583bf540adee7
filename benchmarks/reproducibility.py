"""Do two runs of the same suite agree? The cases two stores both measured, compared.

For every case measured in both stores (matched on device kind, device model, case key and
world size; each store's newest ok row of it), per device kind: how many pairs are unflagged
in both stores (no flag that keeps a number from being headlined, :attr:`Tables.suspect_flags`,
no flag that widens its interval, :attr:`Tables.flags`' ``uncertain`` ones such as
``irreproducible`` and ``noisy``, and no ``host-bound`` flag: the host's launch rate, which moves between machines, sets such a
number), how many of those agree within 5% and how many have
overlapping 95% intervals; how many pairs differ by more than 10% and how many of those are
flagged in at least one store (the target: all); the same two counts over all pairs, flagged
ones included (each with its stored interval); then the worst ten pairs by ratio. The flags
are this version's validity flags (``prepare_results``) of the stored rows.

    python benchmarks/reproducibility.py STORE_A STORE_B
    python benchmarks/reproducibility.py examples/h200/results-a examples/h200/results-b --worst 20

Two runs in one store: name each side's runs by the start of their ids (``--runs-a``,
``--runs-b``, each a comma-separated list), e.g. the two H200 leases of the example store:

    python benchmarks/reproducibility.py examples/h200/results-2026-12-04 examples/h200/results-2026-12-04 \
        --runs-a 20261203T185206Z --runs-b 20261204T142814Z
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import pandas as pd

from benchsite.host.manager import load_plugins
from benchsite.site.analyse import prepare_results
from benchsite.store import parts as store
from benchsite.tables import Tables
from benchsite.units import format_seconds

MATCH = ["device_kind", "device_model", "case_key", "world_size"]
AGREE, DIFFER = 0.05, 0.10
HOST_BOUND = "host-bound"


@dataclass(frozen=True)
class Agreement:
    """One device kind's pairs: counts as the module docstring says."""

    kind: str
    pairs: int
    unflagged: int
    agree: int
    overlap: int
    differ: int
    differ_flagged: int
    agree_all: int
    overlap_all: int

    def line(self) -> str:
        share = lambda count: f"{count / self.unflagged:.0%}" if self.unflagged else "-"  # noqa: E731
        return (
            f"{self.kind}: {self.pairs} cases in both; {self.unflagged} unflagged in both: "
            f"{self.agree} ({share(self.agree)}) agree within {AGREE:.0%}, {self.overlap} "
            f"({share(self.overlap)}) have overlapping intervals; {self.differ} pairs differ by "
            f"more than {DIFFER:.0%}, {self.differ_flagged} of them flagged in at least one store; "
            f"of all {self.pairs} pairs, flagged ones included: {self.agree_all} agree within "
            f"{AGREE:.0%}, {self.overlap_all} have overlapping intervals"
        )


def current_rows(results: str, runs: tuple[str, ...] = ()) -> pd.DataFrame:
    """The store's newest ok row of each case, with this version's flags and ``suspect``; of
    the runs whose ids start with one of ``runs`` where any are named."""
    rows = store.read_results(results)
    if runs:
        rows = rows[rows["run_id"].astype(str).str.startswith(runs)]
    frame = prepare_results(load_plugins(()), rows)
    ok = Tables.of(frame).ok
    ok = ok.assign(device_model=ok["device_model"].fillna("").astype(str))
    return ok.sort_values("timestamp", kind="stable").drop_duplicates(MATCH, keep="last")


def paired(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The cases in both, with ``ratio`` (B over A), ``agree``, ``overlap``, ``flagged``."""
    keep = [*MATCH, "median_s", "ci_low_s", "ci_high_s", "suspect", "uncertain", "flags"]
    both = a[keep].merge(b[keep], on=MATCH, suffixes=("_a", "_b"))
    both = both.merge(a[[*MATCH, "workload", "params_text"]], on=MATCH)
    ratio = both["median_s_b"] / both["median_s_a"]
    return both.assign(
        ratio=ratio,
        size=(ratio.map(lambda r: max(r, 1 / r)) - 1),
        agree=(ratio - 1).abs() <= AGREE,
        overlap=(both["ci_low_s_a"] <= both["ci_high_s_b"])
        & (both["ci_low_s_b"] <= both["ci_high_s_a"]),
        flagged=both["suspect_a"].astype(bool)
        | both["suspect_b"].astype(bool)
        | both["uncertain_a"].astype(bool)
        | both["uncertain_b"].astype(bool)
        | both["flags_a"].map(lambda flags: HOST_BOUND in flags)
        | both["flags_b"].map(lambda flags: HOST_BOUND in flags),
    )


def agreement(pairs: pd.DataFrame) -> list[Agreement]:
    """One :class:`Agreement` per device kind (accelerators first)."""
    found = []
    for kind, group in sorted(pairs.groupby("device_kind"), key=lambda item: item[0] == "cpu"):
        clean = group[~group["flagged"]]
        differ = group[group["size"] > DIFFER]
        found.append(
            Agreement(
                str(kind),
                len(group),
                len(clean),
                int(clean["agree"].sum()),
                int(clean["overlap"].sum()),
                len(differ),
                int(differ["flagged"].sum()),
                int(group["agree"].sum()),
                int(group["overlap"].sum()),
            )
        )
    return found


def worst_lines(pairs: pd.DataFrame, count: int) -> list[str]:
    lines = []
    for row in pairs.sort_values("size", ascending=False).head(count).itertuples():
        flags = sorted(set(row.flags_a) | set(row.flags_b))
        lines.append(
            f"  {row.ratio:6.2f}x  {row.device_kind:<5} {row.workload:<18} "
            f"{str(row.params_text)[:46]:<46} {format_seconds(row.median_s_a):>9} -> "
            f"{format_seconds(row.median_s_b):>9}  {', '.join(flags) or 'unflagged'}"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store_a", help="results folder of the first run(s)")
    parser.add_argument("store_b", help="results folder of the second run(s)")
    parser.add_argument("--worst", type=int, default=10)
    for side in ("a", "b"):
        parser.add_argument(
            f"--runs-{side}",
            type=lambda text: tuple(part for part in text.split(",") if part),
            default=(),
            metavar="RUN[,RUN...]",
            help=f"only the runs of store {side.upper()} whose ids start with these",
        )
    args = parser.parse_args()
    pairs = paired(current_rows(args.store_a, args.runs_a), current_rows(args.store_b, args.runs_b))
    if pairs.empty:
        print(f"no case was measured in both {args.store_a} and {args.store_b}")
        return 1
    named = lambda path, runs: f"{path} (runs {', '.join(runs)})" if runs else path  # noqa: E731
    print(f"A = {named(args.store_a, args.runs_a)}, B = {named(args.store_b, args.runs_b)}")
    for found in agreement(pairs):
        print(found.line())
    print(f"\nworst {args.worst} pairs (B/A; flags of either store):")
    print("\n".join(worst_lines(pairs, args.worst)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
