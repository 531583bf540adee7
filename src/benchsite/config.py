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

A plugin reads a section with :func:`section` (``section("cost")``) and a nested value with
:func:`value`; a malformed file raises :class:`benchsite.errors.ConfigError` with one line that
names the file and the problem.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from benchsite.errors import ConfigError

ENV_VAR = "BENCHSITE_CONFIG"
FILE_NAME = "benchsite.toml"


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
