"""The errors a user can cause, shown by the CLI as one line without a traceback.

Raise a subclass of :class:`BenchsiteError` with a message that says what is wrong *and* what to
do; the CLI prints ``error: <message>`` and exits with status 2. Anything else that escapes is a
bug in benchsite and keeps its traceback.
"""

from __future__ import annotations


class BenchsiteError(Exception):
    """Base class: a problem the user can fix, shown as one line."""

    exit_code = 2


class PluginError(BenchsiteError):
    """A plugin could not be loaded, or plugins contradict each other (duplicate names)."""


class StoreError(BenchsiteError):
    """The results store cannot be read or written."""


class SelectionError(BenchsiteError):
    """A workload, device or profile named on the command line does not exist."""


class ConfigError(BenchsiteError):
    """The configuration file (``benchsite.toml``) cannot be read or holds a wrong value."""


class SkipCase(Exception):
    """Raised by a workload's ``setup`` when a case cannot run on this device or with these
    parameters; the case is stored with status ``skipped`` and this message as the reason."""


def describe_exception(exc: BaseException) -> str:
    """One line for an exception: its type, message and the innermost place it was raised."""
    import traceback
    from pathlib import Path

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}{where}"


class StoreWarning(UserWarning):
    """A part of the results store was skipped (corrupt, truncated or foreign); the CLI prints it
    as one line, ``benchsite store check`` lists it."""
class BuildFailed(BenchsiteError):
    """A part of the site (a page, an analysis) failed: nothing was published."""

    exit_code = 1
