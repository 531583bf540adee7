"""The engine's layers (docs/architecture.md, "The layers"): no import cycle, no arrow from a
lower stage up, no engine module naming a built-in plugin, ``benchsite run`` loading nothing of
the site or the tables, and built-in plugins written against public names only.

The graph is read from the source with ``ast`` (scripts/import_graph.py): every import counts,
at the top of a module, inside a function or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "benchsite"
PLUGINS = ROOT / "plugins"

_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
graph = sys.modules["import_graph"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graph)

# low to high: a module may import its own stage and the stages before it
STAGES = ("contract", "_infra", "host", "store", "measure", "tables", "site", "toolkit", "cli")
CONTRACT = {"hookspecs", "records", "errors", "units", "stats", "version"}
# top-level modules that are the public face of a stage: benchsite.config re-exports the host's
# configuration functions for plugins
FACES = {"config": "host"}
# the public modules a built-in plugin may import names from (each name in the module's
# __all__); a submodule listed in a public module's __all__ is public too, and so is the toolkit
PUBLIC = (
    "benchsite",
    "benchsite.units",
    "benchsite.errors",
    "benchsite.config",
    "benchsite.tables",
    "benchsite.site",
    "benchsite.toolkit",
)


def stage(module: str) -> str:
    """The stage of an engine module: its subpackage, or the contract for the top modules."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in CONTRACT:
        return "contract"
    if parts[1] == "__main__":
        return "cli"
    return FACES.get(parts[1], parts[1])


ENGINE = graph.module_names(SOURCE)
ARROWS = graph.arrows(ENGINE)
EDGES = graph.edges(ARROWS, ENGINE)


def test_every_engine_module_has_a_stage():
    unknown = {m: stage(m) for m in ENGINE if stage(m) not in (*STAGES, "testing")}
    assert not unknown, f"modules outside the stages of docs/architecture.md: {unknown}"


def test_the_engine_has_no_import_cycle():
    assert graph.cycles(set(ENGINE), EDGES) == []


def test_no_stage_imports_a_stage_above_it():
    rank = {name: at for at, name in enumerate(STAGES)}
    upward = [
        f"{a.importer} (line {a.line}) imports {a.imported}"
        for a in ARROWS
        if a.imported in ENGINE
        and stage(a.importer) != "testing"
        and rank[stage(a.imported)] > rank[stage(a.importer)]
    ]
    assert upward == []


def test_only_the_toolkit_itself_and_the_testing_plugin_import_the_toolkit():
    # the toolkit sits on the site for plugins: the engine's own stages never need it
    users = {a.importer for a in ARROWS if stage(a.imported) == "toolkit"}
    assert {stage(m) for m in users} <= {"toolkit", "testing"}, sorted(users)


def test_no_engine_module_imports_a_built_in_plugin():
    naming = [f"{a.importer} imports {a.imported}" for a in ARROWS if ".plugins" in a.imported]
    assert naming == []


def test_the_counts_script_reports_the_graph():
    finished = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "import_graph.py"), str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 0, finished.stderr
    assert f"{len(ENGINE)} modules" in finished.stdout
    assert f"{len(EDGES)} arrows, 0 cycles" in finished.stdout


def test_the_cycle_finder_finds_a_cycle():
    links = {("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}
    assert graph.cycles({"a", "b", "c", "d"}, links) == [["a", "b", "c"]]
    assert graph.floors({"a", "b", "c", "d"}, links) == 2


# -- benchsite run loads nothing of the site or the tables ---------------------------------------

RUN_PATH = """
import contextlib, io, json, sys
from benchsite.cli import app
from benchsite.host.manager import load_plugins
from benchsite.measure import runner, worker
load_plugins(())
sys.argv = ["benchsite", "run", "--help"]
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    app.main()
loaded = sorted(m for m in sys.modules if m.startswith(("benchsite.site", "benchsite.tables")))
print(json.dumps(loaded))
"""


def test_the_run_path_loads_no_site_or_tables_module():
    finished = subprocess.run(
        [sys.executable, "-c", RUN_PATH], capture_output=True, text=True, timeout=120
    )
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout.splitlines()[-1]) == []


# -- built-in plugins: only public names, never another built-in ---------------------------------

BUILT_INS = graph.module_names(PLUGINS, "benchsite.plugins")
PLUGIN_ARROWS = graph.arrows({**ENGINE, **BUILT_INS})
PLUGIN_ARROWS = [a for a in PLUGIN_ARROWS if a.importer in BUILT_INS]


def is_public(module: str) -> bool:
    """Whether plugins may import ``module``: a public module, a toolkit module, or one that a
    public module lists in its ``__all__``."""
    parent, _, name = module.rpartition(".")
    if module in PUBLIC or parent == "benchsite.toolkit":
        return True
    return bool(parent) and is_public(parent) and name in public_names(parent)


def public_names(module: str) -> set[str]:
    """What ``module`` declares public: its ``__all__``, when it is a public module."""
    if not is_public(module):
        return set()
    return set(getattr(importlib.import_module(module), "__all__", ()))


def test_no_built_in_plugin_imports_another():
    # a plugin package's own __init__ is not a plugin; a module of plugins/ importing it is fine
    crossing = [
        f"{a.importer} (line {a.line}) imports {a.imported}"
        for a in PLUGIN_ARROWS
        if a.imported in BUILT_INS and a.imported != "benchsite.plugins"
    ]
    assert crossing == []


def _private_import(arrow) -> str | None:
    """Why ``arrow`` (a built-in's import of the engine) is not public, or None."""
    if arrow.names:
        hidden = set(arrow.names) - public_names(arrow.imported)
        return f"{sorted(hidden)} from {arrow.imported}" if hidden else None
    return None if is_public(arrow.imported) else f"the module {arrow.imported}"


def test_built_in_plugins_import_only_public_engine_names():
    private = []
    for arrow in PLUGIN_ARROWS:
        if arrow.imported in ENGINE and (why := _private_import(arrow)):
            private.append(f"{arrow.importer} (line {arrow.line}): {why}")
    assert private == []


@pytest.mark.parametrize("module", sorted(m for m in ENGINE if m.startswith("benchsite.toolkit")))
def test_each_toolkit_module_says_what_it_offers(module):
    loaded = importlib.import_module(module)
    assert loaded.__doc__ and loaded.__doc__.strip(), f"{module} has no docstring"
    if module != "benchsite.toolkit":
        assert loaded.__all__, f"{module} has no __all__"
        missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]
        assert missing == [], f"{module}.__all__ names what it lacks"
