"""`pinb verify` as a separate process on a copy of the kit's notebooks, for tests that send it real signals."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
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


def start_verify(
    project: Project, *argv: str, ready: Path | None = None, own_group: bool = False
) -> subprocess.Popen[str]:
    """`own_group`: in a process group of its own, like a command at a terminal (`os.killpg` is then Ctrl-C)."""
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
        start_new_session=own_group,
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
    time.sleep(2.0)


def finish(process: subprocess.Popen[str], timeout: float = 90) -> tuple[str, str]:
    """Its output once it has exited; if it does not within `timeout`, it and its workers are killed."""
    try:
        return process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(process.pid) == process.pid:  # its own group: the workers go too
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
        process.communicate()
        raise
