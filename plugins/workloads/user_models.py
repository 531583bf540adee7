"""A user's own models as workloads: each ``--model MODULE:FACTORY`` of the command and each
``[[models]]`` table of ``benchsite.toml`` gives ``<name>-infer`` and ``<name>-train``
(:mod:`benchsite.toolkit.user_models` derives their cases). A malformed description stops the
command with one line; a model that fails when its case is set up is stored as that case's
error row and the run goes on."""

from __future__ import annotations

from benchsite import Workload, hookimpl
from benchsite.config import command_line
from benchsite.toolkit.user_models import user_models, workloads


@hookimpl
def register_workloads() -> list[Workload]:
    return [each for model in user_models(command_line("model")) for each in workloads(model)]
