"""The session_before_compact experiment (a scenario on both backends): holds on the stand-in, and is contradicted
when the stand-in gets it wrong."""

from __future__ import annotations

from typing import Any

import pytest

from pinb.app.extensions.runner import ExtensionRunner
from pinb.chapters.ch16 import sessions
from pinb.chapters.registry import claim
from pinb.scenario.model import parse_scenario
from pinb.scenario.standin import run_on_standin


def _traces() -> dict[str, Any]:
    return {name: run_on_standin(parse_scenario(doc)) for name, doc in sessions.before_compact({}).items()}


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
    from pinb.chapters.ch16.props_events import SESSION_BEFORE_COMPACT
    from pinb.chapters.properties import PropertyExperiment

    experiment = claim("pi-16.events.session-before-compact").experiment
    assert isinstance(experiment, PropertyExperiment) and experiment.property is SESSION_BEFORE_COMPACT
    assert experiment.property.hand({}).keys() == sessions.before_compact({}).keys()


def test_holds_on_the_stand_in() -> None:
    finding = sessions.judge_before_compact(_traces())
    assert finding.holds, finding.evidence
    assert "compaction entries 0" in finding.evidence and sessions.OWN_SUMMARY in finding.evidence


def test_an_ignored_cancel_is_contradicted(monkeypatch: pytest.MonkeyPatch) -> None:
    _rewrite_before_compact(monkeypatch, cancel=None)
    finding = sessions.judge_before_compact(_traces())
    assert not finding.holds, finding.evidence


def test_an_ignored_summary_is_contradicted(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the handler's compaction, Pi asks the model: the scenario's next scripted reply becomes the summary.
    _rewrite_before_compact(monkeypatch, compaction=None)
    finding = sessions.judge_before_compact(_traces())
    assert not finding.holds, finding.evidence


def test_a_summary_that_does_not_head_the_next_request_is_contradicted() -> None:
    traces = _traces()
    last = [line for line in traces["supply"] if line.get("source") == "model"][-1]
    last["messages"] = [last["messages"][0], *last["messages"][2:], last["messages"][1]]
    assert not sessions.judge_before_compact(traces).holds
