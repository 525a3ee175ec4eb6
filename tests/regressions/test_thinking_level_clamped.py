"""The session's thinking level is clamped to what the model supports, as pi-ai 1.6.0's ``clampThinkingLevel``
does: ``xhigh`` and ``max`` on a reasoning model without a mapping for them become ``high`` (the nearest supported
level above, else below), any level on a model without reasoning becomes ``off``. The stand-in used to keep
``xhigh`` in the request and in the ``thinking_level_change`` entry. The expected values are real Pi 1.6.0's, in the
corpus traces of ``app-model-thinking-level-*``.
"""

from __future__ import annotations

import pytest

from pinb.ai.thinking import THINKING_LEVELS, clamp_thinking_level
from pinb.ai.types import Model
from pinb.scenario.corpus import corpus_dir, read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

REASONER = Model(id="r", name="r", api="faux", provider="faux", reasoning=True)
PLAIN = Model(id="p", name="p", api="faux", provider="faux")


@pytest.mark.parametrize(
    ("level", "expected"),
    [("off", "off"), ("minimal", "minimal"), ("low", "low"), ("medium", "medium"), ("high", "high"),
     ("xhigh", "high"), ("max", "high"), ("ultra", "off")],
)  # fmt: skip
def test_a_reasoning_model_without_a_level_map_tops_out_at_high(level: str, expected: str) -> None:
    assert clamp_thinking_level(REASONER, level) == expected


def test_a_model_without_reasoning_thinks_off_at_every_level() -> None:
    assert {clamp_thinking_level(PLAIN, level) for level in THINKING_LEVELS} == {"off"}


@pytest.mark.parametrize(
    "scenario_id",
    ["app-model-thinking-level-xhigh-clamped", "app-model-thinking-level-max-clamped",
     "app-model-thinking-level-no-reasoning"],
)  # fmt: skip
def test_the_stand_in_clamps_like_pi_in_the_request_and_the_session(scenario_id: str) -> None:
    recorded = read_recorded(scenario_id, "1.6.0")
    assert recorded is not None
    lines = run_on_standin(load_scenario(corpus_dir() / f"{scenario_id}.json"))
    assert first_difference(lines, recorded, strict=True) is None
    pi_levels = [line["thinkingLevel"] for line in recorded if line["source"] == "request"]
    ours = [line["thinkingLevel"] for line in lines if line["source"] == "request"]
    assert ours == pi_levels and len(ours) == 1
