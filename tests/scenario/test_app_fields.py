"""pinb's application-layer scenario fields: the Python model and the JSON Schema agree, and the stand-in runs them.

Whether the stand-in's traces are right is checked against real Pi in test_conformance.py (the corpus has a
scenario for each field); these tests pin the grammar and a few behaviours that no corpus scenario shows.
"""

from __future__ import annotations

from typing import Any

import pytest

from pinb.errors import ScenarioError
from pinb.scenario.model import parse_scenario
from pinb.scenario.standin import run_on_standin

from ._schema import app_document, schema_errors


def _with(**fields: Any) -> dict[str, Any]:
    return app_document("app-fields", **fields)


def _handler(event: str, action: dict[str, Any]) -> dict[str, Any]:
    return {"name": "x", "handlers": [{"event": event, "label": "h", "action": action}]}


VALID = [
    _with(project={"files": {"AGENTS.md": "a", "app/.pi/SYSTEM.md": "b"}, "cwd": "app", "trust": "ask"}),
    _with(steps=[{"do": "snapshot"}, {"do": "compact", "instructions": "short"}, {"do": "shutdown"}]),
    _with(steps=[{"do": "navigate", "target": {"role": "user", "text": "Hello."}}]),
    _with(model={"id": "m", "reasoning": True, "thinking_level": "high"}, observe={"requests": True}),
    _with(model={"reasoning": True, "thinking_level": "max"}),
    _with(project={"files": {}, "agent_files": {"AGENTS.md": "g", "skills/s/SKILL.md": "x"}}),
    _with(steps=[{"do": "set_thinking_level", "level": "xhigh"}]),
    _with(extensions=[_handler("turn_end", {"kind": "set_thinking_level", "level": "low", "at": 2})]),
    _with(settings={"compaction": {"keep_recent_tokens": 10}}),
    _with(extensions=[_handler("turn_start", {"kind": "return_value", "value": {"block": True}})]),
    _with(extensions=[_handler("agent_before_settle", {"kind": "continue_times", "times": 2})]),
    _with(extensions=[_handler("project_trust", {"kind": "trust", "trusted": "yes", "remember": False})]),
    _with(extensions=[_handler("session_before_compact", {"kind": "supply_summary", "summary": "s"})]),
    _with(extensions=[_handler("agent_end", {"kind": "set_active_tools", "tools": [], "at": 2})]),
    {**_with(project={"files": {"app/AGENTS.md": "a"}, "cwd": "app"}), "layer": "agent"},
    {**_with(project={"files": {}}, observe={"requests": True}), "layer": "agent"},
]

INVALID = [
    {**_with(project={"files": {}, "trust": "trusted"}), "layer": "agent"},
    {**_with(steps=[{"do": "snapshot"}]), "layer": "agent"},
    _with(project={"files": {"../outside.md": "x"}}),
    _with(project={"files": {"/abs.md": "x"}}),
    _with(project={"files": {}, "cwd": "a/../b"}),
    _with(project={"trust": "maybe"}),
    _with(steps=[{"do": "navigate", "target": {"role": "system", "text": "x"}}]),
    _with(steps=[{"do": "jump"}]),
    _with(model={"thinking_level": "ultra"}),
    {**_with(project={"agent_files": {"AGENTS.md": "g"}}), "layer": "agent"},
    _with(project={"agent_files": {"../AGENTS.md": "g"}}),
    _with(steps=[{"do": "set_thinking_level", "level": "ultra"}]),
    _with(steps=[{"do": "set_thinking_level"}]),
    _with(extensions=[_handler("turn_end", {"kind": "set_thinking_level"})]),
    _with(observe={"requests": True, "tree": True}),
    _with(extensions=[_handler("turn_end", {"kind": "trust", "trusted": "yes"})]),
    _with(extensions=[_handler("context", {"kind": "supply_summary", "summary": "s"})]),
    _with(extensions=[_handler("turn_end", {"kind": "continue_times", "times": 0})]),
]


#: Rules JSON Schema cannot express (like the contract's unique labels): the model enforces them.
MODEL_ONLY_INVALID = [_with(steps=[{"do": "shutdown"}, {"do": "snapshot"}])]


@pytest.mark.parametrize("doc", VALID)
def test_valid_documents_parse(doc: dict[str, Any]) -> None:
    parse_scenario(doc)


@pytest.mark.parametrize("doc", INVALID + MODEL_ONLY_INVALID)
def test_invalid_documents_are_one_line_errors(doc: dict[str, Any]) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(doc)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("doc", "valid"), [(d, True) for d in VALID] + [(d, False) for d in INVALID])
def test_the_schema_agrees_with_the_model(doc: dict[str, Any], valid: bool) -> None:
    errors = schema_errors(doc)
    assert (errors == []) == valid, errors


def test_a_scenario_without_the_new_fields_writes_no_new_lines() -> None:
    lines = run_on_standin(parse_scenario(_with()))
    assert not {line["source"] for line in lines} & {"request", "tree"}


def test_trust_ask_without_trust_requiring_resources_trusts_without_asking() -> None:
    doc = _with(
        project={"files": {"AGENTS.md": "Root rule."}, "trust": "ask"},
        extensions=[_handler("project_trust", {"kind": "trust", "trusted": "no"})],
        observe={"requests": True},
    )
    lines = run_on_standin(parse_scenario(doc))
    assert not [line for line in lines if line["source"] == "ext"]
    prompt = next(line["systemPrompt"] for line in lines if line["source"] == "request")
    assert "Root rule." in prompt and "/pinb-home" not in prompt and "<home>/project" in prompt


def test_a_step_that_finds_no_entry_is_rejected_and_the_run_goes_on() -> None:
    doc = _with(steps=[{"do": "branch", "target": {"role": "user", "text": "never said"}}, {"do": "snapshot"}])
    lines = run_on_standin(parse_scenario(doc))
    driver = [(line["type"], line.get("error")) for line in lines if line["source"] == "driver"]
    assert ("step_rejected", 'no user message entry with text "never said"') in driver
    assert any(line["source"] == "tree" for line in lines)


def test_an_agent_layer_project_is_only_the_working_directory() -> None:
    """The agent core alone reads nothing from the folder: its request line shows an empty system prompt."""
    doc = {**_with(project={"files": {"AGENTS.md": "Folder rule."}}, observe={"requests": True}), "layer": "agent"}
    lines = run_on_standin(parse_scenario(doc))
    inputs = [line for line in lines if line["source"] == "request"]
    assert [(line["n"], line["systemPrompt"]) for line in inputs] == [(1, "")]
    assert "branch" not in inputs[0]
