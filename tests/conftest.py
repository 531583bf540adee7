from __future__ import annotations

from pathlib import Path

pytest_plugins = ["benchsite.testing"]

TESTS = Path(__file__).parent
CASEBOOK = str(TESTS / "plugins" / "casebook.py")
