"""The trace writer, the conformance projection and the first-difference report."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pinb.ai import TextContent, ToolResultMessage, UserMessage, faux_assistant_message, faux_tool_call
from pinb.ai.transcript import MessageView
from pinb.scenario.trace import (
    Labels,
    TraceWriter,
    declared_tools,
    dumps_jsonl,
    event_fields,
    first_difference,
    loads_jsonl,
    message_summary,
    project,
    snapshot,
)

ASSISTANT_CALL = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "hm"},
        {"type": "toolCall", "id": "raw-b", "name": "bash", "arguments": {"command": "ls"}},
        {"type": "toolCall", "id": "raw-a", "name": "word_count", "arguments": {"text": "a b"}},
    ],
    "stopReason": "toolUse",
    "usage": {"input": 3},
    "timestamp": 123,
}
TOOL_RESULT = {
    "role": "toolResult",
    "toolCallId": "raw-a",
    "toolName": "word_count",
    "content": [{"type": "text", "text": "2"}],
    "details": {"words": 2},
    "isError": False,
    "timestamp": 5,
}


def test_labels_follow_first_appearance_per_kind() -> None:
    labels = Labels()
    assert [labels.call("x"), labels.call("y"), labels.call("x"), labels.entry("x")] == [
        "call#1",
        "call#2",
        "call#1",
        "entry#1",
    ]
    assert labels.call(None) is None


@pytest.mark.parametrize(
    ("message", "end", "expected"),
    [
        ({"role": "user", "content": "hi", "timestamp": 1}, False, {"role": "user", "text": "hi"}),
        ({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, True,
         {"role": "user", "text": "ab"}),
        ({"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/png"}]}, True,
         {"role": "user"}),
        ({"role": "user", "content": ""}, True, {"role": "user", "text": ""}),
        ({"role": "custom", "customType": "note", "content": "c", "display": True}, True,
         {"role": "custom", "customType": "note", "text": "c"}),
        ({"role": "assistant", "content": [], "stopReason": "pending"}, False,
         {"role": "assistant", "stopReason": "pending"}),
        ({"role": "assistant", "content": [{"type": "text", "text": "t"}], "stopReason": "error",
          "errorMessage": "boom"}, True,
         {"role": "assistant", "stopReason": "error", "text": "t", "errorMessage": "boom"}),
        (ASSISTANT_CALL, True, {"role": "assistant", "stopReason": "toolUse", "toolCalls": [
            {"id": "call#1", "name": "bash", "args": {"command": "ls"}},
            {"id": "call#2", "name": "word_count", "args": {"text": "a b"}}]}),
        (ASSISTANT_CALL, False, {"role": "assistant", "stopReason": "toolUse"}),
        (TOOL_RESULT, False, {"role": "toolResult", "toolCallId": "call#1", "toolName": "word_count",
                              "isError": False, "text": "2"}),
        ({"role": "system", "content": "secret prompt", "toolsAdded": []}, True, {"role": "system"}),
    ],
)  # fmt: skip
def test_message_summary(message: dict[str, Any], end: bool, expected: dict[str, Any]) -> None:
    summary = message_summary(message, Labels(), end=end)
    assert summary == expected
    assert list(summary) == list(expected)


@pytest.mark.parametrize(
    ("event", "ext", "expected"),
    [
        ({"type": "agent_start"}, False, {}),
        ({"type": "agent_end", "messages": [{"role": "user"}, ASSISTANT_CALL]}, False,
         {"messages": ["user", "assistant"]}),
        ({"type": "turn_start", "turnIndex": 0, "timestamp": 9}, True, {"turnIndex": 0}),
        ({"type": "turn_start"}, False, {}),
        ({"type": "turn_end", "message": ASSISTANT_CALL, "toolResults": [TOOL_RESULT]}, False,
         {"toolResults": [{"toolCallId": "call#1", "isError": False}]}),
        ({"type": "turn_end", "turnIndex": 1, "message": {}, "toolResults": [], "outcome": "completed",
          "continue": False, "entries": []}, True,
         {"turnIndex": 1, "toolResults": [], "outcome": "completed", "continue": False}),
        ({"type": "message_update", "message": ASSISTANT_CALL, "assistantMessageEvent": {}}, False,
         {"role": "assistant"}),
        ({"type": "tool_execution_start", "toolCallId": "r", "toolName": "bash", "args": {"command": "ls"}}, False,
         {"toolName": "bash", "toolCallId": "call#1", "args": {"command": "ls"}}),
        ({"type": "tool_execution_update", "toolCallId": "r", "toolName": "t", "args": {}, "partialResult": {}},
         False, {"toolName": "t", "toolCallId": "call#1"}),
        ({"type": "tool_execution_end", "toolCallId": "r", "toolName": "t", "isError": True,
          "result": {"content": [{"type": "text", "text": "no"}], "details": {}}}, False,
         {"toolName": "t", "toolCallId": "call#1", "isError": True, "text": "no", "details": {}}),
        ({"type": "tool_execution_end", "toolCallId": "r", "toolName": "bash", "isError": False,
          "result": {"content": [{"type": "text", "text": "(no output)"}]}}, False,
         {"toolName": "bash", "toolCallId": "call#1", "isError": False, "text": "(no output)"}),
        ({"type": "agent_before_settle", "outcome": "completed", "continue": False}, True,
         {"outcome": "completed", "continue": False}),
        ({"type": "agent_before_settle", "outcome": "completed"}, False, {}),
        ({"type": "agent_settled", "aborted": False}, False, {"aborted": False}),
        ({"type": "queue_update", "steering": ["s"], "followUp": []}, False, {"steering": ["s"], "followUp": []}),
        ({"type": "entry_appended", "entry": {"type": "message", "id": "e1", "parentId": None}}, False,
         {"entryType": "message", "entryId": "entry#1"}),
        ({"type": "input", "text": "hi", "source": "interactive"}, True, {"text": "hi", "inputSource": "interactive"}),
        ({"type": "before_agent_start", "messageType": "user", "prompt": "p", "systemPrompt": "secret"}, True,
         {"messageType": "user", "prompt": "p"}),
        ({"type": "context", "messages": [{"role": "user"}]}, True, {"messages": ["user"]}),
        ({"type": "tool_call", "toolCallId": "r", "toolName": "bash", "input": {"command": "x"}}, True,
         {"toolName": "bash", "toolCallId": "call#1", "input": {"command": "x"}}),
        ({"type": "tool_result", "toolCallId": "r", "toolName": "bash", "input": {}, "isError": False,
          "content": [{"type": "text", "text": "o"}], "details": {}}, True,
         {"toolName": "bash", "toolCallId": "call#1", "isError": False, "text": "o"}),
        ({"type": "session_start", "reason": "startup"}, True, {"reason": "startup"}),
        ({"type": "ui_prompt_start", "reason": "ui_prompt", "kind": "confirm", "title": "T"}, True,
         {"kind": "confirm", "title": "T"}),
        (
            {"type": "model_select", "model": {"provider": "faux", "id": "x"}, "source": "set"},
            True,
            {"model": "faux/x", "selectSource": "set"},
        ),
    ],
)  # fmt: skip
def test_event_fields(event: dict[str, Any], ext: bool, expected: dict[str, Any]) -> None:
    fields = event_fields(event, Labels(), ext=ext)
    assert fields == expected
    assert list(fields) == list(expected)


def test_writer_numbers_lines_marks_streams_and_omits_undefined() -> None:
    writer = TraceWriter()
    writer.write("meta", "scenario", {"id": "s", "layer": "agent", "backend": "standin"})
    writer.event("agent", {"type": "message_update", "message": {"role": "assistant"}})
    writer.event("agent", {"type": "message_end", "message": ASSISTANT_CALL})
    writer.event("agent", {"type": "tool_execution_start", "toolCallId": "raw-a", "toolName": "word_count"})
    assert writer.lines == [
        {"seq": 1, "source": "meta", "type": "scenario", "id": "s", "layer": "agent", "backend": "standin"},
        {"seq": 2, "source": "agent", "type": "message_update", "stream": True, "role": "assistant"},
        {"seq": 3, "source": "agent", "type": "message_end", "role": "assistant", "stopReason": "toolUse",
         "toolCalls": [{"id": "call#1", "name": "bash", "args": {"command": "ls"}},
                       {"id": "call#2", "name": "word_count", "args": {"text": "a b"}}]},
        {"seq": 4, "source": "agent", "type": "tool_execution_start", "toolName": "word_count", "toolCallId": "call#2"},
    ]  # fmt: skip
    assert list(writer.lines[1]) == ["seq", "source", "type", "stream", "role"]


def test_ext_line_shows_the_event_as_seen_on_entry_and_the_result() -> None:
    writer = TraceWriter()
    event = {"type": "tool_call", "toolCallId": "r1", "toolName": "bash", "input": {"command": "rm -rf /"}}
    seen = snapshot(event)
    event["input"]["command"] = "ls"  # the handler mutates in place; the line shows the input it was given
    line = writer.ext("guard", "g", seen, result={"block": True, "reason": "no"})
    assert line == {"seq": 1, "source": "ext", "type": "tool_call", "extension": "guard", "handler": "g",
                    "toolName": "bash", "toolCallId": "call#1", "input": {"command": "rm -rf /"},
                    "result": {"block": True, "reason": "no"}}  # fmt: skip
    assert list(line)[-1] == "result"
    quiet = writer.ext("guard", None, {"type": "agent_start"}, result=None)
    assert quiet == {"seq": 2, "source": "ext", "type": "agent_start", "extension": "guard"}
    failed = writer.ext("guard", None, {"type": "agent_start"}, error="boom")
    assert failed["error"] == "boom" and "result" not in failed


def test_ext_result_message_is_summarised() -> None:
    writer = TraceWriter()
    message = {"role": "assistant", "content": [{"type": "text", "text": "X"}], "stopReason": "stop", "usage": {}}
    line = writer.ext("e", None, {"type": "message_end", "message": message}, result={"message": message})
    assert line["result"] == {"message": {"role": "assistant", "stopReason": "stop", "text": "X"}}
    draft = {"message": {"customType": "note", "content": "c", "display": True}}
    assert writer.ext("e", None, {"type": "before_agent_start"}, result=draft)["result"] == draft


def test_model_line() -> None:
    writer = TraceWriter()
    system = {"role": "system", "content": "p", "toolsAdded": [{"name": "a"}, {"name": "b"}]}
    later = {"role": "system", "content": "", "toolsRemoved": [{"name": "a"}], "toolsAdded": [{"name": "c"}]}
    messages = [system, {"role": "user", "content": "q"}, ASSISTANT_CALL, TOOL_RESULT, later]
    writer.model_request(2, messages, None, exhausted=True)
    assert writer.lines[0] == {
        "seq": 1, "source": "model", "type": "request", "n": 2,
        "messages": [{"role": "system"}, {"role": "user", "text": "q"},
                     {"role": "assistant", "toolCalls": [{"id": "call#1", "name": "bash", "args": {"command": "ls"}},
                                                         {"id": "call#2", "name": "word_count",
                                                          "args": {"text": "a b"}}]},
                     {"role": "toolResult", "toolCallId": "call#2", "isError": False, "text": "2"},
                     {"role": "system"}],
        "tools": ["b", "c"], "exhausted": True,
    }  # fmt: skip
    assert declared_tools(messages) == ["b", "c"]


def _plain(line: dict[str, Any]) -> dict[str, Any]:
    return {**line, "messages": list(line["messages"])} if "messages" in line else line


def test_model_lines_reuse_each_frozen_messages_summary_and_serialise_like_plain_json() -> None:
    writer = TraceWriter()
    user = UserMessage(content=(TextContent(text="count a\ud83d"),), timestamp=0)
    call = faux_assistant_message([faux_tool_call("word_count", {"text": "a b"}, id="raw")], stop_reason="toolUse")
    result = ToolResultMessage(
        tool_call_id="raw", tool_name="word_count", content=(TextContent(text="2"),), is_error=False, timestamp=0
    )
    writer.write("driver", "prompt", {"text": "p"})
    writer.model_request(1, [user], ["word_count"], exhausted=False)
    writer.model_request(2, [user, call, result], None, exhausted=True)
    first, second = writer.lines[1], writer.lines[2]
    assert second["messages"][0] is first["messages"][0]
    assert second["messages"][1:] == [
        {"role": "assistant", "toolCalls": [{"id": "call#1", "name": "word_count", "args": {"text": "a b"}}]},
        {"role": "toolResult", "toolCallId": "call#1", "isError": False, "text": "2"},
    ]
    assert second["tools"] == [] and second["exhausted"] is True
    text = dumps_jsonl(writer.lines)
    assert text == dumps_jsonl([_plain(line) for line in writer.lines])
    assert '"text":"count a\\ud83d"' in text
    assert loads_jsonl(text) == [_plain(line) for line in writer.lines]


def test_model_lines_follow_a_context_that_grows_or_is_rewritten() -> None:
    writer = TraceWriter()
    history = [UserMessage(content=(TextContent(text=f"m{i}"),), timestamp=0) for i in range(4)]
    writer.model_request(1, MessageView(history, 2), [], exhausted=False)
    writer.model_request(2, MessageView(history), [], exhausted=False)
    summary = UserMessage(content=(TextContent(text="summary"),), timestamp=0)
    writer.model_request(3, [summary, history[3]], [], exhausted=False)
    writer.model_request(4, [], [], exhausted=False)
    texts = [[m["text"] for m in line["messages"]] for line in writer.lines]
    assert texts == [["m0", "m1"], ["m0", "m1", "m2", "m3"], ["summary", "m3"], []]
    assert loads_jsonl(dumps_jsonl(writer.lines)) == [_plain(line) for line in writer.lines]


def test_model_lines_summarise_plain_mappings_afresh() -> None:
    writer = TraceWriter()
    message = {"role": "user", "content": "a"}
    writer.model_request(1, [message], [], exhausted=False)
    message["content"] = "b"
    writer.model_request(2, [message], [], exhausted=False)
    assert [line["messages"] for line in writer.lines] == [
        [{"role": "user", "text": "a"}],
        [{"role": "user", "text": "b"}],
    ]
    assert loads_jsonl(dumps_jsonl(writer.lines))[1]["messages"] == [{"role": "user", "text": "b"}]


TRACE: list[dict[str, Any]] = [
    {"seq": 1, "source": "meta", "type": "scenario", "id": "x", "backend": "standin"},
    {"seq": 2, "source": "driver", "type": "prompt", "text": "p"},
    {"seq": 3, "source": "session", "type": "message_start", "role": "user", "text": "p"},
    {"seq": 4, "source": "model", "type": "request", "n": 1, "messages": [{"role": "user", "text": "p"}],
     "tools": ["bash"]},
    {"seq": 5, "source": "session", "type": "message_update", "stream": True, "role": "assistant"},
    {"seq": 6, "source": "session", "type": "message_end", "role": "assistant", "stopReason": "toolUse", "text": "t",
     "toolCalls": [{"id": "call#1", "name": "bash", "args": {"command": "ls"}}]},
    {"seq": 7, "source": "ext", "type": "tool_call", "extension": "g", "handler": "h", "toolName": "bash",
     "toolCallId": "call#1", "input": {"command": "ls"}, "result": {"block": True}},
    {"seq": 8, "source": "session", "type": "tool_execution_end", "toolName": "bash", "toolCallId": "call#1",
     "isError": True, "text": "blocked", "details": {}},
    {"seq": 9, "source": "session", "type": "message_end", "role": "toolResult", "toolCallId": "call#1",
     "toolName": "bash", "isError": True, "text": "blocked"},
    {"seq": 10, "source": "session", "type": "turn_end", "toolResults": [{"toolCallId": "call#1", "isError": True}]},
    {"seq": 11, "source": "session", "type": "agent_settled", "aborted": False},
    {"seq": 12, "source": "error", "type": "extension_error", "extension": "g", "event": "x", "error": "e"},
    {"seq": 13, "source": "driver", "type": "dispose"},
]  # fmt: skip


def test_projection_keeps_exactly_the_contracts_fields() -> None:
    assert project(TRACE) == [
        {"source": "session", "type": "message_start", "role": "user"},
        {"source": "model", "type": "request"},
        {"source": "session", "type": "message_end", "role": "assistant", "stopReason": "toolUse",
         "toolCalls": ["bash"], "text": "t"},
        {"source": "ext", "type": "tool_call", "extension": "g", "handler": "h", "toolName": "bash",
         "toolCallId": "call#1"},
        {"source": "session", "type": "tool_execution_end", "toolName": "bash", "toolCallId": "call#1",
         "isError": True},
        {"source": "session", "type": "message_end", "role": "toolResult", "toolName": "bash", "toolCallId": "call#1",
         "isError": True, "text": "blocked"},
        {"source": "session", "type": "turn_end"},
        {"source": "session", "type": "agent_settled", "aborted": False},
    ]  # fmt: skip


def test_loose_projection() -> None:
    assert project(TRACE, loose=True)[2] == {
        "source": "session",
        "type": "message_end",
        "role": "assistant",
        "stopReason": "toolUse",
    }
    assert project(TRACE, loose=True)[3] == {"source": "ext", "type": "tool_call", "toolName": "bash"}


def test_identical_traces_conform_and_volatile_lines_do_not_matter() -> None:
    other = [dict(line) for line in TRACE if not line.get("stream") and line["source"] != "driver"]
    other[0] = {**other[0], "backend": "pi@1.6.0", "node": "v22"}
    other[2] = {**other[2], "messages": [{"role": "system"}]}  # model messages are not compared
    other[5] = {**other[5], "input": {"command": "other"}, "result": {"block": False}}
    assert first_difference(TRACE, other) is None


@pytest.mark.parametrize(
    ("index", "change", "loose_differs"),
    [
        (5, {"toolCallId": "call#2"}, False),
        (9, {"aborted": True}, False),
        (5, {"text": "other"}, False),
        (5, {"stopReason": "stop"}, True),
        (7, {"isError": False}, True),
        (5, {"toolCalls": [{"id": "call#1", "name": "read", "args": {}}]}, False),
    ],
)
def test_a_compared_field_makes_a_difference(index: int, change: dict[str, Any], loose_differs: bool) -> None:
    other = [dict(line) for line in TRACE]
    other[index] = {**other[index], **change}
    diff = first_difference(TRACE, other, names=("standin", "pi@1.6.0"))
    assert diff is not None
    assert diff.left is not None and diff.left.seq == TRACE[index]["seq"]
    rendered = diff.render()
    assert rendered.startswith(f"first difference at projected line {diff.index} (standin seq {index + 1}")
    assert "- standin" in rendered and "+ pi@1.6.0" in rendered
    loose = first_difference(TRACE, other, loose=True)
    assert (loose is not None) is loose_differs


def test_a_shorter_trace_differs_at_its_end() -> None:
    diff = first_difference(TRACE, TRACE[:-3])
    assert diff is not None and diff.right is None
    assert diff.left is not None and diff.left.line["type"] == "agent_settled"
    assert "(end of trace)" in diff.render()
    assert len(diff.context) == 3


def test_jsonl_round_trip() -> None:
    text = dumps_jsonl(TRACE)
    assert text.count("\n") == len(TRACE)
    assert loads_jsonl(text) == TRACE
    assert '"seq":1,"source":"meta"' in text


def test_strict_projection_keeps_every_field_but_seq_meta_and_streams() -> None:
    strict = project(TRACE, strict=True)
    assert strict[0] == {"source": "driver", "type": "prompt", "text": "p"}
    assert all("seq" not in line and line["source"] != "meta" and not line.get("stream") for line in strict)
    assert len(strict) == len(TRACE) - 2
    other = [dict(line) for line in TRACE]
    other[3] = {**other[3], "messages": [{"role": "system"}]}
    assert first_difference(TRACE, other) is None
    diff = first_difference(TRACE, other, strict=True)
    assert diff is not None and diff.left is not None and diff.left.seq == 4
    with pytest.raises(ValueError, match="loose or strict"):
        project(TRACE, loose=True, strict=True)


def test_jsonl_escapes_lone_surrogates_like_javascript() -> None:
    text = dumps_jsonl([{"text": "a\ud83d", "ok": "\U0001f600"}])
    assert text == '{"text":"a\\ud83d","ok":"\U0001f600"}\n'
    text.encode("utf-8")
    assert loads_jsonl(text) == [{"text": "a\ud83d", "ok": "\U0001f600"}]


def test_jsonl_keeps_line_separators_inside_strings() -> None:
    lines = [{"text": "a\u2028b\u2029c\x85d"}, {"seq": 2}]
    assert loads_jsonl(dumps_jsonl(lines)) == lines


def test_the_full_projection_keeps_stream_lines_in_order_and_every_field_but_seq() -> None:
    full = project(TRACE, projection="full")
    assert len(full) == len(TRACE) - 1 and all("seq" not in line for line in full)
    assert full[3] == {"source": "session", "type": "message_update", "stream": True, "role": "assistant"}
    assert full[-2] == {"source": "error", "type": "extension_error", "extension": "g", "event": "x", "error": "e"}


@pytest.mark.parametrize(
    ("change", "strict_sees_it"),
    [
        (lambda t: t.pop(4), False),  # one stream line fewer
        (lambda t: t.insert(4, dict(t[4])), False),  # one stream line more
        (lambda t: t[4].update(role="user"), False),  # a stream line's field
        (lambda t: t.__setitem__(slice(10, 12), [t[11], t[10]]), True),  # two lines swapped
        (lambda t: t[11].update(error="other"), True),  # an error line
        (lambda t: t[1].update(text="q"), True),  # a driver line
    ],
)
def test_the_full_projection_sees_what_the_contracts_misses(change: Any, strict_sees_it: bool) -> None:
    other = copy.deepcopy(TRACE)
    change(other)
    assert first_difference(TRACE, other) is None  # the contract's projection sees none of these
    assert (first_difference(TRACE, other, projection="strict") is not None) is strict_sees_it
    assert first_difference(TRACE, other, projection="full") is not None


def test_the_full_projection_ignores_the_meta_line_seq_and_volatile_values() -> None:
    other = copy.deepcopy(TRACE)
    other[0]["backend"] = "pi@1.6.0"
    other[6]["result"] = {"block": True, "durationMs": 12}
    other[7]["text"] = "blocked"
    mine = copy.deepcopy(TRACE)
    mine[6]["result"] = {"block": True, "durationMs": 3}
    mine[11]["error"] = "e"
    for line in other:
        line["seq"] = line["seq"] + 100
    assert first_difference(mine, other, projection="full") is None
    paths = [copy.deepcopy(TRACE), copy.deepcopy(TRACE)]
    paths[0][11]["error"] = "cannot read /tmp/pinb-1a2b/project/x.md: gone"
    paths[1][11]["error"] = "cannot read /tmp/pinb-9z8y/project/x.md: gone"
    assert first_difference(*paths, projection="full") is None
    paths[1][11]["error"] = "cannot read /tmp/pinb-9z8y/project/x.md: other"
    assert first_difference(*paths, projection="full") is not None


def test_projection_names_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown projection"):
        project(TRACE, projection="everything")
    with pytest.raises(ValueError, match="contradicts"):
        project(TRACE, projection="full", loose=True)
