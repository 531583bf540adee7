"""What the recording test plugins (``first.py``, ``second.py``) share: every hook, recording
each call (and the calls of what its records hold) as one JSON line ``{"hook", "plugin",
"pid"}`` in the file ``$BENCHSITE_TEST_RECORD``, so that ``tests/test_hook_order.py`` can check
each hook's documented order and call count in a real run and a real build. Not a plugin
itself (a ``-p`` folder skips modules starting with ``_``); never shipped."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from benchsite import Analysis, Case, Collector, Page, RenderedPage, Workload, hookimpl


def hooks(name: str) -> dict[str, Callable[..., Any]]:
    """Every hook, implemented by the plugin ``name``."""

    def record(hook: str) -> None:
        line = json.dumps({"hook": hook, "plugin": name, "pid": os.getpid()})
        with open(os.environ["BENCHSITE_TEST_RECORD"], "a", encoding="utf-8") as out:
            out.write(line + "\n")  # one short append: whole lines, whichever process writes

    def _setup(device, params):
        record("setup")
        return Case(run=lambda: None)

    def _start(device):
        record("collector.start")
        return dict

    @hookimpl
    def register_devices():
        record("register_devices")
        return []

    @hookimpl
    def register_workloads():
        record("register_workloads")
        return [
            Workload(
                name=f"record-{name}",
                description="does nothing",
                setup=_setup,
                params={"n": [1]},
                devices=("cpu",),
            )
        ]

    @hookimpl
    def register_collectors():
        record("register_collectors")
        return [Collector(name=f"record-{name}", description="nothing", start=_start)]

    @hookimpl
    def register_analyses():
        record("register_analyses")

        def analyze(tables):
            record("analyze")
            return []

        return [Analysis(name=f"record-{name}", description="records", analyze=analyze)]

    @hookimpl
    def register_pages():
        record("register_pages")

        def render(site):
            record("render")
            return [RenderedPage(f"record-{name}.txt", "recorded")]

        return [Page(name=f"record-{name}", nav=f"Record {name}", render=render)]

    @hookimpl
    def register_flags():
        record("register_flags")
        return []

    @hookimpl
    def prepare_jinja_env(env):
        record("prepare_jinja_env")

    @hookimpl
    def prepare_results(results):
        record(f"prepare_results flags={'flags' in results.columns}")

    return {
        hook.__name__: hook
        for hook in (
            register_devices,
            register_workloads,
            register_collectors,
            register_analyses,
            register_pages,
            register_flags,
            prepare_jinja_env,
            prepare_results,
        )
    }
