"""A user's own model as a workload: ``benchsite run --model MODULE:FACTORY`` and ``[[models]]``.

Each model given on the command line (:func:`benchsite.config.command_line` ``("model")``) or
in ``benchsite.toml`` is registered by the built-in plugin ``workloads.user_models`` as two
workloads, ``<name>-infer`` and ``<name>-train``, with cases the engine derives: a
batch sweep in fp32, each other precision at one batch (those a device cannot run are skipped
with the reason), and ``torch.compile`` in the full profile. Only the model's text description
travels to the worker processes; the worker imports the user's module itself (from the current
folder or ``PYTHONPATH``) when a case is set up. What is wrong with a model — a module that
does not import, a factory that raises or returns no module, inputs that do not fit — is one
line naming the model, stored as each of its cases' ``error`` row; the run goes on. A
malformed description (no ``:``, an unknown key, a batch that is no number) stops the run
before anything is measured, as any bad flag does.

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
``quick_batches`` the quick profile's, default 1, 4;
``item``      what one item of a batch is, a singular noun (``image``, ``sequence``): the
              throughput then reads ``images/s``; default ``item`` (``items/s``).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchsite import config
from benchsite.errors import ConfigError
from benchsite.host.config import ARRAY, load_config
from benchsite.records import Case, Device, Workload
from benchsite.toolkit.modules import ModelError, ModuleSpec, module_case
from benchsite.units import ITEM, is_item_noun, items_unit

__all__ = ["UserModel", "from_cli", "from_table", "setup_case", "user_models", "workloads"]

BATCHES = (1, 8, 32, 128)
QUICK_BATCHES = (1, 4)
OTHER_PRECISIONS = ("tf32", "bf16", "fp16")
KEYS = (
    "name",
    "inputs",
    "shape",
    "dtype",
    "high",
    "loss",
    "targets",
    "batches",
    "quick_batches",
    "item",
)
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_REF = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")

config.declare("models", ARRAY)  # [[models]]: checked by user_models


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
    item: str = ITEM


def user_models(cli_specs: Sequence[str] = ()) -> list[UserModel]:
    """The models of ``benchsite.toml``'s ``[[models]]`` and of ``--model`` values, checked;
    :class:`ConfigError` (one line) for a malformed one."""
    found = [from_table(table, index) for index, table in enumerate(_config_tables(), start=1)]
    found += [from_cli(spec) for spec in cli_specs]
    names = [model.name for model in found]
    for name in {name for name in names if names.count(name) > 1}:
        raise ConfigError(f"two models are named {name}: give one of them another name=")
    return found


def _config_tables() -> list[dict[str, Any]]:
    tables = load_config().get("models", [])
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
            raise ConfigError(f"--model {spec}: {setting!r} is no key=value setting")
        table[key.strip()] = value.strip()
    return _model(table, f"--model {spec}")


def from_table(table: dict[str, Any], index: int) -> UserModel:
    """One ``[[models]]`` table as a :class:`UserModel`."""
    return _model(dict(table), f"{config.config_path()} [[models]] #{index}")


def _model(table: dict[str, Any], where: str) -> UserModel:
    factory = str(table.pop("factory", ""))
    if ":" not in factory or not _REF.match(factory):
        raise ConfigError(f"{where}: give the factory as MODULE:FUNCTION, not {factory!r}")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]} (known: {', '.join(KEYS)})")
    name = str(table.get("name") or factory.split(":")[1].replace("_", "-")).lower()
    if not _NAME.match(name):
        raise ConfigError(f"{where}: name {name!r}: use letters, digits, '-', '_' or '.'")
    if not table.get("inputs") and not table.get("shape"):
        raise ConfigError(f"{where}: say what the model takes: inputs=FUNCTION or shape=3x224")
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
        item=_item(table, where),
    )


def _ref(table: dict[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _REF.match(value):
        raise ConfigError(f"{where}: {key} must be [MODULE:]FUNCTION, not {value!r}")
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
        raise ConfigError(f"{where}: {key} must be positive whole numbers, not {value!r}")
    return numbers


def _item(table: dict[str, Any], where: str) -> str:
    item = table.get("item") or ITEM
    if not is_item_noun(item):
        raise ConfigError(
            f"{where}: item {item!r}: name one item as a singular noun in lower case, like "
            "item=image or item=sequence"
        )
    return str(item)


def _int_or_none(table: dict[str, Any], key: str, where: str) -> int | None:
    value = table.get(key)
    return None if value is None else _ints(table, key, where, None)[0]


def _dtype(table: dict[str, Any], where: str) -> str:
    import torch

    dtype = str(table.get("dtype") or "float32")
    if not isinstance(getattr(torch, dtype, None), torch.dtype):
        raise ConfigError(f"{where}: dtype {dtype!r} is no torch dtype (float32, int64, ...)")
    if not getattr(torch, dtype).is_floating_point and table.get("high") is None:
        raise ConfigError(f"{where}: integer dtype {dtype} needs high= (values in [0, high))")
    return dtype


# -- the plugin ---------------------------------------------------------------------------------


def workloads(model: UserModel) -> list[Workload]:
    """The two workloads of one user model, ``<name>-infer`` and ``<name>-train``."""
    return [_workload(model, train=False), _workload(model, train=True)]


def _workload(model: UserModel, train: bool) -> Workload:
    mode = "train" if train else "infer"
    what = "One AdamW training step" if train else "One forward pass in eval() mode"
    return Workload(
        name=f"{model.name}-{mode}",
        description=f"{what} of the user's model {model.name} ({model.factory}); "
        f"{items_unit(model.item)}.",
        setup=lambda device, params: setup_case(model, device, params, train),
        params=_grid(model.batches, with_compile=True),
        quick=_grid(model.quick_batches, with_compile=False),
        tags=("training" if train else "inference", "user-model", "batch-sweep"),
        axis="batch",
        item=model.item,
    )


def _grid(batches: tuple[int, ...], with_compile: bool) -> list[dict[str, list[Any]]]:
    """fp32 over the batches; the other precisions and (full) torch.compile at one batch."""
    at = [batches[len(batches) // 2]]
    grid = [
        {"batch": list(batches), "precision": ["fp32"]},
        {"batch": at, "precision": list(OTHER_PRECISIONS)},
    ]
    if with_compile:
        grid.append({"batch": at, "precision": ["fp32", "bf16"], "compile": [True]})
    return grid


# -- inside the worker: the case ----------------------------------------------------------------


def setup_case(model: UserModel, device: Device, params: dict[str, Any], train: bool) -> Case:
    """Import the user's functions and build the case (:mod:`benchsite.toolkit.modules`)."""
    spec = ModuleSpec(
        name=model.name,
        factory=resolve(model, model.factory),
        inputs=_inputs(model),
        loss=resolve(model, model.loss) if model.loss else None,
        targets=resolve(model, model.targets) if model.targets else None,
        where=model.where,
    )
    return module_case(device, params, spec, train)


