"""The Hardware page: every device of every host in the store, what was captured about it, and
its measured peaks (best TFLOP/s, GB/s and items/s per workload)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Page, RenderedPage, hookimpl
from benchsite.tables.rows import params_text
from benchsite.units import format_number

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site

LONG_TEXT = 240


@dataclass(frozen=True)
class PeakView:
    """A device's best measured throughput on one workload."""

    workload: str
    rate: str
    params: str
    href: str


@dataclass(frozen=True)
class DeviceView:
    """One device of one host: what was captured about it and its measured peaks."""

    name: str
    kind: str
    model: str
    fingerprint: str
    last_seen: str
    info: list[tuple[str, str]]
    peaks: list[PeakView]


@dataclass(frozen=True)
class HostView:
    name: str
    devices: list[DeviceView]


@dataclass(frozen=True)
class HardwareContext:
    """``hardware.html``: every device of every host in the store."""

    hosts: list[HostView]


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="hardware", nav="Hardware", order=20, render=render)]


def render(site: Site) -> list[RenderedPage]:
    peaks = site.tables.peaks
    hosts = []
    for host, group in site.tables.devices.groupby("host", sort=True):
        views = [_device(site, row, peaks) for row in group.itertuples()]
        hosts.append(HostView(str(host), views))
    return [site.render("hardware.html", "hardware.html", HardwareContext(hosts), "hardware")]


def _device(site: Site, row: Any, peaks: pd.DataFrame) -> DeviceView:
    mine = peaks[(peaks["host"] == row.host) & (peaks["device"] == row.device)]
    return DeviceView(
        name=str(row.device),
        kind=str(row.device_kind),
        model=str(row.device_model),
        fingerprint=str(row.fingerprint),
        last_seen=f"{row.timestamp:%Y-%m-%d %H:%M} UTC",
        info=[(str(key), _text(value)) for key, value in sorted(row.info.items())],
        peaks=[
            PeakView(
                workload=str(peak.workload),
                rate=f"{format_number(peak.rate)} {peak.unit}",
                params=params_text(peak.params_obj),
                href=site.row_links[str(peak.row_id)].href,
            )
            for peak in mine.itertuples()
        ],
    )


def _text(value: Any) -> str:
    if isinstance(value, int) and value > 10**8:
        return f"{format_number(value, 'B')} ({value})"
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= LONG_TEXT else text[:LONG_TEXT] + "…"
