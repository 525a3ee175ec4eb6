"""pi-ai 1.6.0's faux provider pushes a reply's events from its own async function, each chunk waiting one
microtask, so without stream delays it runs ahead of its consumer: an abort queued on an early event of the reply
lands after the reply was streamed to its end. On layer app the tool call then still arrives, and the tool's
preflight (not the tool) ends it with "Operation aborted". The stand-in's faux provider was pulled by its consumer
and stopped the reply at once ("Request was aborted", no tool call). Real Pi 1.6.0's traces of the two corpus
scenarios are the expected values (the agent one is also recorded on 1.0.3).
"""

from __future__ import annotations

import pytest

from pinb.scenario.corpus import corpus_dir, read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference


@pytest.mark.parametrize(
    ("scenario_id", "stop_reason"),
    [("agent-abort-after-reply-streamed", "stop"), ("app-abort-at-reply-start-preflight", "toolUse")],
)
def test_the_reply_is_complete_before_the_abort_lands(scenario_id: str, stop_reason: str) -> None:
    recorded = read_recorded(scenario_id, "1.6.0")
    assert recorded is not None
    ends = [line for line in recorded if line["type"] == "message_end" and line.get("role") == "assistant"]
    assert ends[0]["stopReason"] == stop_reason
    lines = run_on_standin(load_scenario(corpus_dir() / f"{scenario_id}.json"))
    assert first_difference(lines, recorded, projection="full") is None


def test_the_tool_preflight_reports_the_abort() -> None:
    recorded = read_recorded("app-abort-at-reply-start-preflight", "1.6.0")
    assert recorded is not None
    ends = [line for line in recorded if line["source"] == "session" and line["type"] == "tool_execution_end"]
    assert [(line["isError"], line["text"]) for line in ends] == [(True, "Operation aborted")]
