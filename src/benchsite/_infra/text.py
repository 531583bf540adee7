"""Short texts for one-line messages."""

from __future__ import annotations


def first_line(exc: BaseException) -> str:
    """The first line of what ``exc`` says, or its type's name where it says nothing."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
