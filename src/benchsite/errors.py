"""The errors a user can cause, shown by the CLI as one line without a traceback.

Raise a subclass of :class:`BenchsiteError` with a message that says what is wrong *and* what to
do; the CLI prints ``error: <message>`` and exits with status 2. Anything else that escapes is a
bug in benchsite and keeps its traceback.
"""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

__all__ = [
    "BenchsiteError",
    "BuildFailed",
    "ConfigError",
    "PluginDeprecationWarning",
    "PluginError",
    "SelectionError",
    "SkipCase",
    "StoreError",
    "StoreWarning",
]


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
    """One line for an exception: its type, message and the innermost place it was raised;
    when that place is inside a library (pandas, Jinja, PyTorch, the standard library...) or
    benchsite's engine, also the innermost place outside them, where the caller's own code — a
    plugin's, most often — called in: ``AttributeError: ... (generic.py:6434, from
    my_analysis.py:12)``."""
    frames = traceback.extract_tb(exc.__traceback__)
    message = " ".join(str(exc).split())
    if not frames:
        return f"{type(exc).__name__}: {message}"
    where = _place(frames[-1])
    own = [frame for frame in frames if not _not_the_callers(frame.filename)]
    if own and own[-1] is not frames[-1]:
        where += f", from {_place(own[-1])}"
    return f"{type(exc).__name__}: {message} ({where})"


# code whose frames say where an error surfaced, not where the mistake is
LIBRARIES = frozenset(
    {
        "pandas",
        "numpy",
        "jinja2",
        "markupsafe",
        "altair",
        "vl_convert",
        "torch",
        "pyarrow",
        "pluggy",
        "typer",
        "click",
        "rich",
        "scipy",
        "fsspec",
    }
)
ENGINE = Path(__file__).parent  # benchsite's own code; its built-in plugins/ are a plugin's
STDLIB = Path(sysconfig.get_paths()["stdlib"])
PACKAGE_FOLDERS = ("site-packages", "dist-packages")


def _place(frame: traceback.FrameSummary) -> str:
    return f"{Path(frame.filename).name}:{frame.lineno}"


def _not_the_callers(filename: str) -> bool:
    """Whether ``filename`` is a library's or benchsite's engine (not its built-in plugins)."""
    path = Path(filename)
    if filename.startswith("<"):  # <frozen ...>, a dataclass's generated <string>
        return True
    if path.is_relative_to(ENGINE):
        return not path.is_relative_to(ENGINE / "plugins")
    folders = [i for i, part in enumerate(path.parts) if part in PACKAGE_FOLDERS]
    if folders:
        top = path.parts[folders[-1] + 1 : folders[-1] + 2]
        return bool(top) and top[0].split(".")[0] in LIBRARIES
    return path.is_relative_to(STDLIB)


class PluginDeprecationWarning(DeprecationWarning):
    """A plugin uses a deprecated part of the plugin API; the CLI shows it as one ``note:`` line
    (Python hides a plain :class:`DeprecationWarning` raised outside ``__main__``)."""


class StoreWarning(UserWarning):
    """A part of the results store was skipped (corrupt, truncated or foreign); the CLI prints it
    as one line, ``benchsite store check`` lists it."""


class BuildFailed(BenchsiteError):
    """A part of the site (a page, an analysis) failed: nothing was published."""

    exit_code = 1
