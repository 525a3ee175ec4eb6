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


def test_releases_that_saw_the_same_finding_share_its_line_and_one_that_saw_otherwise_has_its_own() -> None:
    verdicts = (
        _verdict("pi@1.6.0", "CONTRADICTED", "fails at import"),
        _verdict("pi@1.5.2", "CONTRADICTED", "fails at import"),
        _verdict("pi@1.4.0", "CONTRADICTED", "prints two lines"),
        _verdict("pi@1.0.3", "OBSERVED"),
    )
    text = summary_markdown([_status("pi-01.a.two", "CONTRADICTED", verdicts)])
    found = text.split("Findings (the observation contradicts the book):\n\n", 1)[1].splitlines()
    assert found == [
        "- `pi-01.a.two` on pi@1.6.0, pi@1.5.2 (runs `run-pi@1.6.0`, `run-pi@1.5.2`): fails at import",
        "- `pi-01.a.two` on pi@1.4.0 (run `run-pi@1.4.0`): prints two lines",
    ]


def test_the_verify_summary_groups_the_backends_of_one_finding_and_keeps_every_run() -> None:
    from pinb.kit.summary import Finding, findings_text

    others = ("pi@1.0.3 OBSERVED (recorded)",)
    found = [
        Finding("pi-01.a.two", "pi@1.6.0", "r6", "fails at import", "recorded", others),
        Finding("pi-01.a.two", "pi@1.5.2", "r5", "fails at import", "recorded", others),
        Finding("pi-01.a.two", "standin", "rs", "fails at import", "this run", others),
        Finding("pi-01.a.three", "pi@1.6.0", "r6", "no Type", "recorded"),
    ]
    assert findings_text(found).splitlines() == [
        "Findings on every backend (4: the run contradicts the book):",
        "  pi-01.a.two on pi@1.6.0, pi@1.5.2 (recorded, runs r6, r5) [pi@1.0.3 OBSERVED (recorded)]: fails at import",
        "  pi-01.a.two on standin (this run, run rs) [pi@1.0.3 OBSERVED (recorded)]: fails at import",
        "  pi-01.a.three on pi@1.6.0 (recorded, run r6): no Type",
    ]
