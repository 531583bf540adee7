"""The engine's import graph: modules, floors, arrows and cycles.

Every module under ``src/benchsite`` (or the folder given) is parsed with :mod:`ast`; each
``import benchsite...`` and ``from benchsite... import ...`` (at the top, inside functions or
under ``TYPE_CHECKING``; relative ones resolved) becomes an arrow to the most specific engine
module it names. ``benchsite.plugins`` (the built-ins) is not part of the engine: an arrow to it
is kept, but its modules are not nodes.

- modules: the engine's modules;
- arrows: distinct (importer, imported) pairs between two engine modules, self-imports left out;
- cycles: the strongly connected components of more than one module;
- floors: the length of the longest chain of arrows, in modules, once each cycle is one node.

``python scripts/import_graph.py [SRC]`` prints the counts and each cycle, once for every import
and once for only those that run when a module is imported (not in functions, not under
``TYPE_CHECKING``); tests/test_layers.py uses the same functions (every import) to enforce the
layering rule of docs/architecture.md.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "benchsite"
DEFAULT_SOURCE = Path(__file__).resolve().parent.parent / "src" / PACKAGE


@dataclass(frozen=True)
class Arrow:
    """One import: ``importer`` imports ``imported`` (``names``: what ``from ... import`` took)."""

    importer: str
    imported: str
    line: int
    names: tuple[str, ...] = ()


def module_names(root: Path, package: str = PACKAGE) -> dict[str, Path]:
    """Each module's dotted name under ``root`` (a package folder named ``package``) → its file."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([package, *parts])] = path
    return found


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import names, relative ones resolved against ``module``."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if path.name != "__init__.py":
        parts.pop()
    parts = parts[: len(parts) - node.level + 1]
    return ".".join([*parts, node.module] if node.module else parts)


def _loaded_at_import(tree: ast.Module) -> Iterator[ast.AST]:
    """The import statements that run when the module is imported: at its top level (inside a
    top-level ``try`` or ``if`` too), not in functions and not under ``TYPE_CHECKING``."""
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for field in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, field, []))
        elif isinstance(node, ast.ExceptHandler):
            stack.extend(node.body)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _targets(
    module: str, path: Path, known: set[str], top_only: bool = False
) -> Iterator[tuple[str, int, tuple]]:
    """(imported module, line, names) for every import of ``package`` in one file (with
    ``top_only``, only those that run when it is imported)."""
    tree = ast.parse(path.read_text(), str(path))
    for node in _loaded_at_import(tree) if top_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, ()
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known or sub.startswith(f"{PACKAGE}.plugins."):
                    yield sub, node.lineno, ()
                else:
                    yield base, node.lineno, (alias.name,)


def arrows(modules: dict[str, Path], top_only: bool = False) -> list[Arrow]:
    """Every import of the package's modules (and of ``benchsite.plugins``) by the modules;
    with ``top_only``, only those that run when a module is imported."""
    known = set(modules)
    found = []
    for module, path in modules.items():
        for target, line, names in _targets(module, path, known, top_only):
            if target == PACKAGE or target.startswith(f"{PACKAGE}."):
                found.append(Arrow(module, _most_specific(target, known), line, names))
    return found


def _most_specific(target: str, known: set[str]) -> str:
    """``target`` if it is a module, else the longest module name it starts with."""
    if target.startswith(f"{PACKAGE}.plugins"):
        return target
    parts = target.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts) or target


def edges(found: list[Arrow], modules: dict[str, Path]) -> set[tuple[str, str]]:
    """The distinct arrows between two different engine modules."""
    return {
        (a.importer, a.imported)
        for a in found
        if a.importer != a.imported and a.imported in modules
    }


def cycles(nodes: set[str], links: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    following: dict[str, list[str]] = {node: [] for node in nodes}
    for start, end in links:
        following[start].append(end)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in following[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return sorted(found)


def floors(nodes: set[str], links: set[tuple[str, str]]) -> int:
    """The longest chain of imports, counted in modules, with each cycle taken as one module."""
    merged = {node: node for node in nodes}
    for component in cycles(nodes, links):
        for node in component:
            merged[node] = component[0]
    below: dict[str, set[str]] = {merged[n]: set() for n in nodes}
    for start, end in links:
        if merged[start] != merged[end]:
            below[merged[start]].add(merged[end])
    height: dict[str, int] = {}

    def floor(node: str) -> int:
        if node not in height:
            height[node] = 1 + max((floor(n) for n in below[node]), default=0)
        return height[node]

    return max((floor(node) for node in below), default=0)


def counts(source: Path = DEFAULT_SOURCE, top_only: bool = False) -> dict[str, object]:
    """The graph's figures for the engine under ``source``."""
    modules = module_names(source)
    links = edges(arrows(modules, top_only), modules)
    found = cycles(set(modules), links)
    return {
        "modules": len(modules),
        "floors": floors(set(modules), links),
        "arrows": len(links),
        "cycles": found,
    }


def main(argv: list[str]) -> int:
    paths = [arg for arg in argv[1:] if not arg.startswith("--")]
    source = Path(paths[0]) if paths else DEFAULT_SOURCE
    for top_only, which in ((False, "every import"), (True, "imports run at import time")):
        figures = counts(source, top_only)
        found = figures["cycles"]
        print(
            f"{source} ({which}): {figures['modules']} modules, {figures['floors']} floors, "
            f"{figures['arrows']} arrows, {len(found)} cycles"
        )
        for component in found:
            print("  cycle:", " <-> ".join(component))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
