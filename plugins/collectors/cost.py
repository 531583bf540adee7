"""``cost``: what a device-hour costs, so results can be read as money per result.

The price comes from ``benchsite.toml`` (``[cost.usd_per_hour]``, looked up in the current
folder or at ``$BENCHSITE_CONFIG``; see ``benchsite.toml.example``), keyed by device name,
device model or device kind, most specific first. Without a file or without a price for the
device, ``start`` raises :class:`CollectorUnavailable` (said once; nothing recorded). Without any
configuration file it records nothing and says nothing: no price was asked for (the README's
"Configuration" section tells how to give one).

Metric: ``cost.usd_per_hour``, the price in force when the case was measured (stored per row,
so a later price change does not rewrite history). A collector does not see the case's median
time or its items, so the cost per result is derived where both are known, by the findings::

    usd_per_million_items = usd_per_hour / 3600 * median_s / items * 1e6

(:func:`usd_per_million_items`). Cheap: one file read per case, nothing while it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchsite import Collector, CollectorUnavailable, Device, hookimpl
from benchsite.config import config_path, declare, section
from benchsite.errors import ConfigError

declare("cost", {"usd_per_hour": {"*": float}})


@hookimpl
def register_collectors() -> list[Collector]:
    return [
        Collector(
            name="cost",
            description="Price per device-hour from benchsite.toml (cost per result follows).",
            start=start_cost,
            merge={"usd_per_hour": "device_sum"},  # the price of the group's devices together
        )
    ]


def price_per_hour(device: Device, prices: Mapping[str, Any]) -> float | None:
    """The price for ``device``: by name (``cuda:0``), model, then kind; ``None`` if absent."""
    for key in (device.name, str(device.info.get("model", "")), device.kind):
        if key in prices:
            price = prices[key]
            if not isinstance(price, int | float) or isinstance(price, bool) or price < 0:
                raise ConfigError(
                    f"[cost.usd_per_hour] {key!r} = {price!r} in {config_path()}: "
                    "give a number of US dollars, like 3.5"
                )
            return float(price)
    return None


def start_cost(device: Device) -> Callable[[], Mapping[str, float | None]]:
    if config_path() is None:  # no benchsite.toml: nothing asked, nothing to say
        return dict
    try:
        prices = section("cost").get("usd_per_hour", {})
        price = price_per_hour(device, prices)
    except ConfigError as exc:
        raise CollectorUnavailable(str(exc)) from exc
    if price is None:
        raise CollectorUnavailable(
            f"no price for {device.name} in [cost.usd_per_hour] of {config_path()}"
        )
    return lambda: {"usd_per_hour": price}


def usd_per_million_items(usd_per_hour: float, median_s: float, items: float) -> float:
    """Dollars per million items at ``usd_per_hour``, when one call of ``items`` takes
    ``median_s`` seconds."""
    return usd_per_hour / 3600.0 * median_s / items * 1e6
