"""`pinb verify` as a separate process on a copy of the kit's notebooks, for tests that send it real signals."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pinb.kit.project import Project

from .sample_registry import chapters

HERE = Path(__file__).resolve().parent
#: The kit's `waits` notebook writes this file once its long cell has begun (and its outcome was sent).
READY_ENV = "PINB_TEST_READY"


def kit_project(root: Path) -> Project:
    shutil.copytree(HERE / "notebooks", root / "notebooks")
    return Project(root=root, chapters=chapters())


def start_verify(project: Project, *argv: str, ready: Path | None = None) -> subprocess.Popen[str]:
    env = os.environ | {
        "PINB_ROOT": str(project.root),
        "PINB_REGISTRY": f"{chapters.__module__}:chapters",
        "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]),
    }
    if ready is not None:
        env[READY_ENV] = str(ready)
    return subprocess.Popen(
        [sys.executable, "-m", "pinb.cli", "verify", *argv, "--no-progress"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_ready(process: subprocess.Popen[str], ready: Path, timeout: float = 120) -> None:
    """Until the notebook is inside its long cell; then a moment for its outcome to reach pinb."""
    deadline = time.monotonic() + timeout
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            _out, err = process.communicate()
            raise AssertionError(f"the notebook never reached its long cell (exit {process.returncode}): {err}")
        time.sleep(0.1)
    time.sleep(1.0)
