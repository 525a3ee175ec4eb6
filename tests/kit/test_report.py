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
    text = re.sub(r'"pinb_code": "[0-9a-f]{64}"', '"pinb_code": "<pinb-code>"', text)
    text = re.sub(
        r"(pinb code digest \(sha256 of the code the verdicts depend on\): `)[0-9a-f]{64}", r"\1<pinb-code>", text
    )
    # the executed notebook names its run id and times, so its hash differs from run to run
    text = re.sub(r'(executed\.ipynb[`"]?,?\s*(?:\| `|"sha256": "))[0-9a-f]{64}', r"\1<executed-sha256>", text)
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
    assert text.count("| **UNRUN** |") == 4  # the audit, and the reported claim's experiment
    assert text.count("| **UNRUN** — standin: **UNRUN** · pi@1.6.0: **UNRUN** |") == 2  # runnable experiments
    assert text.count("| none (reported) | **UNRUN** |") == 1
    assert "### Version drift" not in text


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
        + ", ".join(f"kt-0{n}-chapter" for n in range(1, 9))
        + ")\n"
    )
    assert main(["report", "kt-02-chapter", "-o", str(tmp_path / "no" / "such" / "dir.md"), *root]) == 2
    assert capsys.readouterr().err.startswith("pinb: error: cannot write ")


@pytest.fixture
def versions(project: Project, record_run: RecordRun) -> Project:
    """Chapter 02 on three backends: upper holds everywhere; words holds on 1.0.3 and is contradicted on 1.6.0."""
    record_run(
        "kt-02-chapter",
        [("kt-02.text.upper", "holds", "'PI'"), ("kt-02.text.words", "holds", "5 words | on 1.0.3")],
        backend="pi@1.0.3",
    )
    record_run(
        "kt-02-chapter",
        [("kt-02.text.upper", "holds", "'PI'"), ("kt-02.text.words", "contradicted", "6 words\non 1.6.0")],
        backend="pi@1.6.0",
    )
    record_run(
        "kt-02-chapter",
        [("kt-02.text.upper", "holds", "'PI'"), ("kt-02.text.words", "skipped", "the stand-in has no word list")],
    )
    return project


def test_multi_backend_report_golden(versions: Project) -> None:
    report = build_report(versions, versions.chapter("kt-02-chapter"), versions.store.list().runs, now=NOW)
    _compare("report-kt-02-versions.md", render_markdown(report))
    _compare("report-kt-02-versions.json", render_json(report))


def test_every_backend_is_cited(versions: Project) -> None:
    runs = versions.store.list().runs
    old_pi, pi, standin = (run.record.run_id for run in runs)
    report = build_report(versions, versions.chapter("kt-02-chapter"), runs, now=NOW)
    assert report.backends_cited == ("standin", "pi@1.6.0", "pi@1.0.3")
    assert [entry.run_id for entry in report.runs] == [old_pi, pi, standin]
    assert [(e.current, e.current_inputs) for e in report.runs] == [(False, True), (True, True), (True, True)]
    upper, words = report.audit
    assert (upper.status, words.status) == ("OBSERVED", "CONTRADICTED")
    assert [(v.backend, v.status, v.run_id) for v in words.verdicts] == [
        ("standin", "UNRUN", standin),
        ("pi@1.6.0", "CONTRADICTED", pi),
        ("pi@1.0.3", "OBSERVED", old_pi),
    ]
    text = render_markdown(report)
    assert "backends in the runs cited: standin, pi@1.6.0, pi@1.0.3" in text
    row = next(line for line in text.splitlines() if line.startswith("| `kt-02.text.upper`: "))
    assert row.endswith(
        f"| standin, pi@1.6.0, pi@1.0.3: 'PI' | standin: OBSERVED (run `{standin}`) · "
        f"pi@1.6.0: OBSERVED (run `{pi}`) · pi@1.0.3: OBSERVED (run `{old_pi}`) |"
    )
    assert f"### Run `{old_pi}` (pi@1.0.3, not the current Pi version)" in text
    assert "pinb verify kt-02-chapter --backend pi --pi-version 1.0.3 --force" in text
    experiment = next(row for row in report.experiments if row.claim_id == "kt-02.text.words")
    assert [(item.backend, item.result, item.reason) for item in experiment.backends] == [
        ("standin", "UNRUN", "not checked: the stand-in has no word list"),
        ("pi@1.6.0", "CONTRADICTED", "the observation contradicts the book (a finding)"),
        ("pi@1.0.3", "OBSERVED", ""),
    ]
    assert "- kt-02.text.words on standin: not checked: the stand-in has no word list" in text


