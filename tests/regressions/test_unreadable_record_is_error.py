"""A corrupt or unreadable record silently dropped findings: a git merge conflict in the findings run's `run.json`,
one unknown key, or an unreadable file made the run vanish with one warning, `pinb status` exited 0, and
`pinb report --all` rewrote the README table without the findings. Now such a run's backend shows ERROR naming the
file and the problem, `status` exits 2, and `report --all` refuses to rewrite the ledger.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from kit.conftest import project_copy, recorded_template
from pinb.cli import main
from pinb.kit.project import Project

pytestmark = pytest.mark.kernel

README = "# Project\n\n<!-- ledger:start -->\nold table\n<!-- ledger:end -->\n"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = recorded_template(tmp_path_factory.mktemp("template"), ("kt-02-chapter",))
    (root / "README.md").write_text(README, encoding="utf-8")
    return root


@pytest.fixture
def project(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return project_copy(template, tmp_path, monkeypatch)


def _record(project: Project) -> Path:
    (run,) = project.store.list().runs
    path = run.path / "run.json"
    path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return path


def _conflict(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    ours = text.replace('"outcome": "contradicted"', '"outcome": "holds"')
    path.write_text(f"<<<<<<< HEAD\n{ours}=======\n{text}>>>>>>> other\n", encoding="utf-8")


def _unknown_key(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["reviewed_by"] = "someone"
    path.write_text(json.dumps(data), encoding="utf-8")


def _a_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (_conflict, "corrupt (it holds merge conflict markers)"),
        (_unknown_key, "corrupt: reviewed_by: Extra inputs are not permitted"),
        (_a_folder, "not a regular file"),
    ],
)
def test_an_unreadable_record_is_error_loudly(
    project: Project, capsys: pytest.CaptureFixture[str], damage, problem: str
) -> None:
    assert main(["status", "kt-02-chapter", "--json"]) == 0
    before = json.loads(capsys.readouterr().out)["claims"]
    assert "CONTRADICTED" in [claim["status"] for claim in before]  # the finding, before the damage
    path = _record(project)
    damage(path)
    code = main(["status", "kt-02-chapter", "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert f"pinb: error: the run record {path} is unreadable: {problem}" in err
    claims = json.loads(out)["claims"]
    runnable = [claim for claim in claims if claim["kind"] == "runnable"]
    assert runnable and all(claim["status"] == "ERROR" for claim in runnable)
    assert all(f"the run record {path} is unreadable: {problem}" in claim["reason"] for claim in runnable)
    assert all(claim["backend"] == "standin" for claim in runnable)  # its backend, from the file or its notebook

    code = main(["report", "--all"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "the ledger is not rewritten" in err
    assert (project.root / "README.md").read_text(encoding="utf-8") == README
    assert not (project.root / "reports").exists()


def test_an_unreadable_chapter_folder(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests run as root, where a mode-000 folder stays readable: the failure is simulated."""
    folder = project.runs_dir / "kt-02-chapter"
    real = Path.iterdir

    def iterdir(self: Path):
        if self == folder:
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    code = main(["status", "kt-02-chapter", "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert f"pinb: error: cannot read the run folder {folder}: Permission denied" in err
    claims = [claim for claim in json.loads(out)["claims"] if claim["kind"] == "runnable"]
    assert claims and all(claim["status"] == "ERROR" for claim in claims)
    assert main(["report", "--all"]) == 2
