"""`pinb status --summary`: counts per chapter and backend, and every finding with its run."""

from __future__ import annotations

from pinb.kit.status import BackendVerdict, ClaimStatus
from pinb.kit.summary import summary_markdown


def _status(claim_id: str, status: str, verdicts: tuple[BackendVerdict, ...], kind: str = "runnable") -> ClaimStatus:
    return ClaimStatus(
        claim_id=claim_id,
        chapter="pi-01-chapter",
        kind=kind,
        status=status,
        run_id=None,
        backend=None,
        reason="",
        backends=verdicts,
    )


def _verdict(backend: str, status: str, evidence: str = "seen") -> BackendVerdict:
    return BackendVerdict(backend=backend, status=status, run_id=f"run-{backend}", evidence=evidence, current=True)


def test_counts_per_backend_and_findings_with_their_run() -> None:
    statuses = [
        _status("pi-01.a.one", "OBSERVED", (_verdict("standin", "OBSERVED"), _verdict("pi@1.6.0", "OBSERVED"))),
        _status("pi-01.a.two", "CONTRADICTED", (_verdict("pi@1.6.0", "CONTRADICTED", "no | Type export"),)),
        _status("pi-01.a.three", "UNRUN", (_verdict("pi@1.6.0", "UNRUN"),)),
        _status("pi-01.a.four", "UNRUN", (), kind="reported"),
    ]
    text = summary_markdown(statuses)
    assert "| pi-01-chapter | overall | 3 | 1 | 0 | 1 | 0 | 0 | 0 | 1 |" in text
    assert "| pi-01-chapter | standin | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 |" in text
    assert "| pi-01-chapter | pi@1.6.0 | 3 | 1 | 0 | 1 | 0 | 0 | 0 | 1 |" in text
    assert "| pi-01-chapter | reported (cannot be run) | 1 |" in text
    assert "- `pi-01.a.two` on pi@1.6.0 (run `run-pi@1.6.0`): no \\| Type export" in text


def test_no_findings_section_without_a_contradiction() -> None:
    text = summary_markdown([_status("pi-01.a.one", "OBSERVED", (_verdict("standin", "OBSERVED"),))])
    assert "Findings" not in text


def test_a_partial_check_is_counted_apart_from_the_whole_ones_and_not_exercised_has_its_column() -> None:
    partial = _verdict("standin", "OBSERVED").model_copy(update={"uncovered": ("in the load order",)})
    statuses = [
        _status("pi-01.a.one", "OBSERVED", (_verdict("standin", "OBSERVED"),)),
        _status("pi-01.a.two", "OBSERVED", (partial,)),
        _status("pi-01.a.three", "NOT EXERCISED", (_verdict("standin", "NOT EXERCISED"),)),
    ]
    text = summary_markdown(statuses)
    assert text.startswith(
        "| Chapter | Backend | Claims | OBSERVED | OBSERVED (partial) | CONTRADICTED | NOT EXERCISED | ERROR | STALE"
        " | UNRUN |\n"
    )
    assert "| pi-01-chapter | standin | 3 | 1 | 1 | 0 | 1 | 0 | 0 | 0 |" in text
    assert partial.label == "OBSERVED (partial: not covered: “in the load order”)"
    assert partial.contract()["partial"] == ["in the load order"]
