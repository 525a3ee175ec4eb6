"""Every scenario run on the stand-in is bounded: catastrophic regexes, huge sleeps and slow streams cannot hang it.

Before, a guard pattern ``(a+)+$`` on 26 ``a``s and ``!`` took 15 s (21 s as a schema ``pattern``), longer
subjects ran for minutes, and a sleep of ``10**12`` ms or a stream at ``1e-9`` tokens per second never ended.
Now the run has a wall-clock limit (``--timeout``) that regex matching checks itself, and delays beyond Node's
timer range are clamped to 1 ms as Node does (the corpus scenario ``agent-timer-overflow`` shows real Pi finishing).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pinb.errors import ScenarioError, UsageError
from pinb.scenario.corpus import read_recorded
from pinb.scenario.model import load_scenario, parse_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
CATASTROPHIC = "(a|a)+$"


def _guard_scenario(pattern: str, command: str) -> dict[str, Any]:
    data = json.loads((SCENARIOS / "ch16-guard-force-push.json").read_text(encoding="utf-8"))
    data["extensions"][0]["handlers"][0]["action"]["patterns"] = [pattern]
    data["responses"][0]["content"][0]["arguments"] = {"command": command}
    return data


def test_a_catastrophic_guard_pattern_ends_in_one_line_naming_it() -> None:
    scenario = parse_scenario(_guard_scenario(CATASTROPHIC, "a" * 40 + "!"))
    with pytest.raises(ScenarioError) as caught:
        run_on_standin(scenario, timeout=0.5)
    message = str(caught.value)
    assert f"/{CATASTROPHIC}/" in message and "0.5 s time limit" in message
    assert "\n" not in message


def test_the_book_example_pattern_answers_like_javascript() -> None:
    # (a+)+$ no longer backtracks for seconds; it still does not match, as in JavaScript.
    scenario = parse_scenario(_guard_scenario("(a+)+$", "a" * 26 + "!"))
    ends = [line for line in run_on_standin(scenario) if line.get("type") == "tool_execution_end"]
    assert [line["isError"] for line in ends] == [False]


def test_a_catastrophic_schema_pattern_ends_in_one_line_naming_it() -> None:
    data = json.loads((SCENARIOS / "agent-validation-pattern-digits.json").read_text(encoding="utf-8"))
    data["tools"][0]["parameters"]["properties"]["id"]["pattern"] = CATASTROPHIC
    data["responses"][0]["content"] = [{"type": "toolCall", "name": "lookup", "arguments": {"id": "a" * 40 + "!"}}]
    with pytest.raises(ScenarioError, match=r"/\(a\|a\)\+\$/u did not finish"):
        run_on_standin(parse_scenario(data), timeout=0.5)


def test_a_long_sleep_ends_at_the_limit() -> None:
    data = json.loads((SCENARIOS / "agent-sleep-updates.json").read_text(encoding="utf-8"))
    data["tools"][0]["behavior"]["ms"] = 600_000
    with pytest.raises(ScenarioError, match=r"did not finish within its 0\.3 s time limit"):
        run_on_standin(parse_scenario(data), timeout=0.3)


def test_delays_beyond_nodes_timer_range_are_one_millisecond_as_in_pi() -> None:
    scenario = load_scenario(SCENARIOS / "agent-timer-overflow.json")
    recorded = read_recorded(scenario.id, "1.6.0", SCENARIOS)
    assert recorded is not None
    assert first_difference(run_on_standin(scenario, timeout=20), recorded) is None


def test_a_huge_handler_sleep_is_clamped_too() -> None:
    data = json.loads((SCENARIOS / "app-handler-sleep-order.json").read_text(encoding="utf-8"))
    changed = copy.deepcopy(data)
    for extension in changed["extensions"]:
        for handler in extension["handlers"]:
            if handler["action"]["kind"] == "sleep":
                handler["action"]["ms"] = 10**400
    run_on_standin(parse_scenario(changed), timeout=20)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_a_time_limit_must_be_a_positive_number(bad: float) -> None:
    with pytest.raises(UsageError):
        run_on_standin(load_scenario(SCENARIOS / "agent-text-only.json"), timeout=bad)


def test_conform_exits_2_when_a_scenario_runs_out_of_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pinb.cli import main

    data = json.loads((SCENARIOS / "agent-sleep-updates.json").read_text(encoding="utf-8"))
    data["tools"][0]["behavior"]["ms"] = 600_000
    (tmp_path / "agent-sleep-updates.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "traces" / "pi-1.6.0").mkdir(parents=True)
    recorded = SCENARIOS / "traces" / "pi-1.6.0" / "agent-sleep-updates.jsonl"
    (tmp_path / "traces" / "pi-1.6.0" / recorded.name).write_text(recorded.read_text(encoding="utf-8"))
    assert main(["scenario", "conform", "--corpus", str(tmp_path), "--timeout", "0.3"]) == 2
    assert "did not finish within its 0.3 s time limit" in capsys.readouterr().out
