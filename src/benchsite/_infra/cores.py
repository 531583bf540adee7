"""The one count of usable cores: the CPUs this process may run on (its affinity), capped by
the CPU quota of its cgroup (a container given 2 CPUs of a 16-core machine may use 2)."""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def usable_cores() -> int:
    """The cores this process may keep busy: :func:`affinity_cores`, capped by
    :func:`cgroup_cpu_quota` rounded down; at least 1."""
    affinity = affinity_cores()
    quota = cgroup_cpu_quota()
    return max(1, min(affinity, math.floor(quota) if quota else affinity))


def affinity_cores() -> int:
    """The CPUs this process may be scheduled on (all logical CPUs where the platform cannot
    restrict a process)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cgroup_cpu_quota(root: Path | None = None) -> float | None:
    """CPUs allowed by the cgroup mounted at ``root`` (:data:`CGROUP`; v2 ``cpu.max`` or v1
    quota/period), or ``None`` if unlimited or not Linux."""
    root = CGROUP if root is None else root
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return None if quota_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None