def _inputs(model: UserModel) -> Callable[[int], Any]:
    if model.inputs:
        return resolve(model, model.inputs)
    shape, dtype, high = model.shape or (), model.dtype, model.high

    def inputs(batch: int) -> Any:
        import torch

        kind = getattr(torch, dtype)
        if kind.is_floating_point:
            return torch.randn(batch, *shape, dtype=kind)
        return torch.randint(0, int(high or 2), (batch, *shape), dtype=kind)

    return inputs


def resolve(model: UserModel, ref: str) -> Any:
    """The function ``[MODULE:]NAME`` names (the factory's module when none is given), imported
    with the current folder on ``sys.path``; :class:`ModelError` when it cannot be found."""
    module_name, _, attribute = ref.rpartition(":") if ":" in ref else ("", "", ref)
    module_name = module_name or model.factory.split(":")[0]
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - the user's module: any failure is theirs to fix
        from benchsite.errors import describe_exception

        raise ModelError(
            f"model {model.name} ({model.where}): cannot import {module_name} "
            f"({describe_exception(exc)}): run benchsite from the folder that holds it or put "
            "it on PYTHONPATH"
        ) from None
    if not callable(found := getattr(module, attribute, None)):
        raise ModelError(
            f"model {model.name} ({model.where}): {module_name} has no function {attribute}: "
            "fix the name"
        )
    return found
