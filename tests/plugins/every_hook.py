"""A test plugin that implements every hook, so a change to the contract that breaks plugins
breaks this test first (datasette's tests/plugins/my_plugin.py)."""

from __future__ import annotations

import time

from benchsite import (
    Analysis,
    Case,
    Collector,
    Device,
    Finding,
    Flag,
    Page,
    RenderedPage,
    Timer,
    Workload,
    hookimpl,
)


class WallTimer(Timer):
    def start(self) -> None:
        self.t0 = time.perf_counter()

    def stop(self) -> None:
        self.t1 = time.perf_counter()

    def elapsed(self) -> float:
        return self.t1 - self.t0


@hookimpl
def register_devices():
    return [
        Device(
            name="every:0", kind="every", info={"model": "test"}, fingerprint="e", timer=WallTimer
        )
    ]


@hookimpl
def register_workloads():
    setup = lambda device, params: Case(run=lambda: sum(range(100)), items=100)  # noqa: E731
    return [
        Workload(
            name="every-sum",
            description="sum(range(100))",
            setup=setup,
            params={"n": [1]},
            devices=("cpu", "every"),
        )
    ]


@hookimpl
def register_collectors():
    return [
        Collector(name="every", description="constant", start=lambda device: lambda: {"one": 1.0})
    ]


@hookimpl
def register_analyses():
    def analyze(results):
        ok = results[results["workload"] == "every-sum"]
        return [
            Finding(
                id="every-rows",
                kind="note",
                title="Rows",
                answer=f"{len(ok)} rows",
                evidence=tuple(ok["row_id"]),
            )
        ]

    return [Analysis(name="every-count", description="counts rows", analyze=analyze)]


@hookimpl
def register_pages():
    return [Page(name="every", nav="Every", render=lambda site: [RenderedPage("every.txt", "hi")])]


@hookimpl
def prepare_jinja_env(env):
    env.filters["every"] = lambda value: f"every {value}"


@hookimpl
def prepare_results(results):
    results = results.copy()
    results["every"] = True
    return results


@hookimpl
def register_flags():
    return [Flag(name="every-odd", description="set on every row by this test", suspect=True)]
