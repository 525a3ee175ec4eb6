"""On Python 3.11 a Ctrl-C while pinb waited in `Thread.join(0.1)` made the still-running executor thread look
finished: `run.json` was written from the notebook as papermill had last saved it (losing the outcomes of the cell
being run, sometimes hashing a half-written file), and papermill wrote the notebook again afterwards. A stop now
only sets a flag: the kernel is killed, the notebook is written once, complete, and only then the record."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from kit.verify_process import finish, kit_project, start_verify, wait_until_ready
from pinb.kit.fingerprint import sha256_file

pytestmark = pytest.mark.kernel


def test_ctrl_c_in_the_long_cell_keeps_its_outcome_and_a_matching_notebook(tmp_path: Path) -> None:
    project = kit_project(tmp_path / "project")
    ready = tmp_path / "ready"
    process = start_verify(project, "kt-08-chapter", ready=ready)
    wait_until_ready(process, ready)
    process.send_signal(signal.SIGINT)
    _out, err = finish(process)
    assert process.returncode == 130, err

    listing = project.store.list()
    assert listing.problems == []
    (run,) = listing.runs
    record = run.record
    assert (record.status, record.failure) == ("interrupted", "interrupted (Ctrl-C)")
    assert [(c.claim_id, c.outcome) for c in record.claims] == [
        ("kt-08.wait.before", "holds"),
        ("kt-08.wait.during", "holds"),  # emitted inside the cell that was stopped
    ]
    assert project.store.check()[1] == []
    executed = run.path / "executed.ipynb"
    assert record.artifacts[0].sha256 == sha256_file(executed)
    cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    stopped = next(c for c in cells if "kt-08.wait.during" in "".join(c["source"]))
    assert stopped["metadata"]["papermill"]["status"] == "failed"  # the cell that was running is marked
    assert not list(project.runs_dir.rglob(".tmp-*"))
