"""A tool schema's ``pattern`` is a JavaScript regex (pi-schema compiles it with the ``u`` flag), not Python's ``re``.

With ``re``, ``^\\d+$`` accepted ``"12\\n"`` (``$`` before a final newline) and ``"١٢"`` (Unicode digits), which
Pi rejects; ``\\p{Lu}`` was a syntax error and an invalid pattern crashed with Python's message. The corpus
scenarios ``agent-validation-pattern-*`` hold what real Pi 1.6.0 did with each.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pinb.ai import ToolArgumentsError, validate_tool_arguments
from pinb.scenario.corpus import read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
DIGITS = {"type": "object", "properties": {"id": {"type": "string", "pattern": "^\\d+$"}}}


def _valid(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    call = SimpleNamespace(name="t", arguments=arguments, arguments_error=None)
    try:
        validate_tool_arguments(SimpleNamespace(parameters=schema), call)
    except ToolArgumentsError:
        return False
    return True


@pytest.mark.parametrize(("value", "valid"), [("12", True), ("12\n", False), ("١٢", False)])
def test_digits_pattern_is_javascripts(value: str, valid: bool) -> None:
    assert _valid(DIGITS, {"id": value}) is valid


@pytest.mark.parametrize("scenario_id", ["digits", "unicode", "invalid"])
def test_standin_agrees_with_real_pi(scenario_id: str) -> None:
    name = f"agent-validation-pattern-{scenario_id}"
    recorded = read_recorded(name, "1.6.0", SCENARIOS)
    assert recorded is not None
    standin = run_on_standin(load_scenario(SCENARIOS / f"{name}.json"))
    assert first_difference(standin, recorded) is None
