"""Claim status is derived from the run store alone (design.md §5)."""

from __future__ import annotations

from pinb.kit.project import Project
from pinb.kit.status import ClaimStatus, chapter_statuses

from .conftest import RecordRun


def _statuses(project: Project, chapter_id: str) -> dict[str, ClaimStatus]:
    runs = project.store.list().runs
    return {s.claim_id: s for s in chapter_statuses(project, project.chapter(chapter_id), runs)}


def _brief(status: ClaimStatus) -> tuple[str, str | None, str | None]:
    return status.status, status.run_id, status.backend


def test_no_runs_everything_is_unrun_with_a_reason(project: Project) -> None:
    statuses = _statuses(project, "kt-01-chapter")
    assert {cid: _brief(s) for cid, s in statuses.items()} == {
        "kt-01.math.adds": ("UNRUN", None, None),
        "kt-01.math.multiplies": ("UNRUN", None, None),
        "kt-01.history.fork": ("UNRUN", None, None),
    }
    assert statuses["kt-01.math.adds"].reason == "no run on record on a backend that can check it (standin, pi)"
    assert statuses["kt-01.history.fork"].reason.startswith("reported from a fork")


def test_latest_current_run_decides(project: Project, record_run: RecordRun) -> None:
    record_run("kt-02-chapter", [("kt-02.text.upper", "contradicted", "old"), ("kt-02.text.words", "holds", "5")])
    latest = record_run(
        "kt-02-chapter", [("kt-02.text.upper", "holds", "PI"), ("kt-02.text.words", "contradicted", "6")]
    )
    statuses = _statuses(project, "kt-02-chapter")
    run_id = latest.record.run_id
    assert _brief(statuses["kt-02.text.upper"]) == ("OBSERVED", run_id, "standin")
    assert _brief(statuses["kt-02.text.words"]) == ("CONTRADICTED", run_id, "standin")
    assert statuses["kt-02.text.words"].evidence == "6"


def test_error_outcomes_and_failed_runs_are_errors(project: Project, record_run: RecordRun) -> None:
    run = record_run(
        "kt-03-chapter",
        [("kt-03.steps.first", "holds", "ran"), ("kt-03.steps.guarded", "error", "KeyError: 'missing'")],
        status="failed",
        failure="cell 6 raised RuntimeError: broke",
    )
    statuses = _statuses(project, "kt-03-chapter")
    assert _brief(statuses["kt-03.steps.first"])[0] == "OBSERVED"
    assert (statuses["kt-03.steps.guarded"].status, statuses["kt-03.steps.guarded"].reason) == (
        "ERROR",
        "KeyError: 'missing'",
    )
    after = statuses["kt-03.steps.after"]
    assert _brief(after) == ("ERROR", run.record.run_id, "standin")
    assert (
        after.reason == f"run {run.record.run_id} failed before checking this claim: cell 6 raised RuntimeError: broke"
    )


def test_interrupted_runs_are_not_evidence(project: Project, record_run: RecordRun) -> None:
    done = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2"), ("kt-01.math.multiplies", "holds", "42")])
    record_run("kt-01-chapter", [], status="interrupted", failure="interrupted (Ctrl-C)")
    assert _brief(_statuses(project, "kt-01-chapter")["kt-01.math.adds"]) == ("OBSERVED", done.record.run_id, "standin")


def test_unchecked_and_skipped_claims_are_unrun(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "skipped", "needs the terminal UI")])
    statuses = _statuses(project, "kt-01-chapter")
    assert _brief(statuses["kt-01.math.adds"]) == ("UNRUN", None, "standin")
    assert statuses["kt-01.math.adds"].reason == "skipped on standin: needs the terminal UI"
    assert statuses["kt-01.math.multiplies"].reason == f"run {run.record.run_id} completed without checking this claim"


def test_older_inputs_are_stale_and_say_what_changed(project: Project, record_run: RecordRun) -> None:
    run = record_run(
        "kt-01-chapter",
        [("kt-01.math.adds", "holds", "2")],
        inputs_update={"pinb_version": "0.0.9", "text_fingerprint": "f" * 64},
    )
    status = _statuses(project, "kt-01-chapter")["kt-01.math.adds"]
    assert _brief(status) == ("STALE", run.record.run_id, "standin")
    assert status.reason == "latest run is on older inputs: pinb 0.0.9 → 0.1.0; the chapter text changed"
    # editing the notebook makes even a current-looking run stale
    fresh = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    assert _statuses(project, "kt-01-chapter")["kt-01.math.adds"].status == "OBSERVED"
    notebook = project.root / "notebooks" / "holds.ipynb"
    notebook.write_text(notebook.read_text().replace("evaluated", "gave"))
    status = _statuses(project, "kt-01-chapter")["kt-01.math.adds"]
    assert _brief(status) == ("STALE", fresh.record.run_id, "standin")
    assert "the notebook changed" in status.reason


def test_other_pi_versions_are_stale_and_findings_win_across_backends(project: Project, record_run: RecordRun) -> None:
    old = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")], backend="pi@1.0.3")
    status = _statuses(project, "kt-02-chapter")["kt-02.text.upper"]
    assert _brief(status) == ("STALE", old.record.run_id, "pi@1.0.3")
    assert "pi@1.0.3 is not the current Pi version (1.6.0)" in status.reason
    record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")], backend="standin")
    on_pi = record_run("kt-02-chapter", [("kt-02.text.upper", "contradicted", "pi")], backend="pi@1.6.0")
    record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")], backend="standin")
    status = _statuses(project, "kt-02-chapter")["kt-02.text.upper"]
    assert _brief(status) == ("CONTRADICTED", on_pi.record.run_id, "pi@1.6.0")


def test_status_json_is_exactly_the_contract(project: Project, record_run: RecordRun) -> None:
    record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    status = _statuses(project, "kt-01-chapter")["kt-01.math.adds"]
    assert list(status.contract()) == ["claim_id", "chapter", "kind", "status", "run_id", "backend", "reason"]
