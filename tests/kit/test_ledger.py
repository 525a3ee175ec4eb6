"""The committed ledger (reports and the README table) is rendered from the runs alone: the same runs give the same
text on any machine, so the test that compares the committed ledger with the runs cannot differ between machines."""

from __future__ import annotations

import platform
import shutil

import pytest

from pinb.kit import environment, ledger
from pinb.kit.project import Project

from .conftest import RecordRun

README = "# Title\n\n<!-- ledger:start -->\n<!-- ledger:end -->\n\nAfter.\n"


def test_the_ledger_does_not_depend_on_the_reading_machine(
    project: Project, record_run: RecordRun, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    (project.root / "README.md").write_text(README, encoding="utf-8")
    (project.root / "reports").mkdir()
    record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI"), ("kt-02.text.words", "contradicted", "6")])
    record_run("kt-02-chapter", [], status="failed", failure="the kernel died: Kernel died")
    record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")], inputs_update={"environment": {"python": "3.0"}})
    first = {path.relative_to(project.root): text for path, text in ledger.rendered(project).items()}

    # another machine: another interpreter, platform, package versions, checkout folder and clock
    def no_machine(*_args: object) -> object:
        raise AssertionError("the ledger must not ask about the machine")

    monkeypatch.setattr(environment, "reuse_key", no_machine)
    monkeypatch.setattr(environment, "package_version", no_machine)
    monkeypatch.setattr(platform, "python_version", lambda: "3.99.0")
    monkeypatch.setattr(platform, "system", lambda: "Elsewhere")
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(project.root, elsewhere)
    moved = Project(root=elsewhere, chapters=project.chapters)
    second = {path.relative_to(elsewhere): text for path, text in ledger.rendered(moved).items()}
    assert first == second
    readme = first[next(path for path in first if path.name == "README.md")]
    assert len(first) == 2 * len(project.chapters) + 1
    assert "| kt-02-chapter | overall | 2 | 1 | 0 | 1 | 0 | 0 | 0 | 0 |" in readme


def test_refresh_writes_only_what_differs(project: Project, record_run: RecordRun) -> None:
    (project.root / "README.md").write_text(README, encoding="utf-8")
    record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    assert [path.name for path in ledger.stale(project)] == ["README.md"]  # no reports/ folder: not kept
    assert [path.name for path in ledger.refresh(project)] == ["README.md"]
    assert ledger.refresh(project) == [] and ledger.stale(project) == []
    text = (project.root / "README.md").read_text(encoding="utf-8")
    assert text.startswith("# Title\n\n<!-- ledger:start -->\n| Chapter |") and text.endswith(
        "<!-- ledger:end -->\n\nAfter.\n"
    )
