"""Fixtures: a throw-away project holding the kit's own notebooks, and synthetic run records."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from pinb.kit.claims import ClaimOutcome
from pinb.kit.project import Project, default_parameters
from pinb.kit.record import EXECUTED_NOTEBOOK, Artifact, Environment, NotebookRef, RunRecord
from pinb.kit.store import StoredRun

from .sample_registry import chapters

#: `PINB_REGISTRY` value naming the kit's sample chapters, importable in this test process.
REGISTRY = f"{chapters.__module__}:chapters"
HERE = Path(__file__).resolve().parent
NOTEBOOKS = HERE / "notebooks"

ENV = Environment(
    python="3.11.7",
    platform="Linux-test",
    pinb="0.1.0",
    papermill="2.7.0",
    nbclient="0.11.0",
    ipykernel="7.4.0",
    pydantic="2.14.4",
    nbformat="5.11.1",
    git_commit="0123456789abcdef0123456789abcdef01234567",
    git_dirty=False,
)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    shutil.copytree(NOTEBOOKS, tmp_path / "notebooks")
    return Project(root=tmp_path, chapters=chapters())


Outcomes = Iterable[tuple[str, str, str]]
RecordRun = Callable[..., StoredRun]


@pytest.fixture
def record_run(project: Project) -> RecordRun:
    """Commit a synthetic run: `record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")], ...)`."""
    counter = iter(range(1, 1000))

    def make(
        chapter_id: str,
        outcomes: Outcomes = (),
        *,
        status: str = "completed",
        failure: str | None = None,
        backend: str = "standin",
        inputs_update: dict[str, Any] | None = None,
        notebook_bytes: bytes = b"{}",
        warnings: tuple[str, ...] = (),
    ) -> StoredRun:
        n = next(counter)
        chapter = project.chapter(chapter_id)
        pending = project.store.begin(chapter_id)
        (pending.path / EXECUTED_NOTEBOOK).write_bytes(notebook_bytes)
        import hashlib

        inputs = project.current_inputs(chapter, backend)
        if inputs_update:
            inputs = inputs.model_copy(update=inputs_update)
        record = RunRecord(
            run_id=pending.run_id,
            chapter=chapter_id,
            notebook=NotebookRef(path=chapter.notebook, sha256=inputs.notebook_sha256),
            parameters=default_parameters(backend),
            backend=backend,
            command=f"pinb verify {chapter_id}",
            started_at=f"2026-11-30T10:{n:02d}:00.000Z",
            finished_at=f"2026-11-30T10:{n:02d}:05.000Z",
            status=status,
            failure=failure,
            environment=ENV,
            claims=tuple(
                ClaimOutcome(claim_id=cid, outcome=outcome, evidence=evidence, backend=backend)
                for cid, outcome, evidence in outcomes
            ),
            artifacts=(
                Artifact(path=EXECUTED_NOTEBOOK, sha256=hashlib.sha256(notebook_bytes).hexdigest(), kind="notebook"),
            ),
            inputs=inputs,
            warnings=warnings,
        )
        return pending.commit(record)

    return make
