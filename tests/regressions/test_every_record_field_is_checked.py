"""One-field edits to `run.json` passed `pinb runs check`: `status` edited to `failed` hid a run's findings (and
`runs prune` then deleted the run); an edited `inputs.text_fingerprint` or `inputs.pinb_code` made a stale run
current; a re-dated run (`+14:00`, `"zzz"`, a 2099 date) sorted as the latest and decided, and prune deleted the
newer runs; an entry added by hand to `runs/.verified.json` made an edited outcome pass. Now the kit seals every
field of the record into the executed notebook it hashes, recomputes the status of older (unsealed) records from
their notebook, checks the times, keys its cache by the bytes of every file and authenticates its entries, and
prune keeps every run a status names.
"""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from kit.conftest import project_copy, recorded_template
from kit.sample_registry import chapters
from pinb.cli import main
from pinb.kit.integrity import CACHE_FILE
from pinb.kit.project import Project
from pinb.kit.store import RunStore, StoredRun

pytestmark = pytest.mark.kernel

MISMATCH = "record does not match its notebook: "
COMMITTED_RUNS = Path(__file__).resolve().parents[2] / "runs"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kt-02 recorded twice (the newer run decides), kt-07 once: real runs, sealed by the kit."""
    return recorded_template(
        tmp_path_factory.mktemp("template"), ("kt-02-chapter", "kt-07-chapter"), ("kt-02-chapter",)
    )


@pytest.fixture
def project(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return project_copy(template, tmp_path, monkeypatch)


def _pinb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _runs(project: Project, chapter: str) -> list[StoredRun]:
    return [run for run in project.store.list().runs if run.record.chapter == chapter]


def _edit(folder: Path, change: Callable[[dict], None]) -> None:
    path = folder / "run.json"
    path.chmod(path.stat().st_mode | stat.S_IWUSR)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _refused(project: Project, capsys: pytest.CaptureFixture[str], folder: Path, reason: str) -> None:
    """`runs check` names the run, and its backend's verdicts are ERROR with the reason, never counted."""
    code, _, err = _pinb(capsys, "runs", "check")
    assert code == 1
    assert f"{folder}: {MISMATCH}" in err and reason in err, err
    code, out, _ = _pinb(capsys, "status", folder.parent.name, "--json")
    for claim in json.loads(out)["claims"]:
        assert claim["status"] == "ERROR", claim
        assert claim["reason"].startswith(MISMATCH) and reason in claim["reason"]


