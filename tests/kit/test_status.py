"""Claim status is derived from the run store alone (design.md §5)."""

from __future__ import annotations

import pytest

from pinb.errors import KitError
from pinb.kit.project import Project
from pinb.kit.status import ClaimStatus, chapter_statuses, resolve_backend

from .conftest import RecordRun


def _statuses(project: Project, chapter_id: str, backend: str | None = None) -> dict[str, ClaimStatus]:
    runs = project.store.list().runs
    return {s.claim_id: s for s in chapter_statuses(project, project.chapter(chapter_id), runs, backend)}


def _verdicts(status: ClaimStatus) -> list[tuple[str, str, str, bool]]:
    return [(v.backend, v.status, v.run_id, v.current) for v in status.backends]


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


def test_error_outcomes_are_errors_and_a_failed_run_alone_is_no_verdict(
    project: Project, record_run: RecordRun
) -> None:
    done = record_run(
        "kt-03-chapter",
        [
            ("kt-03.steps.first", "holds", "ran"),
            ("kt-03.steps.guarded", "error", "KeyError: 'missing'"),
            ("kt-03.steps.after", "holds", "after"),
        ],
    )
    statuses = _statuses(project, "kt-03-chapter")
    assert _brief(statuses["kt-03.steps.first"]) == ("OBSERVED", done.record.run_id, "standin")
    assert (statuses["kt-03.steps.guarded"].status, statuses["kt-03.steps.guarded"].reason) == (
        "ERROR",
        "KeyError: 'missing'",
    )
    # a later run that failed is an attempt: it is named, and the completed run's verdicts stand
    failed = record_run(
        "kt-03-chapter",
        [("kt-03.steps.first", "contradicted", "broke")],
        status="failed",
        failure="cell 6 raised RuntimeError: broke",
    )
    note = f"run {failed.record.run_id} failed: cell 6 raised RuntimeError: broke"
    statuses = _statuses(project, "kt-03-chapter")
    assert _brief(statuses["kt-03.steps.first"]) == ("OBSERVED", done.record.run_id, "standin")
    assert statuses["kt-03.steps.first"].last_attempt == note
    assert statuses["kt-03.steps.first"].backends[0].contract()["last_attempt"] == note


def test_a_failed_run_alone_gives_no_verdict(project: Project, record_run: RecordRun) -> None:
    failed = record_run(
        "kt-03-chapter",
        [("kt-03.steps.first", "holds", "ran")],
        status="failed",
        failure="cell 6 raised RuntimeError: broke",
    )
    after = _statuses(project, "kt-03-chapter")["kt-03.steps.first"]
    assert _brief(after) == ("UNRUN", None, "standin")
    assert after.reason == (
        "no completed run on current inputs; last attempt: "
        f"run {failed.record.run_id} failed: cell 6 raised RuntimeError: broke"
    )


def test_interrupted_runs_are_not_evidence(project: Project, record_run: RecordRun) -> None:
    done = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2"), ("kt-01.math.multiplies", "holds", "42")])
    record_run("kt-01-chapter", [], status="interrupted", failure="interrupted (Ctrl-C)")
    assert _brief(_statuses(project, "kt-01-chapter")["kt-01.math.adds"]) == ("OBSERVED", done.record.run_id, "standin")


def test_unchecked_and_skipped_claims_are_unrun(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "skipped", "needs the terminal UI")])
    statuses = _statuses(project, "kt-01-chapter")
    assert _brief(statuses["kt-01.math.adds"]) == ("UNRUN", None, "standin")
    assert statuses["kt-01.math.adds"].reason == "not checked on standin: needs the terminal UI"
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


def test_status_json_is_the_contract_then_the_additive_backends(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    status = _statuses(project, "kt-01-chapter")["kt-01.math.adds"]
    contract = status.contract()
    assert list(contract) == ["claim_id", "chapter", "kind", "status", "run_id", "backend", "reason", "backends"]
    assert contract["backends"] == [
        {
            "backend": "standin",
            "status": "OBSERVED",
            "run_id": run.record.run_id,
            "evidence": "2",
            "reason": "",
            "current": True,
        }
    ]


def test_every_backend_says_what_it_observed(project: Project, record_run: RecordRun) -> None:
    """Three backends hold: the overall status cites the stand-in; each backend's run is listed, newest Pi first."""
    outcomes = [("kt-02.text.upper", "holds", "PI"), ("kt-02.text.words", "holds", "5")]
    old_pi = record_run("kt-02-chapter", outcomes, backend="pi@1.0.3")
    pi = record_run("kt-02-chapter", outcomes, backend="pi@1.6.0")
    standin = record_run("kt-02-chapter", outcomes)
    status = _statuses(project, "kt-02-chapter")["kt-02.text.upper"]
    assert _brief(status) == ("OBSERVED", standin.record.run_id, "standin")
    assert _verdicts(status) == [
        ("standin", "OBSERVED", standin.record.run_id, True),
        ("pi@1.6.0", "OBSERVED", pi.record.run_id, True),
        ("pi@1.0.3", "OBSERVED", old_pi.record.run_id, False),
    ]
    assert [v.evidence for v in status.backends] == ["PI", "PI", "PI"]


def test_other_pi_versions_never_change_the_overall_status(project: Project, record_run: RecordRun) -> None:
    old_pi = record_run("kt-02-chapter", [("kt-02.text.upper", "contradicted", "pi")], backend="pi@1.0.3")
    standin = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")])
    status = _statuses(project, "kt-02-chapter")["kt-02.text.upper"]
    assert _brief(status) == ("OBSERVED", standin.record.run_id, "standin")
    assert _verdicts(status)[1] == ("pi@1.0.3", "CONTRADICTED", old_pi.record.run_id, False)
    assert status.backends[1].reason == "the observation contradicts the book (a finding)"


def test_a_run_on_another_pi_version_is_evidence_not_stale(project: Project, record_run: RecordRun) -> None:
    """Only pi@1.0.3 on current inputs: the overall rule still says STALE, and the 1.0.3 verdict is listed."""
    record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "old")], inputs_update={"pinb_version": "0.0.9"})
    old_pi = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")], backend="pi@1.0.3")
    status = _statuses(project, "kt-02-chapter")["kt-02.text.upper"]
    assert status.status == "STALE"
    assert _verdicts(status) == [("pi@1.0.3", "OBSERVED", old_pi.record.run_id, False)]
    # a 1.0.3 run on older inputs is not evidence about 1.0.3 either
    record_run(
        "kt-02-chapter", [("kt-02.text.upper", "holds", "x")], backend="pi@0.9.0", inputs_update={"pinb_version": "0"}
    )
    assert [v.backend for v in _statuses(project, "kt-02-chapter")["kt-02.text.upper"].backends] == ["pi@1.0.3"]


