"""Reference results beside the user's own: the user's CPU against a reference's accelerator on
the same cases, what the reference lacks, and where each device model stands.

A reference's rows (:mod:`benchsite.store.reference`, column ``reference``) never enter the
user's own tables: they are prepared apart (:attr:`benchsite.tables.Tables.references`) and
only the tables here read them, each row of theirs labelled with the reference, its host, the
date it was measured and the benchsite version that measured it.

- :func:`cross_speedups`: every current ok CPU row of the user's store paired with the current
  ok accelerator rows of the references on the same case (workload, world size, parameters,
  declared work per call; :func:`benchsite.tables.speedups.speedups`), with its
  block-bootstrap interval. The two devices sat in different machines: the speedup compares
  machines, not only devices.
- :func:`cross_answers`: the one-screen answer of those pairs (:mod:`benchsite.tables.answers`:
  default variant, largest trustworthy size), one per user CPU host and workload, from the
  reference accelerator that shares the most cases with it.
- :func:`lacking`: per user CPU host and workload, the cases measured there that no reference
  accelerator measured.
- :func:`standing`: per workload and device kind, every device model of the store and the
  references on the leaderboard's case (:mod:`benchsite.tables.leaderboard`), with a rank that
  is not claimed inside the noise: ``rank`` is one more than the number of models whose 95%
  interval lies wholly below this one's (clearly faster), so models whose intervals overlap
  share a rank; ``percentile`` is the share of the other models this one is clearly faster
  than.
"""

from __future__ import annotations

import pandas as pd

from benchsite.tables import answers, leaderboard, speedups
from benchsite.tables.rows import current

REF_SEPARATOR = "\x1f"
LABEL_COLUMNS = ["reference", "ref_host", "ref_date", "ref_version"]
LACKING_COLUMNS = ["cpu_host", "workload", "cases", "lacking", "examples"]
STANDING_COLUMNS = [*leaderboard.COLUMNS, "reference", "own", "models", "percentile"]


def current_ok(references: pd.DataFrame) -> pd.DataFrame:
    """The current ok rows of the references (each reference's hosts apart)."""
    if references.empty:
        return references
    newest = current(references, per=["reference"])
    return newest[newest["ok"].to_numpy(bool)]


def cross_speedups(own_ok: pd.DataFrame, references_ok: pd.DataFrame) -> pd.DataFrame:
    """The user's CPU rows against the references' accelerator rows (module docstring), with
    the speedups' columns plus ``cpu_host`` and :data:`LABEL_COLUMNS` of the accelerator row."""
    columns = [*speedups.COLUMNS, "cpu_host", "cpu_cores", *LABEL_COLUMNS]
    if own_ok.empty or references_ok.empty:
        return pd.DataFrame(columns=columns)
    pairs = speedups.speedups(own_ok, references_ok)
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    own = own_ok.set_index(own_ok["row_id"].astype(str))
    cores = own["dev"].map(lambda info: info.get("affinity_cpus") or info.get("logical_cores"))
    unique = references_ok.drop_duplicates("row_id")  # a row two references both hold
    ref = unique.set_index(unique["row_id"].astype(str))
    gpu = pairs["gpu_row"]
    return pairs.assign(
        cpu_host=own["host"].astype(str).reindex(pairs["cpu_row"]).to_numpy(object),
        cpu_cores=cores.reindex(pairs["cpu_row"]).to_numpy(object),
        reference=ref["reference"].reindex(gpu).astype(str).to_numpy(object),
        ref_host=ref["host"].reindex(gpu).astype(str).to_numpy(object),
        ref_date=ref["timestamp"].reindex(gpu).to_numpy(),
        ref_version=ref["benchsite_version"].reindex(gpu).astype(str).to_numpy(object),
    )[columns]