def test_status_edited_to_failed(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    newest = _runs(project, "kt-02-chapter")[-1]
    _edit(newest.path, lambda data: data.update(status="failed", failure="cell 3 raised ValueError"))
    _refused(project, capsys, newest.path, 'status is "failed" in the record, "completed" in the notebook\'s seal')
    assert _pinb(capsys, "runs", "prune")[0] == 0
    assert newest.path.is_dir()  # the run that gives the findings is kept: only `pinb runs rm` removes it


#: What the chapters expect now, in `changed_chapters`: kt-07's text and code changed since its run.
NEW_TEXT, NEW_CODE = "ab" * 32, "cd" * 32


def changed_chapters() -> dict:
    found = chapters()
    found["kt-07-chapter"] = found["kt-07-chapter"].model_copy(
        update={"text_fingerprint": NEW_TEXT, "code_fingerprint": NEW_CODE}
    )
    return found


@pytest.mark.parametrize("field", ["text_fingerprint", "pinb_code"])
def test_a_stale_run_edited_to_look_current(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, field: str
) -> None:
    monkeypatch.setenv("PINB_REGISTRY", f"{__name__}:changed_chapters")
    run = _runs(project, "kt-07-chapter")[-1]
    code, out, _ = _pinb(capsys, "status", "kt-07-chapter", "--json")
    assert json.loads(out)["claims"][0]["status"] == "STALE"
    # the stale run's record made current by hand: both inputs edited, then one (the other stays stale)
    _edit(run.path, lambda data: data["inputs"].update(text_fingerprint=NEW_TEXT, pinb_code=NEW_CODE))
    _refused(project, capsys, run.path, "inputs.text_fingerprint is")
    _edit(run.path, lambda data: data["inputs"].update({"text_fingerprint": run.record.inputs.text_fingerprint}))
    _edit(
        run.path,
        lambda data: data["inputs"].update({field: {"text_fingerprint": NEW_TEXT, "pinb_code": NEW_CODE}[field]}),
    )
    code, _, err = _pinb(capsys, "runs", "check")
    assert code == 1 and f"inputs.{field} is" in err


def test_edited_command_and_environment(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    run = _runs(project, "kt-07-chapter")[-1]
    _edit(run.path, lambda data: data.update(command="pinb verify --something-else"))
    _refused(project, capsys, run.path, "command is")
    _edit(run.path, lambda data: data.update(command=run.record.command))
    assert _pinb(capsys, "runs", "check")[0] == 0
    _edit(run.path, lambda data: data["environment"].update(git_dirty=not run.record.environment.git_dirty))
    _refused(project, capsys, run.path, "environment.git_dirty is")


@pytest.mark.parametrize(
    ("started_at", "reason"),
    [
        ("zzz", "its started_at 'zzz' is not a UTC time"),
        ("2026-12-02T07:24:47.779+14:00", "is not a UTC time as the kit writes it"),
    ],
)
def test_redated_runs(project: Project, capsys: pytest.CaptureFixture[str], started_at: str, reason: str) -> None:
    older, newer = _runs(project, "kt-02-chapter")
    _edit(older.path, lambda data: data.update(started_at=started_at))
    _refused(project, capsys, older.path, reason)
    _pinb(capsys, "runs", "prune")
    assert newer.path.is_dir() and older.path.is_dir()


def test_a_run_dated_in_the_future_never_decides(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    older, newer = _runs(project, "kt-02-chapter")
    _edit(
        older.path,
        lambda data: data.update(started_at="2099-01-01T00:00:00.000Z", finished_at="2099-01-01T00:00:05.000Z"),
    )
    _refused(project, capsys, older.path, "its finished_at 2099-01-01T00:00:05.000Z is in the future")
    assert _pinb(capsys, "runs", "prune")[0] == 0
    assert newer.path.is_dir() and older.path.is_dir()


def test_a_hand_made_cache_entry_vouches_for_nothing(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    run = _runs(project, "kt-02-chapter")[-1]
    assert _pinb(capsys, "runs", "check")[0] == 0
    cache_path = project.runs_dir / CACHE_FILE
    cache = json.loads(cache_path.read_text(encoding="utf-8"))
    key = f"kt-02-chapter/{run.record.run_id}"
    assert cache["runs"][key]["problem"] is None

    def to_holds(data: dict) -> None:
        for claim in data["claims"]:
            claim["outcome"] = "holds"

    _edit(run.path, to_holds)
    # what the cache said of the untouched run, copied onto the edited one, and an entry claiming a fresh digest
    for entry in (cache["runs"][key], {**cache["runs"][key], "digest": "0" * 64}):
        cache["runs"][key] = entry
        cache_path.write_text(json.dumps(cache), encoding="utf-8")
        _refused(project, capsys, run.path, "is holds in the record, contradicted in the notebook")


def test_deleting_the_cache_changes_no_answer(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    run = _runs(project, "kt-07-chapter")[-1]
    _edit(run.path, lambda data: data["inputs"].update(text_fingerprint="ab" * 32))
    first = _pinb(capsys, "status", "--json")
    second = _pinb(capsys, "status", "--json")  # answered from the cache
    (project.runs_dir / CACHE_FILE).unlink()
    third = _pinb(capsys, "status", "--json")
    assert first == second == third


def _unseal(folder: Path) -> None:
    """Make a run as the kit recorded it before the seal (record schema 1): no seal in its executed notebook."""
    import hashlib

    notebook = folder / "executed.ipynb"
    data = json.loads(notebook.read_text(encoding="utf-8"))
    data["metadata"].pop("pinb_seal", None)
    notebook.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    digest = hashlib.sha256(notebook.read_bytes()).hexdigest()
    record_path = folder / "run.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record["schema_version"] = 1
    for artifact in record["artifacts"]:
        if artifact["path"] == "executed.ipynb":
            artifact["sha256"] = digest
    record_path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


@pytest.fixture
def committed(tmp_path: Path) -> RunStore:
    """A copy of the project's committed runs as the kit recorded them before the seal (unsealed, record schema 1):
    checked on what their notebooks carry."""
    shutil.copytree(COMMITTED_RUNS, tmp_path / "runs", ignore=shutil.ignore_patterns(CACHE_FILE))
    for record in (tmp_path / "runs").glob("*/*/run.json"):
        _unseal(record.parent)
    store = RunStore(tmp_path / "runs")
    runs, problems = store.check()
    assert runs and not problems
    return store


def test_an_unsealed_record_edited_to_failed(committed: RunStore) -> None:
    run = committed.list().runs[-1]
    assert run.record.schema_version == 1
    _edit(run.path, lambda data: data.update(status="failed", failure="cell 3 raised ValueError"))
    (found,) = [item for item in committed.list().runs if item.path == run.path]
    assert found.problem == f"{MISMATCH}the notebook ran every cell without an exception, yet the record says failed"


@pytest.mark.parametrize(
    "change",
    [
        {"started_at": "zzz"},
        {"started_at": "2026-12-02T07:24:47.779+14:00"},
        {"started_at": "2099-01-01T00:00:00.000Z", "finished_at": "2099-01-01T00:01:00.000Z"},
    ],
)
def test_an_unsealed_record_redated(committed: RunStore, change: dict[str, str]) -> None:
    run = committed.list().runs[0]
    _edit(run.path, lambda data: data.update(change))
    (found,) = [item for item in committed.list().runs if item.path == run.path]
    assert found.problem is not None and found.problem.startswith(MISMATCH)


def test_a_sealed_record_cannot_pass_for_an_unsealed_one(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    run = _runs(project, "kt-07-chapter")[-1]
    assert run.record.schema_version == 2
    _edit(run.path, lambda data: data.update(schema_version=1, status="failed"))
    _refused(project, capsys, run.path, "schema_version is 1 in the record, 2 in the notebook's seal")
