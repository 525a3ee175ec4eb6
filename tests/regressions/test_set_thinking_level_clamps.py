"""``setThinkingLevel`` clamps the level to what the model supports before it compares, records and announces it,
as Pi 1.6.0's ``AgentSession.setThinkingLevel`` does: ``xhigh`` on a reasoning faux model that is already at
``high`` changes nothing (no entry, no ``thinking_level_changed``, no ``thinking_level_select``). The stand-in used to
store ``xhigh`` as given. Real Pi 1.6.0's traces of the two scenarios are the expected values.
"""

from __future__ import annotations

import pytest

from pinb.chapters import tq
from pinb.scenario.corpus import corpus_dir, read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference


@pytest.mark.parametrize("scenario_id", ["app-step-set-thinking-level", "app-extension-set-thinking-level"])
def test_thinking_level_changes_match_pi(scenario_id: str) -> None:
    recorded = read_recorded(scenario_id, "1.6.0")
    assert recorded is not None
    lines = run_on_standin(load_scenario(corpus_dir() / f"{scenario_id}.json"))
    assert first_difference(lines, recorded, projection="full") is None


def test_a_clamped_level_that_changes_nothing_is_not_announced() -> None:
    recorded = read_recorded("app-step-set-thinking-level", "1.6.0")
    assert recorded is not None
    outcomes = [(s.step["level"], s.result["thinkingLevel"]) for s in tq.steps(recorded) if "level" in s.step]
    assert outcomes == [("high", "high"), ("xhigh", "high"), ("low", "low")]
    changed = [line["level"] for line in recorded if line["type"] == "thinking_level_changed"]
    assert changed == ["high", "low"]
    levels = [entry["thinkingLevel"] for entry in tq.tree_entries(tq.snapshot(recorded), "thinking_level_change")]
    assert levels == ["off", "high", "low"]
