"""The configuration file plugins read (``benchsite.toml``, docs/reliability.md): a plugin
declares the sections and keys it reads with :func:`declare`, then reads them with
:func:`section` or :func:`value` (and the values of a repeatable option such as
``--model`` with :func:`command_line`); :func:`config_path` says which file is in use.

The public face of :mod:`benchsite.host.config` (the host loads and checks the file before a
run); import these names from here.
"""

from __future__ import annotations

from benchsite.host.config import command_line, config_path, declare, section, value

__all__ = ["command_line", "config_path", "declare", "section", "value"]
