"""The scenario models accept exactly the contract of scenario.schema.json."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pinb.errors import ScenarioError
from pinb.scenario.model import Scenario, load_scenario, parse_scenario

AGENT: dict[str, Any] = {
    "id": "ch01-word-count",
    "layer": "agent",
    "system_prompt": "You count words.",
    "prompt": "How many words in 'the quick brown fox'?",
    "tools": [{"name": "word_count", "behavior": {"kind": "word_count"}}],
    "responses": [
        {
            "content": [{"type": "toolCall", "id": "wc-1", "name": "word_count", "arguments": {"text": "a b"}}],
            "stopReason": "toolUse",
        },
        {"content": [{"type": "text", "text": "Two words."}]},
    ],
}
APP: dict[str, Any] = {
    "id": "app-1",
    "layer": "app",
    "prompt": ["one", "two"],
    "tools": [{"name": "bash", "behavior": {"kind": "simulated_bash", "stdout": "", "exitCode": 1}}],
    "responses": [{"content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "ok"}]}],
    "extensions": [
        {
            "name": "guard",
            "handlers": [
                {"event": "tool_call", "label": "g", "action": {"kind": "block_if_match", "tool_names": ["bash"],
                 "patterns": ["x"]}},
                {"event": "tool_result", "action": {"kind": "replace_result", "details": None}},
                {"event": "input", "action": {"kind": "transform_input", "text": "[{text}]"}},
                {"event": "before_agent_start", "action": {"kind": "inject_message", "customType": "n",
                 "content": "c"}},
                {"event": "message_end", "action": {"kind": "replace_message", "text": "{text}!", "role": "user"}},
                {"event": "turn_end", "action": {"kind": "continue_once", "at": 2,
                 "entry": {"type": "custom_message", "customType": "k", "content": "go"}}},
                {"event": "agent_before_settle", "action": {"kind": "continue_once"}},
                {"event": "agent_start", "action": {"kind": "unsubscribe", "target": "g"}},
                {"event": "agent_end", "action": {"kind": "sleep", "ms": 5}},
                {"event": "turn_start", "action": {"kind": "throw", "message": "boom"}},
                {"event": "tool_call", "action": {"kind": "mutate_input", "set": {"command": "ls"}}},
                {"event": "context", "action": {"kind": "record"}},
            ],
        }
    ],
    "ui": {"has_ui": True, "confirm": True},
    "queue": [{"when": "tool_execution_update#2", "do": "steer", "text": "s"}, {"when": "turn_end#1", "do": "abort"}],
    "settings": {"tool_execution": "sequential", "steering_mode": "all", "follow_up_mode": "all",
                 "stream": {"token_size": 2, "tokens_per_second": 50}},
}  # fmt: skip


def _with(base: dict[str, Any], change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    change(doc)
    return doc


def _tool(behavior: dict[str, Any], **extra: Any) -> Callable[[dict[str, Any]], object]:
    return lambda d: d.update(tools=[{"name": "t", "behavior": behavior, **extra}])


def _handler(event: str, action: dict[str, Any], **extra: Any) -> Callable[[dict[str, Any]], object]:
    return lambda d: d["extensions"][0].update(handlers=[{"event": event, "action": action, **extra}])


VALID: list[tuple[str, dict[str, Any]]] = [
    ("agent", AGENT),
    ("app", APP),
    ("minimal", {"id": "a", "layer": "agent", "prompt": "p", "responses": []}),
    ("id with dots", _with(AGENT, lambda d: d.update(id="v1.0_a-b"))),
    ("return defaults", _with(AGENT, _tool({"kind": "return"}))),
    ("return any details", _with(AGENT, _tool({"kind": "return", "details": [1, "x"], "isError": True}))),
    ("sleep", _with(AGENT, _tool({"kind": "sleep", "ms": 0, "updates": ["a"], "then": {"text": "t"}}))),
    ("sleep integral float", _with(AGENT, _tool({"kind": "sleep", "ms": 2.0}))),
    ("throw", _with(AGENT, _tool({"kind": "throw", "message": "m"}, execution_mode="sequential"))),
    ("parameters", _with(AGENT, _tool({"kind": "return"}, parameters={"type": "object"}, description="d"))),
    ("agent with empty extensions", _with(AGENT, lambda d: d.update(extensions=[]))),
    ("agent with queue", _with(AGENT, lambda d: d.update(queue=[{"when": "agent_end#1", "do": "follow_up",
                                                                "text": "more"}]))),
    ("stop reasons", _with(AGENT, lambda d: d["responses"][0].update(stopReason="length", errorMessage="e"))),
    ("tool call without id", _with(AGENT, lambda d: d["responses"][0]["content"][0].pop("id"))),
    ("tool call without arguments", _with(AGENT, lambda d: d["responses"][0]["content"][0].pop("arguments"))),
    ("abort without text", _with(AGENT, lambda d: d.update(queue=[{"when": "turn_end#3", "do": "abort"}]))),
    ("replace_result isError", _with(APP, _handler("tool_result", {"kind": "replace_result", "isError": False}))),
    ("block_if_match all fields", _with(APP, _handler("tool_call", {
        "kind": "block_if_match", "tool_names": ["bash"], "patterns": ["a"], "match_on": "command",
        "reason_template": "r", "confirm_with_ui": True, "confirm_title": "t", "denied_reason": "d"}))),
    ("empty settings and ui", _with(APP, lambda d: d.update(settings={}, ui={}))),
    ("stream float rate", _with(AGENT, lambda d: d.update(settings={"stream": {"tokens_per_second": 0.5}}))),
    # pinb's extension: hooks (layer agent)
    ("hooks empty", _with(AGENT, lambda d: d.update(hooks={}))),
    ("hooks all", _with(AGENT, lambda d: d.update(hooks={
        "prepare_request": {"kind": "throw", "message": "m", "at": 2},
        "before_tool_call": {"kind": "mutate_args", "set": {"text": "x"}},
        "after_tool_call": {"kind": "patch", "text": "[{text}]", "isError": True, "details": None}}))),
    ("hooks record", _with(AGENT, lambda d: d.update(hooks={"prepare_request": {"kind": "record"},
        "before_tool_call": {"kind": "record"}, "after_tool_call": {"kind": "record"}}))),
    ("hooks block", _with(AGENT, lambda d: d.update(hooks={"before_tool_call": {"kind": "block"}}))),
    ("hooks throw everywhere", _with(AGENT, lambda d: d.update(hooks={
        "before_tool_call": {"kind": "throw", "message": "b"}, "after_tool_call": {"kind": "throw", "message": "a"}}))),
    # pinb's extension: the recovery fields (layer app)
    ("model limits", _with(APP, lambda d: d.update(model={"context_window": 4000, "max_tokens": 100}))),
    ("compaction and retry settings", _with(APP, lambda d: d.update(settings={
        "compaction": {"enabled": True, "reserve_tokens": 0, "keep_recent_tokens": 1},
        "retry": {"enabled": False, "max_retries": 0, "base_delay_ms": 1}}))),
]  # fmt: skip

INVALID: list[tuple[str, dict[str, Any]]] = [
    ("uppercase id", _with(AGENT, lambda d: d.update(id="Ch01"))),
    ("id with slash", _with(AGENT, lambda d: d.update(id="a/b"))),
    ("id starting with dot", _with(AGENT, lambda d: d.update(id=".hidden"))),
    ("empty id", _with(AGENT, lambda d: d.update(id=""))),
    ("unknown top-level field", _with(AGENT, lambda d: d.update(extra=1))),
    ("missing prompt", _with(AGENT, lambda d: d.pop("prompt"))),
    ("missing responses", _with(AGENT, lambda d: d.pop("responses"))),
    ("empty prompt list", _with(AGENT, lambda d: d.update(prompt=[]))),
    ("prompt number", _with(AGENT, lambda d: d.update(prompt=3))),
    ("unknown layer", _with(AGENT, lambda d: d.update(layer="tui"))),
    ("extensions on layer agent", _with(AGENT, lambda d: d.update(extensions=APP["extensions"]))),
    ("unknown behavior", _with(AGENT, _tool({"kind": "exec"}))),
    ("behavior extra field", _with(AGENT, _tool({"kind": "word_count", "text": "x"}))),
    ("throw without message", _with(AGENT, _tool({"kind": "throw"}))),
    ("sleep without ms", _with(AGENT, _tool({"kind": "sleep"}))),
    ("sleep negative ms", _with(AGENT, _tool({"kind": "sleep", "ms": -1}))),
    ("sleep ms as string", _with(AGENT, _tool({"kind": "sleep", "ms": "5"}))),
    ("sleep fractional ms", _with(AGENT, _tool({"kind": "sleep", "ms": 1.5}))),
    ("sleep then extra", _with(AGENT, _tool({"kind": "sleep", "ms": 1, "then": {"oops": 1}}))),
    ("return isError as int", _with(AGENT, _tool({"kind": "return", "isError": 1}))),
    ("bash snake exit code", _with(AGENT, _tool({"kind": "simulated_bash", "exit_code": 1}))),
    ("tool name with space", _with(AGENT, lambda d: d["tools"][0].update(name="word count"))),
    ("tool name too long", _with(AGENT, lambda d: d["tools"][0].update(name="x" * 65))),
    ("tool bad execution mode", _with(AGENT, lambda d: d["tools"][0].update(execution_mode="batch"))),
    ("tool parameters not object", _with(AGENT, lambda d: d["tools"][0].update(parameters=[]))),
    ("tool without behavior", _with(AGENT, lambda d: d["tools"][0].pop("behavior"))),
    ("bad stopReason", _with(AGENT, lambda d: d["responses"][0].update(stopReason="pending"))),
    ("snake stop_reason", _with(AGENT, lambda d: d["responses"][0].update(stop_reason="stop"))),
    ("unknown block type", _with(AGENT, lambda d: d["responses"][1]["content"].append({"type": "image"}))),
    ("text block without text", _with(AGENT, lambda d: d["responses"][1]["content"].append({"type": "text"}))),
    ("tool call empty id", _with(AGENT, lambda d: d["responses"][0]["content"][0].update(id=""))),
    ("tool call without name", _with(AGENT, lambda d: d["responses"][0]["content"][0].pop("name"))),
    ("tool call arguments list", _with(AGENT, lambda d: d["responses"][0]["content"][0].update(arguments=[]))),
    ("text block extra", _with(AGENT, lambda d: d["responses"][1]["content"][0].update(id="x"))),
    ("unknown handler event", _with(APP, _handler("tool_called", {"kind": "record"}))),
    ("unknown action", _with(APP, _handler("input", {"kind": "log"}))),
    ("action extra field", _with(APP, _handler("input", {"kind": "record", "note": 1}))),
    ("empty label", _with(APP, _handler("input", {"kind": "record"}, label=""))),
    ("block_if_match on tool_result", _with(APP, _handler("tool_result", {
        "kind": "block_if_match", "tool_names": ["bash"], "patterns": ["a"]}))),
    ("block_if_match no patterns", _with(APP, _handler("tool_call", {
        "kind": "block_if_match", "tool_names": ["bash"], "patterns": []}))),
    ("block_if_match bad match_on", _with(APP, _handler("tool_call", {
        "kind": "block_if_match", "tool_names": ["bash"], "patterns": ["a"], "match_on": "args"}))),
    ("mutate_input on input", _with(APP, _handler("input", {"kind": "mutate_input", "set": {}}))),
    ("replace_result nothing", _with(APP, _handler("tool_result", {"kind": "replace_result"}))),
    ("replace_result on tool_call", _with(APP, _handler("tool_call", {"kind": "replace_result", "text": "x"}))),
    ("transform_input on tool_call", _with(APP, _handler("tool_call", {"kind": "transform_input", "text": "x"}))),
    ("inject_message on input", _with(APP, _handler("input", {"kind": "inject_message", "customType": "a",
                                                               "content": "b"}))),
    ("inject_message no content", _with(APP, _handler("before_agent_start", {"kind": "inject_message",
                                                                             "customType": "a"}))),
    ("replace_message on message_start", _with(APP, _handler("message_start", {"kind": "replace_message",
                                                                               "text": "x"}))),
    ("replace_message bad role", _with(APP, _handler("message_end", {"kind": "replace_message", "text": "x",
                                                                     "role": "toolResult"}))),
    ("continue_once on agent_end", _with(APP, _handler("agent_end", {"kind": "continue_once"}))),
    ("continue_once at 0", _with(APP, _handler("turn_end", {"kind": "continue_once", "at": 0}))),
    ("continue_once bad entry", _with(APP, _handler("turn_end", {"kind": "continue_once", "entry": {
        "type": "message", "customType": "a", "content": "b"}}))),
    ("unsubscribe without target", _with(APP, _handler("input", {"kind": "unsubscribe"}))),
    ("sleep action negative", _with(APP, _handler("input", {"kind": "sleep", "ms": -5}))),
    ("extension without handlers", _with(APP, lambda d: d["extensions"][0].pop("handlers"))),
    ("extension empty name", _with(APP, lambda d: d["extensions"][0].update(name=""))),
    ("ui extra", _with(APP, lambda d: d.update(ui={"has_ui": True, "theme": "dark"}))),
    ("ui has_ui string", _with(APP, lambda d: d.update(ui={"has_ui": "yes"}))),
    ("trigger bad when", _with(APP, lambda d: d.update(queue=[{"when": "turn_end", "do": "abort"}]))),
    ("trigger zero occurrence", _with(APP, lambda d: d.update(queue=[{"when": "turn_end#0", "do": "abort"}]))),
    ("trigger uppercase event", _with(APP, lambda d: d.update(queue=[{"when": "Turn_end#1", "do": "abort"}]))),
    ("steer without text", _with(APP, lambda d: d.update(queue=[{"when": "turn_end#1", "do": "steer"}]))),
    ("follow_up without text", _with(APP, lambda d: d.update(queue=[{"when": "turn_end#1", "do": "follow_up"}]))),
    ("unknown trigger action", _with(APP, lambda d: d.update(queue=[{"when": "turn_end#1", "do": "pause"}]))),
    ("settings unknown mode", _with(APP, lambda d: d.update(settings={"steering_mode": "batch"}))),
    ("settings extra", _with(APP, lambda d: d.update(settings={"thinking": "high"}))),
    ("stream zero rate", _with(APP, lambda d: d.update(settings={"stream": {"tokens_per_second": 0}}))),
    ("stream zero token size", _with(APP, lambda d: d.update(settings={"stream": {"token_size": 0}}))),
    ("hooks on layer app", _with(APP, lambda d: d.update(hooks={"prepare_request": {"kind": "record"}}))),
    ("hooks unknown hook", _with(AGENT, lambda d: d.update(hooks={"finish_turn": {"kind": "record"}}))),
    ("hooks unknown field", _with(AGENT, lambda d: d.update(hooks={"prepare_request": {"kind": "record", "x": 1}}))),
    ("hooks kind of another hook", _with(AGENT, lambda d: d.update(hooks={"prepare_request": {"kind": "block"}}))),
    ("hooks mutate_args on after", _with(AGENT, lambda d: d.update(
        hooks={"after_tool_call": {"kind": "mutate_args", "set": {}}}))),
    ("hooks patch without fields", _with(AGENT, lambda d: d.update(hooks={"after_tool_call": {"kind": "patch"}}))),
    ("hooks throw without message", _with(AGENT, lambda d: d.update(hooks={"prepare_request": {"kind": "throw"}}))),
    ("hooks throw at zero", _with(AGENT, lambda d: d.update(
        hooks={"prepare_request": {"kind": "throw", "message": "m", "at": 0}}))),
    ("hooks block reason not string", _with(AGENT, lambda d: d.update(
        hooks={"before_tool_call": {"kind": "block", "reason": 1}}))),
    ("model on layer agent", _with(AGENT, lambda d: d.update(model={"context_window": 4000}))),
    ("model unknown field", _with(APP, lambda d: d.update(model={"name": "faux-2"}))),
    ("model zero window", _with(APP, lambda d: d.update(model={"context_window": 0}))),
    ("compaction on layer agent", _with(AGENT, lambda d: d.update(settings={"compaction": {"enabled": False}}))),
    ("retry on layer agent", _with(AGENT, lambda d: d.update(settings={"retry": {"max_retries": 1}}))),
    ("retry negative", _with(APP, lambda d: d.update(settings={"retry": {"base_delay_ms": -1}}))),
    ("compaction unknown field", _with(APP, lambda d: d.update(settings={"compaction": {"reserve": 1}}))),
]  # fmt: skip

# Rules of the contract's prose that JSON Schema cannot state (names and labels unique, targets exist).
PROSE_INVALID: list[tuple[str, dict[str, Any]]] = [
    ("duplicate tool names", _with(AGENT, lambda d: d["tools"].append(d["tools"][0]))),
    ("duplicate extension names", _with(APP, lambda d: d["extensions"].append(d["extensions"][0]))),
    ("duplicate labels", _with(APP, lambda d: d["extensions"][0]["handlers"].append(
        {"event": "input", "label": "g", "action": {"kind": "record"}}))),
    ("unsubscribe unknown target", _with(APP, _handler("input", {"kind": "unsubscribe", "target": "nobody"}))),
]  # fmt: skip


@pytest.mark.parametrize("name", ["ch01-word-count", "ch16-guard-force-push"])
def test_the_formats_examples_load(name: str) -> None:
    scenario = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / f"{name}.json")
    assert scenario.id == name


def test_ch16_fields_and_defaults() -> None:
    scenario = parse_scenario(APP)
    handler = scenario.extensions[0].handlers[0]
    assert handler.action.kind == "block_if_match"
    assert handler.action.reason_template == "Guard blocked: {pattern}"
    assert handler.action.match_on == "json_input"
    assert scenario.prompts == ("one", "two")
    assert scenario.queue[0].event_type == "tool_execution_update"
    assert scenario.queue[0].occurrence == 2
    assert scenario.tools[0].effective_parameters()["required"] == ["command"]
    assert scenario.extensions[0].handlers[1].action.patch_fields() == {"details": None}


def test_defaults() -> None:
    scenario = parse_scenario({"id": "a", "layer": "agent", "prompt": "p", "responses": [{"content": []}]})
    assert scenario.responses[0].stop_reason == "stop"
    assert scenario.effective_settings.tool_execution == "parallel"
    assert scenario.effective_settings.steering_mode == "one-at-a-time"
    assert scenario.effective_ui.has_ui is False
    assert scenario.tools == () and scenario.queue == () and scenario.extensions == ()


@pytest.mark.parametrize(("name", "doc"), VALID, ids=[n for n, _ in VALID])
def test_valid_documents_load(name: str, doc: dict[str, Any]) -> None:
    assert isinstance(parse_scenario(doc), Scenario)


@pytest.mark.parametrize(("name", "doc"), INVALID + PROSE_INVALID, ids=[n for n, _ in INVALID + PROSE_INVALID])
def test_invalid_documents_are_rejected_in_one_line(name: str, doc: dict[str, Any]) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(doc)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "doc", "valid"),
    [(n, d, True) for n, d in VALID] + [(n, d, False) for n, d in INVALID],
    ids=[n for n, _ in VALID + INVALID],
)
def test_models_agree_with_the_json_schema(name: str, doc: dict[str, Any], valid: bool) -> None:
    import jsonschema

    from ._schema import pinb_schema

    assert jsonschema.Draft202012Validator(pinb_schema()).is_valid(doc) is valid
    try:
        parse_scenario(doc)
        ours = True
    except ScenarioError:
        ours = False
    assert ours is valid


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "a scenario is a JSON object"),
        ('{"id": "Bad", "layer": "agent", "prompt": "p", "responses": []}', "not a plain slug"),
        ('{"id": "a", "layer": "agent", "prompt": "p"}', "responses"),
    ],
)
def test_load_scenario_errors_are_one_line(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ScenarioError, match=fragment) as info:
        load_scenario(path)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "absent.json")
