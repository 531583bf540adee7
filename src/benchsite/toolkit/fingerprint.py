"""The comparability fingerprint shared by the device plugins."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "fingerprint",
]


def fingerprint(info: Mapping[str, Any], keys: Iterable[str]) -> str:
    """A short stable hash of the ``keys`` of ``info``: runs with equal fingerprints measured the
    same hardware and software, so their history may be trended together."""
    subset = {key: info.get(key) for key in keys}
    digest = hashlib.sha256(json.dumps(subset, sort_keys=True, default=str).encode()).hexdigest()
    return digest[:16]
