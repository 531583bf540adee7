"""The Hardware page: every device of every host in the store, what was captured about it, and
its measured peaks (best TFLOP/s, GB/s and items/s per workload)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchsite import Page, RenderedPage, hookimpl

if TYPE_CHECKING:  # the site stack is imported when a site is built, not at start-up
    from benchsite.site import Site
    from benchsite.site.context import DeviceView
from benchsite.units import format_number

LONG_TEXT = 240


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="hardware", nav="Hardware", order=20, render=render)]


def render(site: Site) -> list[RenderedPage]:
    from benchsite.site import frames
    from benchsite.site.context import HardwareContext, HostView
    peaks = frames.peaks(site.results)
    hosts = []
    for host, group in frames.devices(site.results).groupby("host", sort=True):
        views = [_device(site, row, peaks) for row in group.itertuples()]
        hosts.append(HostView(str(host), views))
    return [site.render("hardware.html", "hardware.html", HardwareContext(hosts), "hardware")]


def _device(site: Site, row: Any, peaks: pd.DataFrame) -> DeviceView:
    from benchsite.site import frames
    from benchsite.site.context import DeviceView, PeakView
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
                params=frames.params_text(peak.params_obj),
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
