"""`pinb verify --jobs 2` had no answer to SIGTERM (the parent died at once, its workers went on unwatched), and a
Ctrl-C at the terminal reached an idle worker too, which died of it and broke the pool under the worker still
writing its run. Workers now ignore the stop signals except while they write a run; the parent passes a stop on,
starts nothing new, and waits until each run is recorded."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from kit.verify_process import finish, kit_project, start_verify, wait_until_ready

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("how", ["sigterm to verify", "ctrl-c at the terminal"])
def test_a_stopped_parallel_verify_records_every_run_it_began(tmp_path: Path, how: str) -> None:
    project = kit_project(tmp_path / "project")
    ready = tmp_path / "ready"
    process = start_verify(
        project, "kt-01-chapter", "kt-02-chapter", "kt-08-chapter", "--jobs", "2", ready=ready, own_group=True
    )
    wait_until_ready(process, ready)
    _wait_until_recorded(project, {"kt-01-chapter", "kt-02-chapter"})  # one worker is idle, one runs kt-08
    if how == "sigterm to verify":
        process.send_signal(signal.SIGTERM)
    else:
        os.killpg(process.pid, signal.SIGINT)
    _out, err = finish(process)
    assert process.returncode == 130, err

    listing = project.store.list()
    assert listing.problems == []
    runs = {run.record.chapter: run.record for run in listing.runs}
    assert (runs["kt-01-chapter"].status, runs["kt-02-chapter"].status) == ("completed", "completed")
    stopped = runs["kt-08-chapter"]
    reason = "interrupted (SIGTERM)" if how == "sigterm to verify" else "interrupted (Ctrl-C)"
    assert (stopped.status, stopped.failure) == ("interrupted", reason)
    assert [c.claim_id for c in stopped.claims] == ["kt-08.wait.before", "kt-08.wait.during"]
    assert project.store.check()[1] == []
    assert not list(project.runs_dir.rglob(".tmp-*"))


def _wait_until_recorded(project: object, chapters: set[str], limit_s: float = 90.0) -> None:
    """On a loaded machine kt-08 can be ready before the other worker has written its run: wait for both records."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        done = {run.record.chapter for run in project.store.list().runs if run.record.status == "completed"}  # type: ignore[attr-defined]
        if chapters <= done:
            return
        time.sleep(0.1)
    raise AssertionError(f"runs of {sorted(chapters)} were not recorded within {limit_s} s")
