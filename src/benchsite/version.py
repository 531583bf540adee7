"""The installed benchsite version (one place, read by the package and the plugin manager)."""

from __future__ import annotations

import importlib.metadata

try:
    __version__ = importlib.metadata.version("benchsite")
except importlib.metadata.PackageNotFoundError:  # running from a source tree, not installed
    __version__ = "0.0.0+unknown"