def test_skips_and_failures_per_backend(project: Project, record_run: RecordRun) -> None:
    skipped = record_run("kt-02-chapter", [("kt-02.text.upper", "skipped", "no application layer")], backend="pi@1.0.3")
    failed = record_run("kt-02-chapter", [], backend="pi@1.6.0", status="failed", failure="cell 3 raised KeyError")
    standin = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")])
    status = _statuses(project, "kt-02-chapter")["kt-02.text.upper"]
    assert _brief(status) == ("OBSERVED", standin.record.run_id, "standin")
    assert _verdicts(status) == [
        ("standin", "OBSERVED", standin.record.run_id, True),
        ("pi@1.6.0", "UNRUN", failed.record.run_id, True),
        ("pi@1.0.3", "UNRUN", skipped.record.run_id, False),
    ]
    assert (status.backends[2].reason, status.backends[2].evidence) == ("not checked: no application layer", "")
    assert status.backends[1].reason == (
        f"no completed run on current inputs; last attempt: run {failed.record.run_id} failed: cell 3 raised KeyError"
    )
    assert [v.outcome for v in status.backends] == ["holds", None, "skipped"]


def test_one_backend_alone(project: Project, record_run: RecordRun) -> None:
    stale = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")], inputs_update={"pinb_version": "0"})
    old_pi = record_run("kt-02-chapter", [("kt-02.text.upper", "contradicted", "pi")], backend="pi@1.0.3")
    pi = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")], backend="pi@1.6.0")
    upper = "kt-02.text.upper"
    alone = _statuses(project, "kt-02-chapter", "pi@1.0.3")[upper]
    assert _brief(alone) == ("CONTRADICTED", old_pi.record.run_id, "pi@1.0.3")
    assert _verdicts(alone) == [("pi@1.0.3", "CONTRADICTED", old_pi.record.run_id, False)]
    assert _brief(_statuses(project, "kt-02-chapter", resolve_backend(project, "pi"))[upper]) == (
        "OBSERVED",
        pi.record.run_id,
        "pi@1.6.0",
    )
    standin = _statuses(project, "kt-02-chapter", "standin")[upper]
    assert _brief(standin) == ("STALE", stale.record.run_id, "standin")
    assert standin.backends == ()
    never = _statuses(project, "kt-02-chapter", "pi@2.0.0")[upper]
    assert (never.status, never.reason) == ("UNRUN", "no run on record on pi@2.0.0")
    # the overall status is unchanged by the filter's existence: pi@1.6.0 holds, the stand-in is stale
    assert _statuses(project, "kt-02-chapter")[upper].status == "OBSERVED"


def test_resolve_backend(project: Project) -> None:
    assert resolve_backend(project, "pi") == "pi@1.6.0"
    assert resolve_backend(project, "standin") == "standin"
    assert resolve_backend(project, "pi@1.0.3") == "pi@1.0.3"
    with pytest.raises(KitError, match="invalid backend 'node'"):
        resolve_backend(project, "node")


def test_a_claim_whose_output_could_not_be_read_is_an_error_not_unrun(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")], malformed=True)
    (warning,) = run.record.warnings
    assert "malformed claim output ignored" in warning
    statuses = _statuses(project, "kt-01-chapter")
    assert _brief(statuses["kt-01.math.adds"]) == ("OBSERVED", run.record.run_id, "standin")
    lost = statuses["kt-01.math.multiplies"]
    assert _brief(lost) == ("ERROR", run.record.run_id, "standin")
    assert lost.reason == (f"run {run.record.run_id} completed but not all its claim outputs could be read: {warning}")
    unrelated = record_run("kt-01-chapter", warnings=("cell 2: claim kt-09.x is not registered for this chapter",))
    reason = _statuses(project, "kt-01-chapter")["kt-01.math.multiplies"].reason
    assert reason == f"run {unrelated.record.run_id} completed without checking this claim"


def test_a_run_made_by_other_pinb_code_is_stale(project: Project, record_run: RecordRun) -> None:
    """The judges and the stand-in live in pinb, not in the notebook: a run they did not judge is not current."""
    for code in ("", "0" * 64):  # a record from before pinb kept its code fingerprint, and other code
        run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")], inputs_update={"pinb_code": code})
        status = _statuses(project, "kt-01-chapter")["kt-01.math.adds"]
        assert _brief(status) == ("STALE", run.record.run_id, "standin")
        assert status.reason == "latest run is on older inputs: pinb's code changed"
