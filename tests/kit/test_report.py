"""The evidence report, compared with golden files after normalising run ids and the report date.

Regenerate the goldens with `PINB_UPDATE_GOLDEN=1 pytest tests/kit/test_report.py`.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pinb.cli import main
from pinb.kit.project import Project
from pinb.kit.report import build_report, render_json, render_markdown

from .conftest import REGISTRY, RecordRun

GOLDEN = Path(__file__).resolve().parent / "golden"
NOW = datetime(2026, 11, 30, 21, 0, tzinfo=UTC)
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")


def normalise(text: str) -> str:
    ids: dict[str, str] = {}
    text = RUN_ID.sub(lambda m: ids.setdefault(m.group(0), f"RUN-{len(ids) + 1}"), text)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<generated-at>", text)


def _compare(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("PINB_UPDATE_GOLDEN"):
        path.write_text(normalise(text), encoding="utf-8")
    assert normalise(text) == path.read_text(encoding="utf-8")


@pytest.fixture
def ledger(project: Project, record_run: RecordRun) -> Project:
    """Chapter 02 with history: a stale run, a failed run, then a completed run with a finding."""
    record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "'PI'")], inputs_update={"pinb_version": "0.0.9"})
    record_run("kt-02-chapter", [], status="failed", failure="cell 4 raised NameError: name 'x' is not defined")
    record_run(
        "kt-02-chapter",
        [("kt-02.text.upper", "holds", "'pi'.upper() gave 'PI'"), ("kt-02.text.words", "contradicted", "6 words")],
    )
    record_run(
        "kt-01-chapter",
        [("kt-01.math.adds", "holds", "1 + 1 evaluated to 2")],
        status="failed",
        failure="the kernel died: Kernel died",
    )
    return project


def test_markdown_report_golden(ledger: Project) -> None:
    for chapter_id, name in (("kt-02-chapter", "report-kt-02.md"), ("kt-01-chapter", "report-kt-01.md")):
        report = build_report(ledger, ledger.chapter(chapter_id), ledger.store.list().runs, now=NOW)
        _compare(name, render_markdown(report))


def test_json_report_golden(ledger: Project) -> None:
    report = build_report(ledger, ledger.chapter("kt-02-chapter"), ledger.store.list().runs, now=NOW)
    text = render_json(report)
    data = json.loads(text)
    assert [row["result"] for row in data["experiments"]] == ["OBSERVED", "CONTRADICTED"]
    _compare("report-kt-02.json", text)


def test_a_chapter_with_no_runs_is_all_unrun(project: Project) -> None:
    report = build_report(project, project.chapter("kt-01-chapter"), [], now=NOW)
    assert {row.result for row in report.experiments} == {"UNRUN"}
    text = render_markdown(report)
    assert "No runs on record for this chapter." in text
    assert text.count("| **UNRUN** |") == 6


def test_report_command_writes_a_file(
    ledger: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "report.md"
    root = ["--root", str(ledger.root)]
    monkeypatch.setenv("PINB_REGISTRY", REGISTRY)
    assert main(["report", "kt-02-chapter", "--format", "md", "-o", str(out), *root]) == 0
    assert out.read_text().startswith("# Evidence report: chapter 02, A finding")
    assert main(["report", "kt-02-chapter", "--format", "json", *root]) == 0
    assert json.loads(capsys.readouterr().out)["chapter"] == "kt-02-chapter"
    assert main(["report", "kt-99-chapter", *root]) == 2
    assert (
        capsys.readouterr().err
        == "pinb: error: unknown chapter 'kt-99-chapter' (known: "
        + ", ".join(f"kt-0{n}-chapter" for n in range(1, 8))
        + ")\n"
    )
    assert main(["report", "kt-02-chapter", "-o", str(tmp_path / "no" / "such" / "dir.md"), *root]) == 2
    assert capsys.readouterr().err.startswith("pinb: error: cannot write ")
