"""After SIGKILL of `pinb verify --jobs 2` its pool workers kept running, ignored SIGINT and SIGTERM, and committed
their runs. Now each worker watches its parent's pid: once the parent is gone it kills what it started (its kernel)
and exits, and a worker whose parent is gone never commits a run."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil
import pytest

from kit.verify_process import kit_project, start_verify, wait_until_ready

pytestmark = pytest.mark.kernel


def test_workers_and_their_kernels_end_with_a_killed_verify(tmp_path: Path) -> None:
    project = kit_project(tmp_path / "project")
    ready = tmp_path / "ready"
    process = start_verify(project, "kt-08-chapter", "kt-01-chapter", "--jobs", "2", ready=ready, own_group=True)
    wait_until_ready(process, ready)
    started = psutil.Process(process.pid).children(recursive=True)
    assert len(started) >= 2  # the pool's workers, and the kernel of the notebook that waits
    process.send_signal(signal.SIGKILL)
    process.wait()  # not its pipes: a worker that outlives it holds them open

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_running(child) for child in started):
        time.sleep(0.2)
    left = [child.pid for child in started if _running(child)]
    for child in started:  # leave nothing behind, whatever the outcome
        if _running(child):
            child.kill()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    assert left == []
    assert "kt-08-chapter" not in {run.record.chapter for run in project.store.list().runs}


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
