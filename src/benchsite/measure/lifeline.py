"""Child processes die with their parent: no worker outlives a killed ``benchsite run``.

A measuring worker holds a device (and may spin in a hung case): if the run that drives it is
killed (``kill -9``, a closed terminal, the OOM killer), nothing else would stop it. Called first
thing in the child, :func:`die_with_parent` arranges that it ends when its parent does:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the child when its parent
  thread ends, however it ends;
- elsewhere (macOS, BSD, Windows), a daemon thread that checks twice a second whether the
  parent is gone (its pid changed or no longer runs) and then ends the process.

Both then check once whether the parent already died before the arrangement took effect.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def die_with_parent(parent_pid: int | None = None, watch_only: bool = False) -> None:
    """End this process when ``parent_pid`` (default: the current parent) ends. ``watch_only``:
    use the watchdog thread even on Linux, for a parent that may start children from a thread
    that ends before it does (the kernel's signal follows the parent *thread*)."""
    parent_pid = parent_pid or os.getppid()
    if watch_only or not (sys.platform.startswith("linux") and _set_pdeathsig()):
        threading.Thread(target=_watch, args=(parent_pid,), name="lifeline", daemon=True).start()
    if not _alive(parent_pid):
        os._exit(1)


def parent_death_signal() -> None:
    """For ``subprocess.Popen(preexec_fn=...)``: on Linux the child is killed when this process
    ends (the setting survives ``exec``); elsewhere nothing (the child calls
    :func:`die_with_parent` itself)."""
    if sys.platform.startswith("linux"):
        _set_pdeathsig()


def _set_pdeathsig() -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent_pid: int) -> None:
    while _alive(parent_pid):
        time.sleep(POLL_S)
    os._exit(1)


def _alive(parent_pid: int) -> bool:
    if os.name != "nt" and os.getppid() != parent_pid:
        return False  # re-parented: the parent is gone
    try:
        os.kill(parent_pid, 0) if os.name != "nt" else _windows_alive(parent_pid)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    return True


def _windows_alive(pid: int) -> None:  # pragma: no cover - Windows
    import psutil

    if not psutil.pid_exists(pid):
        raise ProcessLookupError(pid)
