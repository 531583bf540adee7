"""``benchsite.toml``: the optional configuration file, read by plugins that need settings.

Where it is looked for, first found wins:

1. the path in the environment variable ``BENCHSITE_CONFIG`` (an error if it does not exist);
2. ``benchsite.toml`` in the current folder.

No file means an empty configuration: everything that reads it has a default or reports itself
unavailable. The file is TOML; the sections the built-ins read are documented in
``benchsite.toml.example`` at the top of the repository:

``[cost.usd_per_hour]``
    Price of one device-hour, keyed by device name (``"cuda:0"``), device model
    (``"NVIDIA H200"``) or device kind (``"cpu"``, ``"cuda"``), most specific first. Read by the
    ``cost`` collector.
``[max_batch]``
    ``cpu_memory_budget_gib``: how much RAM the ``max-batch`` workload may use on the CPU
    (default: half of the memory available when the case starts).
``[[models]]``
    A user's own models to measure, one table each (:mod:`benchsite.toolkit.user_models`).

A plugin reads a section with :func:`section` (``section("cost")``) and a nested value with
:func:`value`; a malformed file raises :class:`benchsite.errors.ConfigError` with one line that
names the file and the problem.

A plugin that reads a section declares it, at import, with :func:`declare`: each key and the type
of its value (``float`` means any number; ``{"*": float}`` a table of numbers with any keys).
``benchsite run`` calls :func:`check` before measuring: a key no plugin declared (a typo) or a
value of the wrong type stops the run with one line naming the file, the key and its line.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchsite.errors import ConfigError

ENV_VAR = "BENCHSITE_CONFIG"
FILE_NAME = "benchsite.toml"
Spec = type | dict[str, Any]
ARRAY = "array of tables"  # a section declared so ([[models]]) is checked by the plugin reading it
_declared: dict[str, dict[str, Spec] | str] = {}
_command_line: dict[str, tuple[str, ...]] = {}


def declare(name: str, keys: dict[str, Spec] | str) -> None:
    """Declare the section ``[name]`` a plugin reads: its keys and the type of each value; or,
    with :data:`ARRAY`, an array of tables (``[[name]]``) that its reader checks itself."""
    if isinstance(keys, str):
        _declared[name] = keys
        return
    known = _declared.get(name, {})
    _declared[name] = {**(known if isinstance(known, dict) else {}), **keys}


def set_command_line(option: str, values: Sequence[str]) -> None:
    """Record the values of a repeatable command-line option (``--model``) for the plugins that
    read it; the plugin host sets them in every process that loads plugins."""
    _command_line[option] = tuple(values)


def command_line(option: str) -> tuple[str, ...]:
    """The values given to command-line option ``option`` in this command (empty if none)."""
    return _command_line.get(option, ())


def check(path: Path | None = None) -> None:
    """Raise :class:`ConfigError` (file, key, line) for an undeclared key or a wrong type."""
    path = path or config_path()
    if path is None:
        return
    for name, found in load_config(path).items():
        if name not in _declared:
            known = ", ".join(sorted(_declared)) or "none"
            _fail(path, [name], f"unknown section (known: {known}): fix the name or remove it")
        spec = _declared[name]
        if isinstance(spec, dict):  # an ARRAY is checked by its reader
            _check_table(path, [name], found, spec)


def _check_table(path: Path, where: list[str], found: Any, spec: dict[str, Spec]) -> None:
    if not isinstance(found, dict):
        _fail(path, where, f"must be a table, not {_kind(found)}: write [{'.'.join(where)}]")
    for key, item in found.items():
        expected = spec.get(key, spec.get("*"))
        if expected is None:
            known = ", ".join(sorted(spec))
            _fail(path, [*where, key], f"unknown key (known: {known}): fix the typo or remove it")
        if isinstance(expected, dict):
            _check_table(path, [*where, key], item, expected)
        elif not _is(item, expected):
            _fail(path, [*where, key], f"must be {_NAMES[expected]}, not {_kind(item)} {item!r}")


_NAMES = {float: "a number", int: "a whole number", str: "text", bool: "true or false"}


def _is(item: Any, expected: type) -> bool:
    if isinstance(item, bool) and expected is not bool:
        return False
    return isinstance(item, int | float) if expected is float else isinstance(item, expected)


def _kind(item: Any) -> str:
    return {dict: "a table", list: "a list", str: "text", bool: "a boolean"}.get(
        type(item), type(item).__name__
    )


def _fail(path: Path, keys: list[str], problem: str) -> None:
    line = _line_of(path, keys)
    where = f"{path}:{line}" if line else str(path)
    raise ConfigError(f"{where}: {'.'.join(keys)}: {problem}")


def _line_of(path: Path, keys: list[str]) -> int | None:
    """The line defining ``keys`` (a table header, a key under it, or a dotted key)."""
    text = path.read_text(encoding="utf-8").splitlines()
    table: list[str] = []
    for number, raw in enumerate(text, start=1):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("["):
            table = _parts(line.strip("[] "))
            if table == keys:
                return number
        elif "=" in line:
            full = table + _parts(line.split("=", 1)[0])
            if full == keys[: len(full)]:
                return number
    return None


def _parts(dotted: str) -> list[str]:
    return [part.strip().strip("\"'") for part in dotted.split(".")]


def config_path() -> Path | None:
    """The configuration file in use, or ``None`` when there is none."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        path = Path(configured).expanduser()
        if not path.is_file():
            raise ConfigError(f"{ENV_VAR}={configured} does not exist: fix or unset the variable")
        return path
    local = Path.cwd() / FILE_NAME
    return local if local.is_file() else None


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The whole configuration as a dict (empty without a file)."""
    path = path or config_path()
    if path is None:
        return {}
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}): fix the file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {exc.start} cannot be decoded): save it as UTF-8"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror}): check the path") from None


def section(name: str, path: Path | None = None) -> dict[str, Any]:
    """One top-level table of the configuration (empty when absent)."""
    found = load_config(path).get(name, {})
    if not isinstance(found, dict):
        raise ConfigError(f"[{name}] in {path or config_path()} must be a table: fix the file")
    return found


def value(keys: str, default: Any = None, path: Path | None = None) -> Any:
    """A nested value by dotted ``keys`` (``"max_batch.cpu_memory_budget_gib"``), or ``default``."""
    found: Any = load_config(path)
    for key in keys.split("."):
        if not isinstance(found, dict) or key not in found:
            return default
        found = found[key]
    return found