def cross_answers(cross: pd.DataFrame) -> pd.DataFrame:
    """One answer per user CPU host and workload (module docstring): the columns of
    :func:`benchsite.tables.answers.answers` plus ``cpu_host``, ``cpu_label``, the two medians,
    ``cases`` (pairs of that accelerator) and :data:`LABEL_COLUMNS`."""
    extra = ["cpu_host", "cpu_label", "cpu_median_s", "gpu_median_s", "cpu_cores", "cases"]
    extra += LABEL_COLUMNS
    if cross.empty:
        return pd.DataFrame(columns=[*answers.COLUMNS, *extra])
    found = []
    for cpu_host, pairs in cross.groupby("cpu_host", sort=True):
        table = answers.answers(pairs, pd.DataFrame())
        per_pair = pairs.set_index("gpu_row")
        counts = pairs.groupby(["host", "device", "workload"]).size()
        table = table.assign(
            cpu_host=cpu_host,
            cases=[counts[(r.host, r.device, r.workload)] for r in table.itertuples()],
            **{c: per_pair[c].reindex(table["gpu_row"]).to_numpy() for c in extra[1:5]},
            **{c: per_pair[c].reindex(table["gpu_row"]).to_numpy() for c in LABEL_COLUMNS},
        )
        table = table.sort_values(["cases", "ref_date"], ascending=False, kind="stable")
        found.append(table.drop_duplicates("workload", keep="first"))
    joined = pd.concat(found, ignore_index=True)
    return joined.sort_values(["cpu_host", "workload"], kind="stable").reset_index(drop=True)


def lacking(own_ok: pd.DataFrame, cross: pd.DataFrame) -> pd.DataFrame:
    """Per user CPU host and workload: its current ok CPU cases (``cases``), how many of them
    no reference accelerator measured (``lacking``) and a few of their parameters
    (``examples``); workloads the references cover whole are left out."""
    cpu = own_ok[own_ok["device_kind"].astype(str) == "cpu"] if not own_ok.empty else own_ok
    if cpu.empty:
        return pd.DataFrame(columns=LACKING_COLUMNS)
    paired = set(cross["cpu_row"].astype(str)) if not cross.empty else set()
    found = []
    for (host, workload), rows in cpu.groupby([cpu["host"].astype(str), "workload"], sort=True):
        alone = rows[~rows["row_id"].astype(str).isin(paired)]
        if len(alone):
            examples = tuple(dict.fromkeys(alone["params_text"].astype(str)))[:3]
            found.append((host, str(workload), len(rows), len(alone), examples))
    return pd.DataFrame(found, columns=LACKING_COLUMNS)


def standing(own_usable: pd.DataFrame, references_usable: pd.DataFrame) -> pd.DataFrame:
    """Every device model of the store and the references ranked per workload and kind (module
    docstring): the leaderboard's columns plus ``reference`` (its label, ``None`` for the
    user's own), ``own``, ``models`` (on that board) and ``percentile``. A reference's model is
    named with its label (``NVIDIA H200 (reference h200)``), so that it never merges with the
    user's own device of that model."""
    frames = [own_usable.assign(reference=None)] if not own_usable.empty else []
    if not references_usable.empty:
        refs = references_usable["reference"].astype(str)
        frames.append(  # its row ids told apart from the user's own (a reference may hold them)
            references_usable.assign(
                device_model=references_usable["device_model"].astype(str)
                + " (reference "
                + refs
                + ")",
                row_id=refs + REF_SEPARATOR + references_usable["row_id"].astype(str),
            )
        )
    if not frames:
        return pd.DataFrame(columns=STANDING_COLUMNS)
    rows = pd.concat(frames, ignore_index=True)
    board = leaderboard.leaderboard(rows)
    if board.empty:
        return pd.DataFrame(columns=STANDING_COLUMNS)
    origin = rows.set_index(rows["row_id"].astype(str))["reference"]
    board = board.assign(
        reference=origin.reindex(board["row_id"]).to_numpy(object),
        row_id=[str(row).split(REF_SEPARATOR)[-1] for row in board["row_id"]],
    )
    board["own"] = board["reference"].isna()
    parts = [_ranked(group) for _, group in board.groupby(["workload", "device_kind"], sort=True)]
    return pd.concat(parts, ignore_index=True)[STANDING_COLUMNS]


def _ranked(board: pd.DataFrame) -> pd.DataFrame:
    """One board with ranks that ties within the intervals share, and percentiles."""
    low = board["ci_low_s"].fillna(board["median_s"]).to_numpy(float)
    high = board["ci_high_s"].fillna(board["median_s"]).to_numpy(float)
    faster = [int((high < low[i]).sum()) for i in range(len(board))]
    slower = [int((low > high[i]).sum()) for i in range(len(board))]
    others = max(len(board) - 1, 1)
    return board.assign(
        rank=[n + 1 for n in faster],
        models=len(board),
        percentile=[100.0 * n / others if len(board) > 1 else 100.0 for n in slower],
    )
