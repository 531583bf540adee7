"""A recording test plugin: every hook, each call written down (``_recording.py``), the same
as ``first.py`` under another name, registered after it. Never shipped."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    f"benchsite_test_recording_{Path(__file__).stem}", Path(__file__).with_name("_recording.py")
)
_recording = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_recording)
globals().update(_recording.hooks(Path(__file__).stem))