def test_markdown_tables_stay_tables(versions: Project) -> None:
    """Evidence with a pipe and a newline: every table row keeps its column count."""
    text = render_markdown(build_report(versions, versions.chapter("kt-02-chapter"), versions.store.list().runs))
    for block in text.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if not rows:
            continue
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in rows}
        assert len(widths) == 1, block
    assert "5 words \\| on 1.0.3" in text
    assert "6 words on 1.6.0" in text


def test_version_drift(versions: Project, record_run: RecordRun) -> None:
    runs = versions.store.list().runs
    old_pi, pi, _ = (run.record.run_id for run in runs)
    report = build_report(versions, versions.chapter("kt-02-chapter"), runs, now=NOW)
    assert [(row.claim_id, [(v.backend, v.status) for v in row.verdicts]) for row in report.drift] == [
        ("kt-02.text.words", [("pi@1.0.3", "OBSERVED"), ("pi@1.6.0", "CONTRADICTED")])
    ]
    text = render_markdown(report)
    section = text.split("### Version drift", 1)[1].split("### Across Pi releases", 1)[0]
    assert (
        f"| `kt-02.text.words` | pi@1.0.3: OBSERVED (run `{old_pi}`) → pi@1.6.0: **CONTRADICTED** (run `{pi}`) | "
        "pi@1.0.3: 5 words \\| on 1.0.3 · pi@1.6.0: 6 words on 1.6.0 |"
    ) in section
    assert "kt-02.text.upper" not in section
    # a skip is not drift: once 1.6.0 no longer checks the claim, the versions do not disagree
    record_run("kt-02-chapter", [("kt-02.text.words", "skipped", "not on 1.6.0")], backend="pi@1.6.0")
    report = build_report(versions, versions.chapter("kt-02-chapter"), versions.store.list().runs, now=NOW)
    assert report.drift == ()
    assert "### Version drift" not in render_markdown(report)


def test_stale_overall_still_shows_another_pi_versions_evidence(project: Project, record_run: RecordRun) -> None:
    stale = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "old")], inputs_update={"pinb_version": "0"})
    old_pi = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "'PI' on 1.0.3")], backend="pi@1.0.3")
    report = build_report(project, project.chapter("kt-02-chapter"), project.store.list().runs, now=NOW)
    upper = report.audit[0]
    assert upper.status == "STALE"
    assert [(v.backend, v.status, v.current) for v in upper.verdicts] == [("pi@1.0.3", "OBSERVED", False)]
    row = next(line for line in render_markdown(report).splitlines() if line.startswith("| `kt-02.text.upper`: "))
    assert row.endswith(
        "| **STALE** | latest run is on older inputs: pi@1.0.3 is not the current Pi version (1.6.0) · "
        f"pi@1.0.3: 'PI' on 1.0.3 | latest `{old_pi.record.run_id}` (pi@1.0.3) · "
        f"pi@1.0.3: OBSERVED (run `{old_pi.record.run_id}`) |"
    )
    experiment = report.experiments[0]
    assert [(item.backend, item.result) for item in experiment.backends] == [
        ("standin", "UNRUN"),
        ("pi@1.6.0", "UNRUN"),
        ("pi@1.0.3", "OBSERVED"),
    ]
    assert experiment.backends[0].reason == (
        "no completed run on current inputs (latest run is on older inputs: pinb 0 → 0.1.0)"
    )
    assert [entry.run_id for entry in report.runs] == [old_pi.record.run_id]
    assert stale.record.run_id not in render_markdown(report)
