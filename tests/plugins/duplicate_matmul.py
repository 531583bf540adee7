"""A plugin that registers a workload name the built-ins already use."""

from __future__ import annotations

from benchsite import Case, Workload, hookimpl


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="matmul",
            description="clashes with the built-in",
            setup=lambda device, params: Case(run=lambda: None),
            params={"n": [1]},
        )
    ]
