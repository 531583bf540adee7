"""The periodic-report recipes (docs/fleet.md, examples/fleet/) call benchsite with options it
has: every `benchsite run|build|compare|results` command in them parses with the real CLI."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

from benchsite.cli import app as cli

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "docs" / "fleet.md", *sorted((ROOT / "examples" / "fleet").iterdir())]
COMMAND = re.compile(r"benchsite ((?:run|build|compare|results)\b[^\n`|;#]*)")
PLACEHOLDERS = [
    (re.compile(r"\$\{\{[^}]*\}\}"), "value"),  # GitHub expressions
    (re.compile(r"\$\([^)]*\)"), "value"),  # shell command substitution
    (re.compile(r"\$\{?[A-Za-z_]+\}?"), "value"),  # shell and systemd variables
]


def commands() -> list[tuple[str, list[str]]]:
    found = []
    for source in SOURCES:
        text = re.sub(r"\\\n\s*", " ", source.read_text())  # continued lines joined
        for match in COMMAND.finditer(text):
            line = match.group(1)
            for pattern, value in PLACEHOLDERS:
                line = pattern.sub(value, line)
            args = shlex.split(line.split(" >> ")[0])
            found.append((f"{source.name}: benchsite {line.strip()}", args))
    return found


@pytest.mark.parametrize("args", [pytest.param(args, id=where) for where, args in commands()])
def test_every_recipe_command_parses(args, tmp_path):
    args = [
        str(tmp_path) if prev == "--results" else arg  # no object store needed to parse
        for prev, arg in zip(["", *args[:-1]], args, strict=True)
    ]
    group = typer.main.get_command(cli.app)
    command = group.commands[args[0]]
    command.make_context(args[0], args[1:])  # raises click's UsageError on a wrong option


def test_the_recipes_name_the_commands_they_rely_on():
    found = " ".join(where for where, _ in commands())
    for needed in (
        "benchsite run --full",
        "benchsite build --results",
        "--fail-on-regression",
        "--label",
        "benchsite compare",
    ):
        assert needed in found, needed
