"""What a notebook's card reads of the recorded runs: the structured observation beside the evidence, and a
backend's latest run on `pinb verify`'s default parameters (generated witnesses included) when its verdict is
stale."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pinb.kit.claims import ClaimOutcome
from pinb.kit.project import VERIFY_WITNESSES
from pinb.kit.recorded import _defaults, _row


def _run() -> Any:
    record = SimpleNamespace(backend="pi@1.6.0", run_id="r1", finished_at="2026-12-02T00:06:40.000Z")
    return SimpleNamespace(record=record)


def test_an_entry_carries_the_structured_observation_where_the_check_recorded_one() -> None:
    outcome = ClaimOutcome(
        claim_id="pi-16.a.b", outcome="contradicted", evidence="expected a; observed b", expected="a", observed="b"
    )
    row = _row(_run(), "CONTRADICTED", outcome.evidence, "snapshot", outcome)
    assert (row["expected"], row["observed"], row["status"], row["date"]) == ("a", "b", "CONTRADICTED", "2026-12-02")
    assert "premise" not in row  # only what the check set
    plain = _row(
        _run(), "OBSERVED", "held", "snapshot", ClaimOutcome(claim_id="pi-16.a.b", outcome="holds", evidence="held")
    )
    assert set(plain) == {"backend", "status", "run_id", "date", "evidence", "source"}


def test_a_run_verify_made_with_generated_witnesses_is_on_the_default_parameters() -> None:
    given = {"backend": "standin", "witnesses": VERIFY_WITNESSES}
    assert _defaults("standin", given) == given
    assert _defaults("standin", {"backend": "standin", "witnesses": 1}) != {"backend": "standin", "witnesses": 1}
    assert _defaults("pi@1.6.0", {"backend": "pi", "pi_version": "1.6.0"}) == {"backend": "pi", "pi_version": "1.6.0"}
