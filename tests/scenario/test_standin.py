"""The stand-in backend's own pieces: scenario tools, declarative handlers, triggers, and what a run writes."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pinb.agent import AgentToolResult
from pinb.ai import AbortController, AssistantMessage, TextContent, ToolCall
from pinb.scenario.model import Tool, parse_scenario
from pinb.scenario.standin import arun_on_standin
from pinb.scenario.standin_app import make_action
from pinb.scenario.standin_tools import build_tools, js_word_count, make_execute
from pinb.scenario.trace import project

CH01: dict[str, Any] = {
    "id": "ch01-word-count",
    "layer": "agent",
    "system_prompt": "You count words.",
    "prompt": "How many words in 'the quick brown fox'?",
    "tools": [{"name": "word_count", "behavior": {"kind": "word_count"}}],
    "responses": [
        {
            "content": [
                {"type": "toolCall", "id": "wc-1", "name": "word_count", "arguments": {"text": "the quick brown fox"}}
            ],
            "stopReason": "toolUse",
        },
        {"content": [{"type": "text", "text": "Four words."}], "stopReason": "stop"},
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("the quick brown fox", 4),
        ("  padded   words \n", 2),
        ("", 0),
        ("a\u00a0b\u2003c", 3),  # JavaScript's \s includes no-break and em spaces
        ("a\ufeffb", 2),  # and the byte-order mark, which Python's str.split() does not split on
        ("a\x1cb", 1),  # while Python splits on \x1c and JavaScript does not
    ],
)
def test_word_count_uses_javascript_whitespace(text: str, n: int) -> None:
    assert js_word_count(text) == n


async def _execute(tool: dict[str, Any], params: Any, signal: Any = None) -> tuple[Any, list[Any], list[str]]:
    updates: list[Any] = []
    commands: list[str] = []
    execute = make_execute(Tool.model_validate_json(json.dumps(tool)), commands)
    result = await execute("id-1", params, signal, updates.append)
    return result, updates, commands


async def test_word_count_tool() -> None:
    result, _, _ = await _execute({"name": "wc", "behavior": {"kind": "word_count"}}, {"text": "a b c"})
    assert result == AgentToolResult(content=(TextContent(text="3"),), details={"words": 3})
    with pytest.raises(RuntimeError, match=r"^word_count: text must be a string$"):
        await _execute({"name": "wc", "behavior": {"kind": "word_count"}}, {"text": 3})


async def test_return_tool_defaults_and_explicit_null_details() -> None:
    result, _, _ = await _execute({"name": "r", "behavior": {"kind": "return"}}, {})
    assert result == AgentToolResult(content=(TextContent(text=""),), details={})
    result, _, _ = await _execute({"name": "r", "behavior": {"kind": "return", "details": None, "isError": True}}, {})
    assert result.details == {} and result.is_error is True


async def test_throw_tool() -> None:
    with pytest.raises(RuntimeError, match=r"^disk full$"):
        await _execute({"name": "t", "behavior": {"kind": "throw", "message": "disk full"}}, {})


async def test_sleep_tool_reports_updates_then_returns() -> None:
    tool = {"name": "s", "behavior": {"kind": "sleep", "ms": 1, "updates": ["a", "b"], "then": {"text": "done"}}}
    result, updates, _ = await _execute(tool, {})
    assert [u.content[0].text for u in updates] == ["a", "b"]
    assert result.content[0].text == "done"


async def test_sleep_tool_aborted_meanwhile_throws_at_once() -> None:
    controller = AbortController()
    tool = {"name": "job", "behavior": {"kind": "sleep", "ms": 60_000}}
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, controller.abort)
    started = loop.time()
    with pytest.raises(RuntimeError, match=r"^job aborted$"):
        await _execute(tool, {}, controller.signal)
    assert loop.time() - started < 5
    with pytest.raises(RuntimeError, match=r"^job aborted$"):  # already aborted before it starts
        await _execute(tool, {}, controller.signal)


@pytest.mark.parametrize(
    ("behavior", "text", "is_error"),
    [
        ({"kind": "simulated_bash"}, "(no output)", None),
        ({"kind": "simulated_bash", "stdout": "ok\n"}, "ok\n", None),
        ({"kind": "simulated_bash", "stdout": "", "exitCode": 2}, "(no output)\n\nCommand exited with code 2", True),
    ],
)
async def test_simulated_bash_records_and_never_runs(
    tmp_path: Path, behavior: dict[str, Any], text: str, is_error: bool | None
) -> None:
    marker = tmp_path / "touched"
    result, _, commands = await _execute({"name": "bash", "behavior": behavior}, {"command": f"touch {marker}"})
    assert commands == [f"touch {marker}"]
    assert not marker.exists()
    assert result.content[0].text == text and result.is_error is is_error and result.details is None


def test_build_tools_uses_contract_defaults() -> None:
    tools = build_tools(parse_scenario(CH01).tools, [])
    assert tools[0].name == "word_count" and tools[0].description == "word_count"
    assert tools[0].parameters["required"] == ["text"]


# --- a whole run ---------------------------------------------------------------------------------------------------


async def test_ch01_run_shows_the_books_three_facts() -> None:
    lines = await arun_on_standin(parse_scenario(CH01))
    assert lines[0] == {
        "seq": 1, "source": "meta", "type": "scenario", "id": "ch01-word-count", "layer": "agent",
        "backend": "standin", "versions": lines[0]["versions"], "python": lines[0]["python"],
    }  # fmt: skip
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    ends = [line for line in lines if line["type"] == "message_end" and line.get("role") == "assistant"]
    assert [e["stopReason"] for e in ends] == ["toolUse", "stop"]
    tool_end = next(line for line in lines if line["type"] == "tool_execution_end")
    assert (tool_end["toolName"], tool_end["details"], tool_end["toolCallId"]) == ("word_count", {"words": 4}, "call#1")
    assert [line["type"] for line in lines if line["source"] == "driver"] == ["prompt", "prompt_resolved", "dispose"]
    models = [line for line in lines if line["source"] == "model"]
    assert [m["n"] for m in models] == [1, 2] and models[0]["tools"] == ["word_count"]
    assert all("wc-1" not in str(line) for line in lines)  # scripted ids never reach a trace


async def test_queue_trigger_fires_right_after_its_event_line() -> None:
    doc = copy.deepcopy(CH01)
    doc["queue"] = [{"when": "turn_end#1", "do": "follow_up", "text": "And now?"}]
    doc["responses"].append({"content": [{"type": "text", "text": "Still four."}]})
    lines = await arun_on_standin(parse_scenario(doc))
    index = next(i for i, line in enumerate(lines) if line["source"] == "driver" and line["type"] == "queue")
    assert lines[index - 1]["type"] == "turn_end"
    assert lines[index] == {"seq": index + 1, "source": "driver", "type": "queue", "when": "turn_end#1",
                            "do": "follow_up", "text": "And now?"}  # fmt: skip
    users = [line.get("text") for line in lines if line.get("role") == "user" and line["type"] == "message_end"]
    assert users[-1] == "And now?"


async def test_exhausted_script_is_marked_on_the_model_line() -> None:
    doc = {**CH01, "responses": CH01["responses"][:1]}
    lines = await arun_on_standin(parse_scenario(doc))
    models = [line for line in lines if line["source"] == "model"]
    assert "exhausted" not in models[0] and models[1]["exhausted"] is True
    last = [line for line in lines if line["type"] == "message_end" and line.get("role") == "assistant"][-1]
    assert (last["stopReason"], last["errorMessage"]) == ("error", "No more faux responses queued")


async def test_app_guard_run_projects_to_the_books_outcome() -> None:
    doc = {
        "id": "guard", "layer": "app", "prompt": "Push.",
        "tools": [{"name": "bash", "behavior": {"kind": "simulated_bash"}}],
        "responses": [
            {"content": [{"type": "toolCall", "name": "bash", "arguments": {"command": "git push -f"}}],
             "stopReason": "toolUse"},
            {"content": [{"type": "text", "text": "Blocked."}]},
        ],
        "extensions": [{"name": "g", "handlers": [{"event": "tool_call", "label": "h", "action": {
            "kind": "block_if_match", "tool_names": ["bash"], "patterns": ["nomatch", "push\\s+-f"]}}]}],
    }  # fmt: skip
    lines = await arun_on_standin(parse_scenario(doc))
    ext = next(line for line in lines if line["source"] == "ext")
    assert ext["result"] == {"block": True, "reason": "Guard blocked: push\\s+-f"}
    assert ext["input"] == {"command": "git push -f"}
    assert {"source": "session", "type": "tool_execution_end", "toolName": "bash", "toolCallId": "call#1",
            "isError": True} in project(lines)  # fmt: skip
    assert lines[-1]["type"] == "dispose"


# --- declarative handler actions -------------------------------------------------------------------------------------


class _Event:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class _Ctx:
    def __init__(self, has_ui: bool, answer: bool) -> None:
        self.has_ui = has_ui
        self.asked: list[tuple[str, str]] = []

        class UI:
            async def confirm(_self, title: str, message: str) -> bool:
                self.asked.append((title, message))
                return answer

        self.ui = UI()


class _State:
    invocations = 1


def _action(action: dict[str, Any], event: str) -> Any:
    handlers = [{"event": event, "action": action}, {"event": "agent_end", "label": "t", "action": {"kind": "record"}}]
    doc = {
        "id": "x",
        "layer": "app",
        "prompt": "p",
        "responses": [],
        "extensions": [{"name": "e", "handlers": handlers}],
    }
    return parse_scenario(doc).extensions[0].handlers[0].action


async def _call(act: Any, event: Any, ctx: Any = None) -> Any:
    outcome = act(event, ctx)
    return await outcome if asyncio.iscoroutine(outcome) else outcome


@pytest.mark.parametrize(
    ("match_on", "command", "blocked"),
    [
        ("json_input", "git push --force", True),
        ("json_input", "git\tpush --force", False),  # JSON.stringify turns the tab into the two characters \t
        ("command", "git\tpush --force", True),
        ("command", None, False),
    ],
)
async def test_block_if_match_subjects(match_on: str, command: str | None, blocked: bool) -> None:
    action = _action({"kind": "block_if_match", "tool_names": ["bash"], "match_on": match_on,
                      "patterns": ["\\bgit\\s+push\\b[^\\n]*--force"]}, "tool_call")  # fmt: skip
    event = _Event(tool_name="bash", input={} if command is None else {"command": command})
    result = await _call(make_action(action, {}, _State()), event, _Ctx(False, False))
    assert (result is not None) is blocked


@pytest.mark.parametrize(("answer", "expected"), [(True, None), (False, {"block": True, "reason": "nope"})])
async def test_block_if_match_asks_the_ui(answer: bool, expected: Any) -> None:
    action = _action({"kind": "block_if_match", "tool_names": ["bash"], "patterns": ["rm"], "confirm_with_ui": True,
                      "confirm_title": "Sure?", "denied_reason": "nope"}, "tool_call")  # fmt: skip
    ctx = _Ctx(True, answer)
    result = await _call(make_action(action, {}, _State()), _Event(tool_name="bash", input={"command": "rm"}), ctx)
    assert result == expected
    assert ctx.asked == [("Sure?", '{"command":"rm"}')]


async def test_block_if_match_ignores_other_tools() -> None:
    action = _action({"kind": "block_if_match", "tool_names": ["bash"], "patterns": ["."]}, "tool_call")
    assert await _call(make_action(action, {}, _State()), _Event(tool_name="read", input={"path": "x"})) is None


async def test_mutate_input_in_place() -> None:
    action = _action({"kind": "mutate_input", "set": {"command": "ls", "timeout": 5}}, "tool_call")
    event = _Event(input={"command": "rm -rf /"})
    assert await _call(make_action(action, {}, _State()), event) is None
    assert event.input == {"command": "ls", "timeout": 5}


async def test_replace_result_fills_current_text() -> None:
    action = _action({"kind": "replace_result", "text": "[{text}]", "details": None}, "tool_result")
    event = _Event(content=(TextContent(text="a"), TextContent(text="b")))
    assert await _call(make_action(action, {}, _State()), event) == {
        "content": [{"type": "text", "text": "[ab]"}],
        "details": None,
    }


async def test_transform_and_inject() -> None:
    transform = _action({"kind": "transform_input", "text": "<{text}>"}, "input")
    assert await _call(make_action(transform, {}, _State()), _Event(text="hi")) == {
        "action": "transform",
        "text": "<hi>",
    }
    inject = _action({"kind": "inject_message", "customType": "note", "content": "c"}, "before_agent_start")
    assert await _call(make_action(inject, {}, _State()), _Event()) == {
        "message": {"customType": "note", "content": "c", "display": True}
    }


async def test_replace_message_keeps_other_blocks_and_roles() -> None:
    action = _action({"kind": "replace_message", "text": "{text}!"}, "message_end")
    message = AssistantMessage(content=(TextContent(text="hi"), ToolCall(id="c", name="t", arguments={})))
    result = await _call(make_action(action, {}, _State()), _Event(message=message))
    assert result["message"].content == (TextContent(text="hi!"), ToolCall(id="c", name="t", arguments={}))
    user = _Event(message={"role": "user", "content": "x"})
    assert await _call(make_action(action, {}, _State()), user) is None


async def test_continue_once_only_on_its_invocation() -> None:
    action = _action({"kind": "continue_once", "at": 2, "entry": {"type": "custom_message", "customType": "k",
                      "content": "go"}}, "turn_end")  # fmt: skip
    state = _State()
    act = make_action(action, {}, state)
    state.invocations = 1
    assert await _call(act, _Event(entries=())) is None
    state.invocations = 2
    assert await _call(act, _Event(entries=())) == {
        "entries": [{"type": "custom_message", "customType": "k", "content": "go", "display": False}],
        "continue": True,
    }


async def test_unsubscribe_calls_the_target_once() -> None:
    calls: list[str] = []
    action = _action({"kind": "unsubscribe", "target": "t"}, "agent_start")
    state = _State()
    act = make_action(action, {"t": lambda: calls.append("t")}, state)
    await _call(act, _Event())
    state.invocations = 2
    await _call(act, _Event())
    assert calls == ["t"]


async def test_start_like_javascript_runs_the_body_up_to_its_first_suspension() -> None:
    from pinb.scenario.standin_app import start_like_javascript

    seen: list[str] = []
    gate = asyncio.get_running_loop().create_future()

    async def work() -> str:
        seen.append("sync part")
        value = await gate
        seen.append(f"resumed with {value}")
        return value

    task = start_like_javascript(work())
    assert seen == ["sync part"] and task is not None
    gate.set_result("x")
    assert await task == "x"
    assert seen == ["sync part", "resumed with x"]

    async def immediate() -> None:
        seen.append("done at once")

    assert start_like_javascript(immediate()) is None
    assert seen[-1] == "done at once"


def test_js_slice_counts_utf16_code_units() -> None:
    from pinb.ai.jsjson import js_slice

    assert js_slice("abc", 0, 2) == "ab"
    assert js_slice("\U0001f600x", 0, 2) == "\U0001f600"  # an emoji is two code units in JavaScript
    assert js_slice("\U0001f600x", 0, 1) == "\ud83d"  # and slicing through it leaves the high surrogate


# --- hooks (pinb's extension of the contract) ----------------------------------------------------------------------


def _hooked(hooks: dict[str, Any]) -> list[dict[str, Any]]:
    doc = copy.deepcopy(CH01)
    doc["hooks"] = hooks
    return asyncio.run(arun_on_standin(parse_scenario(doc)))


def _core(lines: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [line for line in lines if line["type"] == type_ and line["source"] in ("agent", "model")]


def test_prepare_request_throw_stops_the_request() -> None:
    lines = _hooked({"prepare_request": {"kind": "throw", "message": "no", "at": 2}})
    assert len(_core(lines, "request")) == 1
    last = [line for line in _core(lines, "message_end") if line["role"] == "assistant"][-1]
    assert (last["stopReason"], last["errorMessage"]) == ("error", "no")


def test_before_tool_call_mutates_what_the_tool_receives() -> None:
    lines = _hooked({"before_tool_call": {"kind": "mutate_args", "set": {"text": "one two"}}})
    assert _core(lines, "tool_execution_start")[0]["args"] == {"text": "the quick brown fox"}
    end = _core(lines, "tool_execution_end")[0]
    assert (end["text"], end["details"]) == ("2", {"words": 2})


@pytest.mark.parametrize(
    ("hooks", "text", "is_error"),
    [
        ({"before_tool_call": {"kind": "block"}}, "Tool execution was blocked", True),
        ({"before_tool_call": {"kind": "block", "reason": "r"}}, "r", True),
        ({"before_tool_call": {"kind": "throw", "message": "b"}}, "b", True),
        ({"after_tool_call": {"kind": "throw", "message": "a"}}, "a", True),
        ({"after_tool_call": {"kind": "patch", "text": "<{text}>"}}, "<4>", False),
        ({"after_tool_call": {"kind": "patch", "isError": True}}, "4", True),
        ({"before_tool_call": {"kind": "record"}, "after_tool_call": {"kind": "record"}}, "4", False),
    ],
)
def test_tool_hooks_shape_the_result(hooks: dict[str, Any], text: str, is_error: bool) -> None:
    end = _core(_hooked(hooks), "tool_execution_end")[0]
    assert (end["text"], end["isError"]) == (text, is_error)
