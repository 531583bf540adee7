"""Timing on the host: a :class:`benchsite.Timer` that reads the host's monotonic clock, for a
device whose work is done when its call returns (the CPU), and for fake devices in tests."""

from __future__ import annotations

import time

from benchsite.records import Timer

__all__ = ["HostClockTimer"]


class HostClockTimer(Timer):
    """Times a block of CPU work with the host's monotonic high-resolution clock."""

    def start(self) -> None:
        self._start = time.perf_counter()

    def stop(self) -> None:
        self._stop = time.perf_counter()

    def elapsed(self) -> float:
        return self._stop - self._start
