"""The claim models and the notebook API, outside a kernel (where outcomes print their text rendering)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pinb import claims
from pinb.claims import Claim
from pinb.errors import UsageError
from pinb.kit.claims import CLAIM_MIME, Chapter, ClaimOutcome, check, checking, mime_bundle, skip


@pytest.fixture(autouse=True)
def _fresh_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claims, "_backend", None)
    monkeypatch.setattr(claims, "_recorded", [])


def test_check_records_holds_and_contradicted(capsys: pytest.CaptureFixture[str]) -> None:
    claims.use_backend("pi", "1.6.0")
    held = check("pi-16.guard.blocks-force-push", True, "blocked: git push --force")
    found = check("pi-16.guard.blocks-reset", False, "git reset --hard ran", detail="no block result")
    assert (held.outcome, held.backend) == ("holds", "pi@1.6.0")
    assert (found.outcome, found.detail) == ("contradicted", "no block result")
    assert claims.recorded() == (held, found)
    assert "✘ CONTRADICTED pi-16.guard.blocks-reset: git reset --hard ran" in capsys.readouterr().out


def test_checking_records_what_the_block_said() -> None:
    with checking("pi-01.loop.turns") as check_:
        check_.holds("2 turns")
    assert check_.outcome == ClaimOutcome(claim_id="pi-01.loop.turns", outcome="holds", evidence="2 turns")


def test_an_exception_is_an_error_never_holds() -> None:
    with checking("pi-01.loop.turns") as check_:
        check_.holds("looked fine")
        raise ValueError("then it broke")
    assert check_.outcome is not None
    assert check_.outcome.outcome == "error"
    assert check_.outcome.evidence == "ValueError: then it broke"
    assert "test_claims.py" in check_.outcome.detail


def test_nothing_recorded_is_an_error() -> None:
    with checking("pi-01.loop.turns") as check_:
        pass
    assert check_.outcome is not None
    assert (check_.outcome.outcome, check_.outcome.evidence) == ("error", "no outcome recorded")


def test_keyboard_interrupt_is_not_swallowed() -> None:
    with pytest.raises(KeyboardInterrupt), checking("pi-01.loop.turns"):
        raise KeyboardInterrupt
    assert claims.recorded() == ()


@pytest.mark.parametrize(
    "call",
    [
        lambda: check("Pi-16.Guard", True, "x"),
        lambda: check("../etc", True, "x"),
        lambda: check("pi-16", True, "x"),
        lambda: check("pi-16.guard.x", "yes", "x"),  # type: ignore[arg-type]
        lambda: check("pi-16.guard.x", True, "  "),
        lambda: claims.use_backend("pi@../x"),
    ],
)
def test_misuse_raises_at_once(call) -> None:
    with pytest.raises(UsageError):
        call()


def test_recording_twice_in_one_block_is_misuse() -> None:
    with checking("pi-01.loop.turns") as check_:
        check_.holds("one")
        check_.contradicted("two")
    # the misuse raised inside the block, so the block's outcome is an error, not the first answer
    assert check_.outcome is not None and check_.outcome.outcome == "error"
    assert "already has an outcome" in check_.outcome.evidence


def test_skip_and_the_mime_bundle() -> None:
    outcome = skip("pi-16.tui.dialog", "needs the terminal UI", backend="standin")
    bundle = mime_bundle(outcome)
    assert set(bundle) == {CLAIM_MIME, "text/plain", "text/html"}
    assert bundle[CLAIM_MIME] == {
        "claim_id": "pi-16.tui.dialog",
        "outcome": "skipped",
        "evidence": "needs the terminal UI",
        "detail": "",
        "backend": "standin",
    }
    assert "&lt;" in claims.render_html(ClaimOutcome(claim_id="a.b", outcome="holds", evidence="<script>"))


def test_claim_and_chapter_validation() -> None:
    claim = Claim(id="kt-01.a.b", chapter="kt-01-chapter", quote="q", location="¶1")
    assert claim.backends == ("standin", "pi")
    with pytest.raises(ValidationError, match="needs the reason"):
        Claim(id="kt-01.a.c", chapter="kt-01-chapter", quote="q", location="¶1", kind="reported", backends=())
    with pytest.raises(ValidationError, match="unknown backend"):
        Claim(id="kt-01.a.c", chapter="kt-01-chapter", quote="q", location="¶1", backends=("node",))
    with pytest.raises(ValidationError, match="chapter id"):
        Claim(id="kt-01.a.c", chapter="../runs", quote="q", location="¶1")
    with pytest.raises(ValidationError, match="listed twice"):
        Chapter(id="kt-01-chapter", number="01", title="t", notebook="n", text_fingerprint="f", claims=(claim, claim))
    with pytest.raises(ValidationError, match="belongs to"):
        Chapter(id="kt-02-chapter", number="02", title="t", notebook="n", text_fingerprint="f", claims=(claim,))


def test_a_structured_observation_is_recorded_shown_and_read_back() -> None:
    from pinb.claims import ClaimOutcome, WitnessRecord, checking, render_text

    with checking("pi-16.dispatch.registration-order", backend="standin") as check:
        check.observed(
            "holds",
            "expected a1 → b1; observed a1 → b1",
            premise="tool_call: 2 handlers in 2 extensions",
            expected="a1 → b1",
            observed="a1 → b1",
            covers=("run in load order",),
            uncovered=("and registration order",),
            witnesses=(
                WitnessRecord(name="hand", status="OBSERVED", premise="2 handlers", expected="a1", observed="a1"),
                WitnessRecord(name="gen-1", status="NOT EXERCISED", premise="one extension"),
            ),
        )
    outcome = check.outcome
    assert outcome is not None
    assert outcome.verdict == "OBSERVED (partial: not covered: “and registration order”)"
    data = mime_bundle(outcome)[CLAIM_MIME]
    assert ClaimOutcome.model_validate(data) == outcome
    assert render_text(outcome).splitlines() == [
        "✔ OBSERVED (partial: not covered: “and registration order”) pi-16.dispatch.registration-order: "
        "expected a1 → b1; observed a1 → b1",
        "    premise: tool_call: 2 handlers in 2 extensions",
        "    covers: “run in load order”",
        "    witnesses: 2 (1 OBSERVED, 1 NOT EXERCISED)",
        "      gen-1: NOT EXERCISED: one extension",
    ]


def test_an_outcome_without_structure_serializes_as_before_and_not_exercised_is_its_own_verdict() -> None:
    from pinb.claims import ClaimOutcome

    old = {"claim_id": "pi-16.a.b", "outcome": "holds", "evidence": "seen", "detail": "", "backend": "standin"}
    assert ClaimOutcome.model_validate(old).model_dump(mode="json") == old
    quiet = ClaimOutcome(claim_id="pi-16.a.b", outcome="not-exercised", evidence="not exercised: one extension")
    assert quiet.verdict == "NOT EXERCISED"
