"""App-layer fixtures: helpers live in ``harness/app_harness.py``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "harness"))
