"""benchsite: measure PyTorch workloads on every device a machine has and publish the results
as a static site. Plugins import their markers and records from here::

    from benchsite import hookimpl, Workload, Case, Device, Collector
"""

from __future__ import annotations

from benchsite.errors import SkipCase
from benchsite.hookspecs import hookimpl
from benchsite.records import (
    Analysis,
    Case,
    Collector,
    CollectorUnavailable,
    Device,
    Finding,
    Flag,
    Page,
    RenderedPage,
    Timer,
    Workload,
)
from benchsite.version import __version__

__all__ = [
    "Analysis",
    "Case",
    "Collector",
    "CollectorUnavailable",
    "Device",
    "Finding",
    "Flag",
    "Page",
    "RenderedPage",
    "SkipCase",
    "Timer",
    "Workload",
    "__version__",
    "hookimpl",
]
