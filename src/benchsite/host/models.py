"""A user's own models: ``benchsite run --model MODULE:FACTORY`` and ``[[models]]``, read and
checked.

:func:`user_models` gives every model described in ``benchsite.toml`` and on the command line
(public as :func:`benchsite.config.user_models`); a plugin turns each into workloads (the
built-in ``workloads.user_models`` gives ``<name>-infer`` and ``<name>-train``). Only the
models' text travels to the worker processes, in :data:`MODELS_ENV` while a run lasts
(:func:`exported`); each worker imports the user's module itself. A malformed description (no
``:``, an unknown key, a batch that is no number) stops the run before anything is measured,
as any bad flag does.

A description on the command line is ``MODULE:FACTORY`` followed by ``,key=value`` settings;
in ``benchsite.toml`` a ``[[models]]`` table with ``factory`` and the same keys:

``name``      the workloads' name stem (default: the factory's name, ``_`` as ``-``);
``inputs``    ``[MODULE:]FUNCTION(batch)`` returning the model's positional inputs;
``shape``     instead of ``inputs``: one item's shape (``3x224x224``; a list in TOML), filled
              with ``torch.randn`` (or ``torch.randint(0, high)`` for an integer ``dtype``);
``dtype``     the inputs' dtype with ``shape`` (default ``float32``);
``high``      with an integer ``dtype``: the values are drawn from ``[0, high)``;
``loss``      ``[MODULE:]FUNCTION(output, targets)`` for training (default: the output's mean
              square); ``targets``: ``[MODULE:]FUNCTION(batch)`` giving its targets;
``batches``   the full profile's batch sizes (``1/8/32``; a list in TOML), default 1, 8, 32, 128;
``quick_batches`` the quick profile's, default 1, 4.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from benchsite.errors import BenchsiteError, ConfigError
from benchsite.host import config

BATCHES = (1, 8, 32, 128)
QUICK_BATCHES = (1, 4)
MODELS_ENV = "BENCHSITE_MODELS"  # the run's --model values, for its worker processes
KEYS = ("name", "inputs", "shape", "dtype", "high", "loss", "targets", "batches", "quick_batches")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_REF = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")

config.declare("models", config.ARRAY)  # [[models]]: checked by user_models


@dataclass(frozen=True)
class UserModel:
    """One model as the user described it (text only: it travels to the workers)."""

    name: str
    factory: str
    where: str
    inputs: str | None = None
    shape: tuple[int, ...] | None = None
    dtype: str = "float32"
    high: int | None = None
    loss: str | None = None
    targets: str | None = None
    batches: tuple[int, ...] = BATCHES
    quick_batches: tuple[int, ...] = QUICK_BATCHES


def user_models(cli_specs: Sequence[str] | None = None) -> list[UserModel]:
    """The models of ``benchsite.toml``'s ``[[models]]`` and of ``--model`` values (default:
    those of the run in progress, :data:`MODELS_ENV`), checked; :class:`BenchsiteError` (one
    line) for a malformed one."""
    if cli_specs is None:
        cli_specs = json.loads(os.environ.get(MODELS_ENV) or "[]")
    found = [from_table(table, index) for index, table in enumerate(_config_tables(), start=1)]
    found += [from_cli(spec) for spec in cli_specs]
    names = [model.name for model in found]
    for name in {name for name in names if names.count(name) > 1}:
        raise BenchsiteError(f"two models are named {name}: give one of them another name=")
    return found


def _config_tables() -> list[dict[str, Any]]:
    tables = config.load_config().get("models", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(f"{config.config_path()}: models must be [[models]] tables: fix it")
    return tables


def from_cli(spec: str) -> UserModel:
    """``MODULE:FACTORY[,key=value...]`` as a :class:`UserModel`."""
    factory, *settings = [part.strip() for part in spec.split(",")]
    table: dict[str, Any] = {"factory": factory}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep:
            raise BenchsiteError(f"--model {spec}: {setting!r} is no key=value setting")
        table[key.strip()] = value.strip()
    return _model(table, f"--model {spec}")


def from_table(table: dict[str, Any], index: int) -> UserModel:
    """One ``[[models]]`` table as a :class:`UserModel`."""
    return _model(dict(table), f"{config.config_path()} [[models]] #{index}")


def _model(table: dict[str, Any], where: str) -> UserModel:
    factory = str(table.pop("factory", ""))
    if ":" not in factory or not _REF.match(factory):
        raise BenchsiteError(f"{where}: give the factory as MODULE:FUNCTION, not {factory!r}")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise BenchsiteError(f"{where}: unknown key {unknown[0]} (known: {', '.join(KEYS)})")
    name = str(table.get("name") or factory.split(":")[1].replace("_", "-")).lower()
    if not _NAME.match(name):
        raise BenchsiteError(f"{where}: name {name!r}: use letters, digits, '-', '_' or '.'")
    if not table.get("inputs") and not table.get("shape"):
        raise BenchsiteError(f"{where}: say what the model takes: inputs=FUNCTION or shape=3x224")
    return UserModel(
        name=name,
        factory=factory,
        where=where,
        inputs=_ref(table, "inputs", where),
        shape=_ints(table, "shape", where, None),
        dtype=_dtype(table, where),
        high=_int_or_none(table, "high", where),
        loss=_ref(table, "loss", where),
        targets=_ref(table, "targets", where),
        batches=_ints(table, "batches", where, BATCHES),
        quick_batches=_ints(table, "quick_batches", where, QUICK_BATCHES),
    )


def _ref(table: dict[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _REF.match(value):
        raise BenchsiteError(f"{where}: {key} must be [MODULE:]FUNCTION, not {value!r}")
    return value


def _ints(table: dict[str, Any], key: str, where: str, default: Any) -> Any:
    value = table.get(key)
    if value is None:
        return default
    parts = re.split(r"[x/]", value) if isinstance(value, str) else value
    try:
        numbers = tuple(int(part) for part in parts)
    except (TypeError, ValueError):
        numbers = ()
    if not numbers or min(numbers) < 1:
        raise BenchsiteError(f"{where}: {key} must be positive whole numbers, not {value!r}")
    return numbers


def _int_or_none(table: dict[str, Any], key: str, where: str) -> int | None:
    value = table.get(key)
    return None if value is None else _ints(table, key, where, None)[0]


def _dtype(table: dict[str, Any], where: str) -> str:
    import torch

    dtype = str(table.get("dtype") or "float32")
    if not isinstance(getattr(torch, dtype, None), torch.dtype):
        raise BenchsiteError(f"{where}: dtype {dtype!r} is no torch dtype (float32, int64, ...)")
    if not getattr(torch, dtype).is_floating_point and table.get("high") is None:
        raise BenchsiteError(f"{where}: integer dtype {dtype} needs high= (values in [0, high))")
    return dtype


def exported(cli_specs: Sequence[str]) -> contextlib.AbstractContextManager[None]:
    """While the run lasts, ``--model`` values in :data:`MODELS_ENV` (a JSON list): the
    worker processes it starts inherit them, and so read the same models."""
    return _exported(tuple(cli_specs))


@contextlib.contextmanager
def _exported(cli_specs: tuple[str, ...]) -> Iterator[None]:
    before = os.environ.get(MODELS_ENV)
    if cli_specs:
        user_models(cli_specs)  # a malformed one stops the run here, before anything is measured
        os.environ[MODELS_ENV] = json.dumps(list(cli_specs))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(MODELS_ENV, None)
        else:
            os.environ[MODELS_ENV] = before
