"""SIGTERM ended `pinb verify` at once: no record of the run, and its `.tmp-` folder left behind. It now ends the
way Ctrl-C does: the kernel is stopped, the executed notebook written, the run recorded as interrupted."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from kit.verify_process import finish, kit_project, start_verify, wait_until_ready
from pinb.kit.fingerprint import sha256_file

pytestmark = pytest.mark.kernel


def test_sigterm_in_the_long_cell_is_recorded_as_interrupted(tmp_path: Path) -> None:
    project = kit_project(tmp_path / "project")
    ready = tmp_path / "ready"
    process = start_verify(project, "kt-08-chapter", ready=ready)
    wait_until_ready(process, ready)
    process.send_signal(signal.SIGTERM)
    out, err = finish(process)
    assert process.returncode == 130, err
    assert "interrupted" in out

    listing = project.store.list()
    assert listing.problems == []
    (run,) = listing.runs
    assert (run.record.status, run.record.failure) == ("interrupted", "interrupted (SIGTERM)")
    assert [c.claim_id for c in run.record.claims] == ["kt-08.wait.before", "kt-08.wait.during"]
    assert run.record.artifacts[0].sha256 == sha256_file(run.path / "executed.ipynb")
    assert not list(project.runs_dir.rglob(".tmp-*"))
