"""Every test process keeps the verification cache's key in a folder of its own, never in the user's cache."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("PINB_CACHE_DIR", tempfile.mkdtemp(prefix="pinb-test-cache-"))
