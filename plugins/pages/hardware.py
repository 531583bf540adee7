"""The Hardware page: every device of every host that ran a case (a device only planned — a
``cuda×8`` world skipped on a one-GPU host — is no hardware), what was captured about it, and
its measured peaks: per workload, the best rate in the one unit that fits it (TFLOP/s where
it declares FLOPs, else GB/s, else items/s). In a fleet (:mod:`benchsite.tables.fold`) the
hosts of one hardware are one section: their names, one host's devices, the best peaks of
them all."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchsite import Page, RenderedPage, hookimpl
from benchsite.units import SI_RATES, format_bytes, format_rate_in, natural_key

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
    info: list[tuple[str, str, bool]]  # (name, value, whether the value is code: CPU flags)
    peaks: list[PeakView]


@dataclass(frozen=True)
class HostView:
    """A host and its devices; in a fleet, a hardware (``name``: its models and host count)
    with its ``hosts``, its devices shown once and their best peaks over those hosts."""

    name: str
    devices: list[DeviceView]
    hosts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HardwareContext:
    """``hardware.html``: every device of every host in the store, and where each device
    model stands among those of the store and the references (``_standing.html``)."""

    hosts: list[HostView]
    standing: list[Any] = field(default_factory=list)  # benchsite.toolkit.reference.Standing
    references: list[str] = field(default_factory=list)


@hookimpl
def register_pages() -> list[Page]:
    return [Page(name="hardware", nav="Hardware", order=20, render=render)]


def render(site: Site) -> list[RenderedPage]:
    peaks = fitting(site.tables.peaks)
    devices = site.tables.devices
    ran = site.tables.rows[site.tables.rows["status"] != "skipped"]
    ran_on = set(zip(ran["host"].astype(str), ran["device"].astype(str), strict=True))
    devices = devices[
        np.array(
            [
                (str(h), str(d)) in ran_on
                for h, d in zip(devices["host"], devices["device"], strict=True)
            ],
            dtype=bool,
        )
    ]
    from benchsite.tables import fold

    names = fold.hardware_names(devices) if fold.is_fleet(site.results) else {}  # as overview
    hardware = devices["host"].astype(str).map(lambda host: names.get(host, host))
    peaks = fitting(_by_hardware(peaks, names)) if names else peaks
    hosts = []
    for name, group in devices.groupby(hardware.to_numpy(object), sort=True):
        members = sorted(set(group["host"].astype(str)), key=natural_key) if names else []
        shown = group[group["host"] == group["host"].iloc[0]]  # one host's devices, in a fleet
        views = [_device(site, row, peaks, str(name)) for row in shown.itertuples()]
        hosts.append(HostView(str(name), views, members if len(members) > 1 else []))
    from benchsite.toolkit import reference

    context = HardwareContext(hosts, reference.standing_views(site), reference.labels(site.tables))
    return [site.render("hardware.html", "hardware.html", context, "hardware")]


def _by_hardware(peaks: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """The peaks of a fleet's hosts as their hardware's (:func:`benchsite.tables.fold.
    hardware_names`): each unit's best rate over the hosts of one hardware first."""
    named = peaks.assign(host=peaks["host"].astype(str).map(lambda host: names.get(host, host)))
    return named.sort_values(
        ["host", "device", "unit", "rate"], ascending=[1, 1, 1, 0], kind="stable"
    )


def _device(site: Site, row: Any, peaks: pd.DataFrame, host: str) -> DeviceView:
    from benchsite.toolkit.findings import case_text

    mine = peaks[(peaks["host"] == host) & (peaks["device"] == row.device)]
    return DeviceView(
        name=str(row.device),
        kind=str(row.device_kind),
        model=str(row.device_model),
        fingerprint=str(row.fingerprint),
        last_seen=f"{row.timestamp:%Y-%m-%d %H:%M} UTC",
        info=[
            (_key(key), _text(value), isinstance(value, list | dict))
            for key, value in sorted(row.info.items())
        ],
        peaks=[
            PeakView(
                workload=str(peak.workload),
                rate=format_rate_in(peak.rate, str(peak.unit)),
                params=case_text(
                    peak.params_obj, in_bytes=str(peak.workload) in site.tables.byte_sized
                ),
                href=site.row_links[str(peak.row_id)].href,
            )
            for peak in mine.itertuples()
        ],
    )


def fitting(peaks: pd.DataFrame) -> pd.DataFrame:
    """Per (host, device, workload) the peak in the first unit it declares of TFLOP/s, GB/s and
    items/s: a matmul's GB/s (its operands' bytes over its time) is no measure of it."""
    if peaks.empty:
        return peaks
    order = {unit: index for index, unit in enumerate(SI_RATES)}
    last = len(order)  # items/s in the workload's item (images/s) ranks with items/s
    ranked = peaks.assign(_order=peaks["unit"].map(order).fillna(last)).sort_values(
        "_order", kind="stable"
    )
    return ranked.drop_duplicates(["host", "device", "workload"]).sort_values(
        ["host", "device", "workload"], kind="stable"
    )


def _key(key: Any) -> str:
    """``memory_bytes`` → ``memory``, ``logical_cpus`` → ``logical cpus``."""
    return str(key).removesuffix("_bytes").replace("_", " ")


def _text(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, int) and value > 10**8:
        return format_bytes(value)
    if isinstance(value, list):
        value = ", ".join(map(str, value))
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= LONG_TEXT else text[:LONG_TEXT] + "…"
