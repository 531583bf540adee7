"""What this machine lets a plugin use: the cores of this process (affinity and cgroup quota),
the same count the engine sizes its worker pools and distributed groups by."""

from __future__ import annotations

from benchsite._infra.cores import affinity_cores, cgroup_cpu_quota, usable_cores

__all__ = ["affinity_cores", "cgroup_cpu_quota", "usable_cores"]
