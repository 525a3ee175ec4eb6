"""The counterfactual view: a claim's verdict under one of its faults, shown beside the real one, never recorded."""

from __future__ import annotations

import asyncio

import pytest

from pinb.chapters.experiments import ChapterRun
from pinb.errors import UsageError
from pinb.kit import claims
from pinb.testing.counterfactual import attach, counterfactual, fault_for


def test_first_names_the_claims_first_fault_and_a_name_only_when_the_claim_lists_it() -> None:
    assert fault_for("pi-16.dispatch.registration-order", "first") == "handlers-reverse-order"
    assert fault_for("pi-16.dispatch.registration-order", "handlers-reverse-order") == "handlers-reverse-order"
    assert fault_for("pi-16.dispatch.registration-order", "continue-ignored") is None


def test_the_counterfactual_contradicts_the_claim() -> None:
    verdict = asyncio.run(counterfactual("pi-16.dispatch.registration-order"))
    assert verdict is not None and verdict.status == "CONTRADICTED"


def test_attached_run_shows_it_and_records_only_the_real_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    async def go() -> None:
        run = ChapterRun("pi-16-chapter", "standin")
        attach(run, "first")
        before = len(claims.recorded())
        observation = await run.check("pi-16.dispatch.registration-order", show=False)
        assert observation.status == "OBSERVED"
        recorded = claims.recorded()[before:]
        assert [o.outcome for o in recorded] == ["holds"]

    asyncio.run(go())
    out = capsys.readouterr().out
    assert "counterfactual (not recorded; stand-in with fault handlers-reverse-order" in out
    assert "CONTRADICTED" in out


def test_an_unknown_fault_is_refused_at_once() -> None:
    with pytest.raises(UsageError, match="unknown fault"):
        attach(ChapterRun("pi-16-chapter", "standin"), "no-such-fault")
