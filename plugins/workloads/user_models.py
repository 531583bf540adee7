"""``<name>-infer`` and ``<name>-train``: each of the user's own models (``benchsite run --model
MODULE:FACTORY`` or a ``[[models]]`` table of ``benchsite.toml``; docs/models.md).

Each model's cases are derived here, as for a built-in model: a batch sweep in fp32, each other
precision at one batch (those a device cannot run are skipped with the reason), and
``torch.compile`` (fp32 and bf16) in the full profile; a training step only where the model has
trainable parameters. The user's module is imported in the worker when a case is set up, from
the current folder or ``PYTHONPATH``. What is wrong with a model — a module that does not
import, a factory that raises or returns no module, inputs that do not fit — is one line naming
the model and what to fix (:class:`benchsite.toolkit.modules.ModelError`), stored as the case's
``error`` row; the run goes on with the others. FLOPs are counted with ``FlopCounterMode``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchsite import Case, Device, Workload, hookimpl
from benchsite.config import UserModel, user_models
from benchsite.toolkit.modules import ModuleSpec, import_function, module_case

OTHER_PRECISIONS = ("tf32", "bf16", "fp16")


@hookimpl
def register_workloads() -> list[Workload]:
    return [_workload(model, train) for model in user_models() for train in (False, True)]


def _workload(model: UserModel, train: bool) -> Workload:
    mode = "train" if train else "infer"
    what = "One AdamW training step" if train else "One forward pass in eval() mode"
    return Workload(
        name=f"{model.name}-{mode}",
        description=f"{what} of the user's model {model.name} ({model.factory}); items/s.",
        setup=lambda device, params: setup_case(model, device, params, train),
        params=_grid(model.batches, with_compile=True),
        quick=_grid(model.quick_batches, with_compile=False),
        tags=("training" if train else "inference", "user-model", "batch-sweep"),
        axis="batch",
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
    """The function ``[MODULE:]NAME`` names (the factory's module when none is given)."""
    default_module = model.factory.split(":")[0]
    return import_function(ref, default_module, f"model {model.name} ({model.where})")
