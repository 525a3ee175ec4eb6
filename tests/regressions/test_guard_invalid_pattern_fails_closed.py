"""An invalid guard pattern must block the call (fail closed), as in Pi, not silently remove the guard.

The stand-in used to compile the guard's patterns when the extension loaded; ``(unclosed`` failed there, the
failure was dropped, and ``git push --force`` ran (simulated) with exit 0. Real Pi builds each RegExp inside the
handler, where the SyntaxError makes the handler throw, and a throwing ``tool_call`` handler blocks the call.
"""

from __future__ import annotations

from pathlib import Path

from pinb.scenario.corpus import read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
V8_MESSAGE = "Invalid regular expression: /(unclosed/: Unterminated group"


def _ends(lines: list[dict]) -> dict[str, dict]:
    return {line["toolCallId"]: line for line in lines if line.get("type") == "tool_execution_end"}


def test_invalid_pattern_blocks_the_call_on_the_standin() -> None:
    lines = run_on_standin(load_scenario(SCENARIOS / "app-guard-invalid-pattern.json"))
    ends = _ends(lines)
    assert ends["call#2"]["isError"] is True
    assert ends["call#2"]["text"] == V8_MESSAGE
    # The first pattern matched the first call before the invalid one was reached.
    assert ends["call#1"]["text"].startswith("Guard blocked: ")
    errors = [line for line in lines if line.get("source") == "ext" and "error" in line]
    assert [line["error"] for line in errors] == [V8_MESSAGE]


def test_the_standin_agrees_with_the_recorded_real_pi_trace() -> None:
    recorded = read_recorded("app-guard-invalid-pattern", "1.6.0", SCENARIOS)
    assert recorded is not None
    assert _ends(recorded)["call#2"]["text"] == V8_MESSAGE
    standin = run_on_standin(load_scenario(SCENARIOS / "app-guard-invalid-pattern.json"))
    assert first_difference(standin, recorded) is None
