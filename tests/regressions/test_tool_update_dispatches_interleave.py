"""Consecutive ``tool_execution_update`` dispatches overlap, as in Pi 1.6.0: a tool that reports several updates at
once starts their dispatches together, and JavaScript's ``await handler(...)`` in the extension runner yields even
when the handler returns a plain value, so the dispatches interleave handler by handler (extension a for every
update, then b, then the session listeners). The stand-in used to finish each update's chain before the next
(``a, b, session`` three times). Real Pi 1.6.0's trace of ``app-tool-updates-overlap`` is the expected value; the
full comparison (stream lines included) is the one that sees it.
"""

from __future__ import annotations

from pinb.scenario.corpus import corpus_dir, read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

SCENARIO = "app-tool-updates-overlap"


def _updates(lines: list[dict]) -> list[str]:
    return [line.get("extension", "session") for line in lines if line["type"] == "tool_execution_update"]


def test_update_dispatches_interleave_handler_by_handler() -> None:
    recorded = read_recorded(SCENARIO, "1.6.0")
    assert recorded is not None
    assert _updates(recorded) == ["a", "a", "a", "b", "b", "b", "session", "session", "session"]
    lines = run_on_standin(load_scenario(corpus_dir() / f"{SCENARIO}.json"))
    assert _updates(lines) == _updates(recorded)
    assert first_difference(lines, recorded, projection="full") is None
