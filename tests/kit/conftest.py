"""Fixtures: a throw-away project holding the kit's own notebooks, and synthetic run records."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from pinb.kit.claims import CLAIM_MIME, ClaimOutcome, mime_bundle
from pinb.kit.evidence import notebook_outcomes
from pinb.kit.project import Project, default_parameters
from pinb.kit.record import EXECUTED_NOTEBOOK, Artifact, Environment, NotebookRef, RunRecord
from pinb.kit.store import StoredRun

from .sample_registry import chapters

#: `PINB_REGISTRY` value naming the kit's sample chapters, importable in this test process.
REGISTRY = f"{chapters.__module__}:chapters"
HERE = Path(__file__).resolve().parent
NOTEBOOKS = HERE / "notebooks"
#: The `pinb` fixture: the CLI called in this process.
Pinb = Callable[..., tuple[int, str, str]]

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


def executed_notebook(
    chapter_id: str,
    run_id: str,
    outcomes: tuple[ClaimOutcome, ...],
    *,
    parameters: dict[str, Any],
    started_at: str,
    finished_at: str,
    exception: bool = False,
    malformed: bool = False,
) -> bytes:
    """An executed notebook as papermill writes it: one display output per claim outcome."""
    cells: list[dict[str, Any]] = [
        {
            "cell_type": "code",
            "execution_count": index + 1,
            "metadata": {},
            "source": f"check({outcome.claim_id!r})",
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": mime_bundle(outcome)}],
        }
        for index, outcome in enumerate(outcomes)
    ]
    if malformed:
        data = {CLAIM_MIME: {"claim_id": "not a claim id", "outcome": "holds"}, "text/plain": "?"}
        cells.append(
            {
                "cell_type": "code",
                "execution_count": len(cells) + 1,
                "metadata": {},
                "source": "",
                "outputs": [{"output_type": "display_data", "metadata": {}, "data": data}],
            }
        )
    papermill = {
        "input_path": f"notebooks/{chapter_id}.ipynb",
        "output_path": f"runs/{chapter_id}/.tmp-{run_id}-4242/executed.ipynb",
        "parameters": parameters,
        "start_time": started_at.replace("Z", "+00:00"),
        "end_time": finished_at.replace("Z", "+00:00"),
        "exception": True if exception else None,
    }
    nb = {"cells": cells, "metadata": {"papermill": papermill}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1).encode("utf-8")


@pytest.fixture
def pinb(project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Pinb:
    """The CLI in this process, against ``project`` and the sample chapters: ``(exit code, stdout, stderr)``."""
    monkeypatch.setenv("PINB_REGISTRY", REGISTRY)
    monkeypatch.setenv("PINB_ROOT", str(project.root))

    def run(*argv: str) -> tuple[int, str, str]:
        from pinb.cli import main

        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def record_run(project: Project) -> RecordRun:
    """Commit a synthetic run, its executed notebook holding exactly the outcomes its record lists:
    `record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")], ...)`."""
    counter = iter(range(1, 1000))

    def make(
        chapter_id: str,
        outcomes: Outcomes = (),
        *,
        status: str = "completed",
        failure: str | None = None,
        backend: str = "standin",
        inputs_update: dict[str, Any] | None = None,
        malformed: bool = False,
        warnings: tuple[str, ...] = (),
    ) -> StoredRun:
        n = next(counter)
        chapter = project.chapter(chapter_id)
        pending = project.store.begin(chapter_id)
        started_at, finished_at = f"2026-11-30T10:{n:02d}:00.000Z", f"2026-11-30T10:{n:02d}:05.000Z"
        claims = tuple(
            ClaimOutcome(claim_id=cid, outcome=outcome, evidence=evidence, backend=backend)
            for cid, outcome, evidence in outcomes
        )
        notebook = executed_notebook(
            chapter_id,
            pending.run_id,
            claims,
            parameters=default_parameters(backend),
            started_at=started_at,
            finished_at=finished_at,
            exception=status == "failed",
            malformed=malformed,
        )
        (pending.path / EXECUTED_NOTEBOOK).write_bytes(notebook)
        lost = notebook_outcomes(pending.path / EXECUTED_NOTEBOOK, backend)[1]

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
            started_at=started_at,
            finished_at=finished_at,
            status=status,
            failure=failure,
            environment=ENV,
            claims=claims,
            artifacts=(Artifact(path=EXECUTED_NOTEBOOK, sha256=hashlib.sha256(notebook).hexdigest(), kind="notebook"),),
            inputs=inputs,
            warnings=lost + warnings,
        )
        return pending.commit(record)

    return make


def recorded_template(root: Path, *batches: tuple[str, ...]) -> Path:
    """A project at `root` with the kit's notebooks, each batch of chapters verified once by a real kernel."""
    from pinb.kit.verify import VerifyOptions, verify

    shutil.copytree(NOTEBOOKS, root / "notebooks")
    project = Project(root=root, chapters=chapters())
    for batch in batches:
        options = VerifyOptions(chapters=batch, progress=False, force=True, command="pinb verify")
        for item in verify(project, options).results:
            assert item.run is not None and item.run.record.status == "completed", item.error
    return root


def project_copy(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A copy of `template` that `pinb` commands in this process find (`PINB_ROOT`, `PINB_REGISTRY`)."""
    root = tmp_path / "project"
    shutil.copytree(template, root)
    monkeypatch.setenv("PINB_REGISTRY", REGISTRY)
    monkeypatch.setenv("PINB_ROOT", str(root))
    return Project(root=root, chapters=chapters())
