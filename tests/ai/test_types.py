"""Message and content records: Pi's JSON shape, the shared adapter, helpers, JSON.stringify, abort signals."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from pinb.ai import (
    MESSAGE_ADAPTER,
    AbortController,
    AbortError,
    AssistantMessage,
    CustomMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    js_length,
    js_stringify,
    message_text,
    parse_message,
    sleep_or_abort,
    to_json,
)
from pinb.ai.types import replace_fields


def test_assistant_message_serialises_like_pi() -> None:
    message = AssistantMessage(
        content=(ThinkingContent(thinking="hm"), TextContent(text="hi"), ToolCall(id="c", name="t", arguments={})),
        stop_reason="toolUse",
        timestamp=7,
    )
    data = to_json(message)
    assert data == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hm"},
            {"type": "text", "text": "hi"},
            {"type": "toolCall", "id": "c", "name": "t", "arguments": {}},
        ],
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse",
        "timestamp": 7,
    }
    assert parse_message(data) == message


@pytest.mark.parametrize(
    "data",
    [
        {"role": "user", "content": "plain", "timestamp": 1},
        {
            "role": "user",
            "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA", "mimeType": "x"}],
            "timestamp": 1,
        },
        {
            "role": "system",
            "content": "sys",
            "toolsAdded": [{"name": "t", "description": "d", "parameters": {}}],
            "toolsRemoved": [{"name": "u"}],
            "timestamp": 0,
        },
        {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "t",
            "content": [{"type": "text", "text": "r"}],
            "details": {"k": [1]},
            "isError": True,
            "timestamp": 2,
        },
        {"role": "custom", "customType": "note", "content": "c", "display": False, "timestamp": 3},
    ],
)
def test_round_trip_through_the_shared_adapter(data: dict) -> None:
    message = MESSAGE_ADAPTER.validate_python(data)
    assert to_json(message) == data


def test_records_are_frozen_and_strict() -> None:
    message = UserMessage(content="x")
    with pytest.raises(ValidationError):
        message.content = "y"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        UserMessage(content="x", unknown=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        parse_message({"role": "robot", "content": "x"})


def test_message_text() -> None:
    assert message_text(UserMessage(content="plain")) == "plain"
    both = AssistantMessage(content=(TextContent(text="a"), ThinkingContent(thinking="no"), TextContent(text="b")))
    assert message_text(both) == "ab"
    assert message_text(AssistantMessage(content=(ToolCall(id="c", name="t", arguments={}),))) is None
    assert (
        message_text(
            ToolResultMessage(tool_call_id="c", tool_name="t", content=(ImageContent(data="A", mime_type="m"),))
        )
        is None
    )
    assert message_text(CustomMessage(custom_type="n", content=(TextContent(text="x"),))) == "x"
    assert message_text(SystemMessage(content="s")) == "s"


def test_replace_fields_copies_without_touching_the_original() -> None:
    message = AssistantMessage(content=(), stop_reason="pending", timestamp=1)
    copy = replace_fields(message, stop_reason="stop")
    assert (message.stop_reason, copy.stop_reason, copy.timestamp) == ("pending", "stop", 1)
    assert to_json(copy)["stopReason"] == "stop"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"words": 4}, '{"words":4}'),
        ({"a": [1, 2.5, True, None], "b": "é"}, '{"a":[1,2.5,true,null],"b":"é"}'),
        (3.0, "3"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (float("nan"), "null"),
        ([], "[]"),
    ],
)
def test_js_stringify(value: object, text: str) -> None:
    assert js_stringify(value) == text


def test_js_stringify_indent_and_lengths() -> None:
    expected = '{\n  "a": {\n    "b": [\n      1\n    ]\n  },\n  "c": {}\n}'
    assert js_stringify({"a": {"b": [1]}, "c": {}}, indent=2) == expected
    assert js_length("é😀") == 3


async def test_abort_signal() -> None:
    controller = AbortController()
    signal = controller.signal
    heard: list[str] = []
    remove = signal.add_listener(lambda: heard.append("a"))
    signal.add_listener(lambda: heard.append("b"))
    remove()
    waiter = asyncio.ensure_future(signal.wait())
    await asyncio.sleep(0)
    assert not signal.aborted and not waiter.done()
    controller.abort("why")
    controller.abort("again")
    await waiter
    assert (signal.aborted, signal.reason, heard) == (True, "why", ["b"])
    signal.add_listener(lambda: heard.append("late"))
    assert heard == ["b", "late"]
    await signal  # awaitable, returns at once once aborted
    with pytest.raises(AbortError, match=r"^tool aborted$"):
        await sleep_or_abort(10, signal, "tool aborted")


async def test_sleep_or_abort_wakes_on_abort() -> None:
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.002, controller.abort)
    with pytest.raises(AbortError):
        await sleep_or_abort(5, controller.signal)
    await sleep_or_abort(0.001, None)
    await sleep_or_abort(0.001, AbortController().signal)


def test_js_stringify_escapes_strings_as_javascript_does() -> None:
    # JSON.stringify escapes ", \ and controls (\b \f \n \r \t short, others \u00xx), lone surrogates as \udxxx,
    # and writes every other character (a pair of surrogates is one) as is.
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    for code in [*range(0xD800), *range(0xE000, 0x10000), 0x1F600]:
        char = chr(code)
        expected = short.get(char) or (f"\\u{code:04x}" if code < 0x20 else char)
        assert js_stringify("a" + char) == f'"a{expected}"', hex(code)
    assert js_stringify(["\ud800", "x\udfffé", "\ud83d\ude00"]) == '["\\ud800","x\\udfffé","\U0001f600"]'
