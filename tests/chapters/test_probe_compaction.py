"""The session_before_compact probe: holds on the stand-in, and is contradicted when the stand-in gets it wrong."""

from __future__ import annotations

from typing import Any

import pytest

from pinb.app.extensions.runner import ExtensionRunner
from pinb.chapters.ch16 import probes
from pinb.chapters.experiments import ProbeExperiment, experiment_for


def _rewrite_before_compact(monkeypatch: pytest.MonkeyPatch, **update: Any) -> None:
    """Break the stand-in: what session_before_compact handlers return reaches compact() with `update` applied."""
    original = ExtensionRunner.emit

    async def emit(self: ExtensionRunner, event: Any) -> Any:
        result = await original(self, event)
        if event.type == "session_before_compact" and result is not None:
            return result.model_copy(update=update)
        return result

    monkeypatch.setattr(ExtensionRunner, "emit", emit)


def test_the_claim_has_the_probe() -> None:
    experiment = experiment_for("pi-16.events.session-before-compact")
    assert isinstance(experiment, ProbeExperiment) and experiment.probe is probes.session_before_compact


async def test_holds_on_the_stand_in() -> None:
    finding, shown = await probes.session_before_compact({})
    assert finding.holds, finding.evidence
    assert shown["cancel"]["compaction"] == [] and shown["cancel"]["branch_unchanged"]
    assert [c["summary"] for c in shown["supply"]["compaction"]] == [probes.OWN_SUMMARY]
    assert shown["supply"]["next_request"][-1] == "user:question 3"
    assert "signal AbortSignal (live: True)" in finding.evidence


async def test_an_ignored_cancel_is_contradicted(monkeypatch: pytest.MonkeyPatch) -> None:
    _rewrite_before_compact(monkeypatch, cancel=None)
    finding, shown = await probes.session_before_compact({})
    assert not finding.holds
    assert [c["summary"].startswith(probes.DEFAULT_SUMMARY) for c in shown["cancel"]["compaction"]] == [True]
    assert "compaction entries 1" in finding.evidence


async def test_an_ignored_summary_is_contradicted(monkeypatch: pytest.MonkeyPatch) -> None:
    _rewrite_before_compact(monkeypatch, compaction=None)
    finding, shown = await probes.session_before_compact({})
    assert not finding.holds
    assert [c["summary"].startswith(probes.DEFAULT_SUMMARY) for c in shown["supply"]["compaction"]] == [True]


async def test_missing_fields_or_a_dead_signal_are_contradicted() -> None:
    _, shown = await probes.session_before_compact({})
    cancel, supply = shown["cancel"], shown["supply"]
    without = {
        **cancel,
        "seen": {**cancel["seen"], "fields": [f for f in cancel["seen"]["fields"] if f != "willRetry"]},
    }
    assert not probes.judge_before_compact(without, supply).holds
    dead = {**cancel, "seen": {**cancel["seen"], "signal": "NoneType", "signal_live": False}}
    assert not probes.judge_before_compact(dead, supply).holds
    nothing_summarised = {**cancel, "seen": {**cancel["seen"], "to_summarize": 0}}
    assert not probes.judge_before_compact(nothing_summarised, supply).holds
    assert probes.judge_before_compact(cancel, supply).holds


async def test_a_summary_that_does_not_head_the_next_request_is_contradicted() -> None:
    _, shown = await probes.session_before_compact({})
    cancel, supply = shown["cancel"], shown["supply"]
    reordered = {**supply, "next_request": supply["next_request"][1:] + supply["next_request"][:1]}
    assert not probes.judge_before_compact(cancel, reordered).holds
