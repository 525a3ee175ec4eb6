"""Editing a run changed the verdict, undetected: a `contradicted` outcome edited to `holds` in `run.json` made the
claim OBSERVED, and `runs check` found nothing; a `run.json` alone, with no artefacts and no notebook, counted; a
run folder copied under a new id was not noticed; an edited or deleted artefact or executed notebook was noticed
only by `runs check`; a file added to a run folder was never noticed. Now `status` and `report` verify a run
before counting it, and its claims show ERROR with "record does not match its notebook: …".

The runs here are real: the kit's notebooks executed once by a kernel, then copied and tampered with per case.
"""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from kit.conftest import project_copy, recorded_template
from pinb.cli import main
from pinb.kit.project import Project
from pinb.kit.store import StoredRun

pytestmark = pytest.mark.kernel

MISMATCH = "record does not match its notebook: "


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return recorded_template(tmp_path_factory.mktemp("template"), ("kt-02-chapter", "kt-07-chapter"))


@pytest.fixture
def project(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return project_copy(template, tmp_path, monkeypatch)


def _pinb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _run(project: Project, chapter: str) -> StoredRun:
    (run,) = [run for run in project.store.list().runs if run.record.chapter == chapter]
    return run


def _writable(path: Path) -> Path:
    path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return path


def _edit_record(run: StoredRun, change: Callable[[dict], None]) -> None:
    path = _writable(run.path / "run.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _status(project: Project, capsys: pytest.CaptureFixture[str], chapter: str) -> dict[str, dict]:
    code, out, _ = _pinb(capsys, "status", chapter, "--json")
    assert code == 0
    return {claim["claim_id"]: claim for claim in json.loads(out)["claims"]}


def _assert_not_counted(
    project: Project, capsys: pytest.CaptureFixture[str], chapter: str, claim: str, reason: str
) -> None:
    status = _status(project, capsys, chapter)[claim]
    assert status["status"] == "ERROR"
    assert status["reason"].startswith(MISMATCH), status["reason"]
    assert reason in status["reason"]
    code, out, err = _pinb(capsys, "report", chapter)
    assert code == 0
    assert MISMATCH + reason.split(" (")[0] in out
    assert "| OBSERVED |" not in out
    code, _, err = _pinb(capsys, "runs", "check")
    assert code == 1 and MISMATCH in err


def test_untouched_runs_are_counted(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert _status(project, capsys, "kt-07-chapter")["kt-07.trace.written"]["status"] == "OBSERVED"
    statuses = _status(project, capsys, "kt-02-chapter")
    assert statuses["kt-02.text.words"]["status"] == "CONTRADICTED"
    assert _pinb(capsys, "runs", "check")[:2] == (0, "2 run(s) checked, 0 problem(s)\n")


def test_an_edited_outcome(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    def to_holds(data: dict) -> None:
        for claim in data["claims"]:
            if claim["outcome"] == "contradicted":
                claim["outcome"] = "holds"

    _edit_record(_run(project, "kt-02-chapter"), to_holds)
    reason = "kt-02.text.words is holds in the record, contradicted in the notebook"
    _assert_not_counted(project, capsys, "kt-02-chapter", "kt-02.text.words", reason)
    # the other claim of that run is not counted either: the whole record is suspect
    assert _status(project, capsys, "kt-02-chapter")["kt-02.text.upper"]["status"] == "ERROR"


def test_an_edited_evidence_text(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    def soften(data: dict) -> None:
        data["claims"][0]["evidence"] = "all good"

    _edit_record(_run(project, "kt-07-chapter"), soften)
    reason = "kt-07.trace.written's evidence differs between the record and the notebook"
    _assert_not_counted(project, capsys, "kt-07-chapter", "kt-07.trace.written", reason)


def test_a_record_alone_with_no_artefacts_and_no_notebook(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(project, "kt-07-chapter")
    _edit_record(run, lambda data: data.update(artifacts=[]))
    for item in list(run.path.iterdir()):
        if item.name != "run.json":
            shutil.rmtree(item) if item.is_dir() else item.unlink()
    _assert_not_counted(
        project, capsys, "kt-07-chapter", "kt-07.trace.written", "its record lists no executed notebook"
    )


def test_a_run_folder_copied_under_a_new_id(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(project, "kt-07-chapter")
    new_id = run.record.run_id[:-6] + ("aaaaaa" if not run.record.run_id.endswith("aaaaaa") else "bbbbbb")
    copy = run.path.parent / new_id
    shutil.copytree(run.path, copy)
    # copied as it is: the record names another folder; then with the record edited to match
    status = _status(project, capsys, "kt-07-chapter")["kt-07.trace.written"]
    assert status["status"] == "ERROR"
    assert status["reason"].startswith(MISMATCH) and status["reason"].endswith("(a copied run)")
    problems = {r.record.run_id: r.problem for r in project.store.list().runs}
    assert f"it is in folder {new_id} but its record names run {run.record.run_id} (a copied run)" in problems[new_id]
    _edit_record(replace(run, path=copy), lambda data: data.update(run_id=new_id))
    reason = f"the notebook was written for run {run.record.run_id}, not run {new_id}"
    status = _status(project, capsys, "kt-07-chapter")["kt-07.trace.written"]
    assert status["status"] == "ERROR"
    reasons = {status["reason"]} | {verdict["reason"] for verdict in status["backends"]}
    assert any(reason in text for text in reasons) or "(a copied run)" in status["reason"]
    listing = project.store.list()
    problems = {r.record.run_id: r.problem for r in listing.runs}
    assert reason in problems[new_id]
    assert "its executed notebook is the same file as run" in problems[run.record.run_id]


@pytest.mark.parametrize(
    ("target", "action", "reason"),
    [
        ("executed.ipynb", "edit", "executed.ipynb was changed"),
        ("executed.ipynb", "delete", "executed.ipynb is missing"),
        ("artifacts/loop.jsonl", "edit", "artifacts/loop.jsonl was changed"),
        ("artifacts/loop.jsonl", "delete", "artifacts/loop.jsonl is missing"),
        ("kernel.log", "edit", "kernel.log was changed"),
        ("notes.txt", "add", "notes.txt is in the run folder but not in its record"),
        ("artifacts/.hidden", "add", "artifacts/.hidden is in the run folder but not in its record"),
    ],
)
def test_artefacts_edited_deleted_or_added(
    project: Project, capsys: pytest.CaptureFixture[str], target: str, action: str, reason: str
) -> None:
    run = _run(project, "kt-07-chapter")
    path = run.path / target
    if action == "edit":
        _writable(path).write_bytes(path.read_bytes().replace(b"agent_start", b"agent_end") + b"\n")
    elif action == "delete":
        path.unlink()
    else:
        path.write_text("added later\n")
    _assert_not_counted(project, capsys, "kt-07-chapter", "kt-07.trace.written", reason)


def test_a_moved_start_time(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """Which run is the latest comes from the record's start time: moving it past its own finish is caught."""
    _edit_record(_run(project, "kt-07-chapter"), lambda data: data.update(started_at="2030-01-01T00:00:00.000Z"))
    _assert_not_counted(project, capsys, "kt-07-chapter", "kt-07.trace.written", "it finished (")
