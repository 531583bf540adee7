"""Any ``torch.nn.Module`` as a measured case: what ``benchsite run --model`` and the
well-known architectures share.

:func:`module_case` builds a model from a factory, checks what a user can get wrong (a factory
that raises, one that returns no module, inputs that do not fit, no trainable parameters for a
training step) and turns it into a training step or an inference call through
:mod:`benchsite.toolkit.steps`, so that it obeys the built-ins' rules (data on the device,
precision, ``torch.compile``, no host synchronization in a step). A mistake raises
:class:`ModelError`, whose one-line message names the model and what to fix; the engine stores
it as the case's ``error`` row and goes on with the next case.

FLOPs are counted as the built-ins count them, with ``FlopCounterMode`` on the ``meta`` device
(free, the same count on every device); a model that cannot be built there is counted on the
case's device instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchsite import Case, Device, SkipCase
from benchsite.errors import BenchsiteError, describe_exception
from benchsite.toolkit.steps import ModelSpec, infer_case, train_case

__all__ = [
    "ModelError",
    "ModuleSpec",
    "built",
    "count_call_flops",
    "example_inputs",
    "first_tensor",
    "mean_square_loss",
    "module_case",
    "module_flops",
    "positional",
]


class ModelError(BenchsiteError):
    """A model given to benchsite cannot be measured as given; the message says what to fix."""


@dataclass(frozen=True)
class ModuleSpec:
    """How to build one model and its inputs for a batch.

    ``factory()`` returns the ``nn.Module``; ``inputs(batch)`` the model's positional inputs (a
    tensor or a tuple of tensors); ``targets(batch)`` what ``loss(output, targets)`` compares
    the output with (``None`` when not given). Without ``loss``, training minimises the mean
    square of the first tensor of the output: a stand-in whose cost is negligible beside the
    backward pass. ``name`` is what error messages call the model; ``where`` tells the user
    where it was declared (``--model ...``). ``items(batch)`` counts the items of one call
    (default: the batch)."""

    name: str
    factory: Callable[[], Any]
    inputs: Callable[[int], Any]
    loss: Callable[[Any, Any], Any] | None = None
    targets: Callable[[int], Any] | None = None
    where: str = ""
    items: Callable[[int], float] | None = None


def module_case(device: Device, params: dict[str, Any], spec: ModuleSpec, train: bool) -> Case:
    """One training step (``train``) or inference call of ``spec``'s model at ``params["batch"]``
    on ``device``, in ``params["precision"]`` (default fp32), compiled when
    ``params["compile"]``."""
    import torch

    batch = int(params.get("batch", 1))
    torch.manual_seed(0)
    with torch.device(device.name):
        model = built(spec)
        if train and not any(p.requires_grad for p in model.parameters()):
            raise SkipCase(f"model {spec.name} has no trainable parameters: nothing to train")
        inputs, targets = example_inputs(spec, batch)
    loss = spec.loss or mean_square_loss
    flops = module_flops(spec, batch, loss, train, (model, inputs, targets))
    wrapped = positional(model)
    model_spec = ModelSpec(
        build=lambda: wrapped,
        inputs=lambda: (inputs, targets),
        loss=loss,
        items=int(spec.items(batch)) if spec.items else batch,
        flops=flops,
    )
    return (train_case if train else infer_case)(device, params, model_spec)


def built(spec: ModuleSpec) -> Any:
    """The model the factory returns; :class:`ModelError` when it raises or returns no module."""
    import torch

    try:
        model = spec.factory()
    except (SkipCase, ModelError):
        raise
    except Exception as exc:  # noqa: BLE001 - the user's factory: any failure is theirs to fix
        problem = f"its factory raised {describe_exception(exc)}"
        raise _error(spec, problem, "fix the factory") from None
    if not isinstance(model, torch.nn.Module):
        raise _error(
            spec,
            f"its factory returned {type(model).__name__}, not a torch.nn.Module",
            "return the model itself",
        )
    return model


def example_inputs(spec: ModuleSpec, batch: int) -> tuple[tuple[Any, ...], Any]:
    """The positional inputs (always a tuple) and the targets for one batch."""
    try:
        found = spec.inputs(batch)
        targets = spec.targets(batch) if spec.targets else None
    except Exception as exc:  # noqa: BLE001 - the user's inputs: any failure is theirs to fix
        problem = f"its inputs raised {describe_exception(exc)}"
        raise _error(spec, problem, "fix the inputs") from None
    return (found if isinstance(found, tuple) else (found,)), targets


def module_flops(
    spec: ModuleSpec, batch: int, loss: Any, train: bool, on_device: tuple[Any, Any, Any]
) -> float:
    """FLOPs of one call: counted on ``meta`` where the factory works there, else with
    ``on_device`` (the model, its inputs and targets, built on the case's device); a forward
    that fails is :class:`ModelError` ("does not fit")."""
    import torch

    try:
        with torch.device("meta"):
            meta_model = spec.factory()
            meta_inputs, meta_targets = example_inputs(spec, batch)
        return count_call_flops(meta_model, meta_inputs, meta_targets, loss, train)
    except Exception:  # noqa: BLE001 - not every model builds on meta: count on the device
        pass
    model, inputs, targets = on_device
    try:
        return count_call_flops(model, inputs, targets, loss, train)
    except Exception as exc:  # noqa: BLE001 - a model and input that do not fit fail anyhow
        what = "the model or its loss" if train else "the model"
        raise _error(
            spec,
            f"its input does not fit {what} ({describe_exception(exc)})",
            "fix inputs= (or shape=/dtype=) or the loss to match the model",
        ) from None


def count_call_flops(
    model: Any, inputs: tuple[Any, ...], targets: Any, loss: Any, train: bool
) -> float:
    """``FlopCounterMode``'s total for one forward (and, when ``train``, loss and backward)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    model.train(train)
    with FlopCounterMode(display=False) as counter:
        if train:
            loss(model(*inputs), targets).backward()
        else:
            with torch.no_grad():
                model(*inputs)
    model.zero_grad(set_to_none=True)
    return float(counter.get_total_flops())


def mean_square_loss(output: Any, targets: Any = None) -> Any:
    """The default training loss: the mean square of the output's first tensor."""
    return first_tensor(output).float().square().mean()


def first_tensor(output: Any) -> Any:
    """The first tensor in a model's output: itself, the first of a tuple or list, or the first
    value of a mapping (Hugging Face's ``ModelOutput`` is one)."""
    import torch

    if isinstance(output, torch.Tensor):
        return output
    values = output.values() if hasattr(output, "values") else output
    for value in values:
        if isinstance(value, torch.Tensor):
            return value
    raise TypeError(f"the model's output ({type(output).__name__}) holds no tensor")


def positional(model: Any) -> Any:
    """``model`` wrapped so that it takes its positional inputs as one tuple (what the steps of
    :mod:`benchsite.toolkit.steps` pass)."""
    import torch

    class PositionalInputs(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, inputs: tuple[Any, ...]) -> Any:
            return self.model(*inputs)

    return PositionalInputs()


def _error(spec: ModuleSpec, problem: str, fix: str) -> ModelError:
    where = f" ({spec.where})" if spec.where else ""
    return ModelError(f"model {spec.name}{where}: {problem}: {fix}")
