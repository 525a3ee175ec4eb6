"""A claim's words with a lone surrogate (a JavaScript slice through an emoji, as observed) print and store as UTF-8:
`pinb claims check-properties` once died with UnicodeEncodeError printing such an observed value."""

from __future__ import annotations

import json

from pinb.claims import ClaimOutcome, WitnessRecord, printable


def test_a_lone_surrogate_is_escaped_in_every_word_of_an_outcome() -> None:
    cut = "git push --force \ud83d"
    outcome = ClaimOutcome(
        claim_id="pi-16.guard.confirm-with-ui",
        outcome="holds",
        evidence=f"expected {cut}; observed {cut}",
        expected=cut,
        observed=cut,
        witnesses=(WitnessRecord(name="hand", status="OBSERVED", expected=cut, observed=cut),),
    )
    assert outcome.expected == "git push --force \\ud83d"
    assert outcome.witnesses[0].observed == "git push --force \\ud83d"
    text = json.dumps(outcome.model_dump(mode="json"), ensure_ascii=False)
    assert text.encode("utf-8")  # no UnicodeEncodeError
    assert printable("a 😀 b") == "a 😀 b"  # a whole emoji stays as it is
