"""The session_before_compact property (scenarios on both backends): holds on the stand-in's hand witness, and is
contradicted when the stand-in gets it wrong."""

from __future__ import annotations

from typing import Any

import pytest

from pinb.app.extensions.runner import ExtensionRunner
from pinb.chapters.ch16 import sessions
from pinb.chapters.ch16.props_events import SESSION_BEFORE_COMPACT
from pinb.chapters.properties import PropertyExperiment, Witness, WitnessVerdict, judge_witness
from pinb.chapters.registry import claim
from pinb.scenario.model import parse_scenario
from pinb.scenario.standin import run_on_standin


def _traces() -> dict[str, Any]:
    return {name: run_on_standin(parse_scenario(doc)) for name, doc in sessions.before_compact({}).items()}


def _verdict(traces: dict[str, Any]) -> WitnessVerdict:
    return judge_witness(SESSION_BEFORE_COMPACT, Witness("hand", sessions.before_compact({}), traces))


def _rewrite_before_compact(monkeypatch: pytest.MonkeyPatch, **update: Any) -> None:
    """Break the stand-in: what session_before_compact handlers return reaches compact() with `update` applied."""
    original = ExtensionRunner.emit

    async def emit(self: ExtensionRunner, event: Any) -> Any:
        result = await original(self, event)
        if event.type == "session_before_compact" and result is not None:
            return result.model_copy(update=update)
        return result

    monkeypatch.setattr(ExtensionRunner, "emit", emit)


def test_the_claim_runs_the_scenarios_on_both_backends() -> None:
    experiment = claim("pi-16.events.session-before-compact").experiment
    assert isinstance(experiment, PropertyExperiment) and experiment.property is SESSION_BEFORE_COMPACT
    assert experiment.property.hand({}).keys() == sessions.before_compact({}).keys()


def test_holds_on_the_stand_in() -> None:
    verdict = _verdict(_traces())
    assert verdict.status == "OBSERVED", verdict.evidence
    assert sessions.OWN_SUMMARY in verdict.observed


def test_an_ignored_cancel_is_contradicted(monkeypatch: pytest.MonkeyPatch) -> None:
    _rewrite_before_compact(monkeypatch, cancel=None)
    verdict = _verdict(_traces())
    assert verdict.status == "CONTRADICTED", verdict.evidence


def test_an_ignored_summary_is_contradicted(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the handler's compaction, Pi asks the model: the scenario's next scripted reply becomes the summary.
    _rewrite_before_compact(monkeypatch, compaction=None)
    verdict = _verdict(_traces())
    assert verdict.status == "CONTRADICTED", verdict.evidence


def test_a_summary_that_does_not_head_the_next_request_is_contradicted() -> None:
    traces = _traces()
    last = [line for line in traces["supply"] if line.get("source") == "model"][-1]
    last["messages"] = [last["messages"][0], *last["messages"][2:], last["messages"][1]]
    assert _verdict(traces).status == "CONTRADICTED"
