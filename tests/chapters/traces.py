"""Small hand-written traces in the trace format, for pure-function tests."""

from __future__ import annotations

from typing import Any


def _number(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"seq": i + 1, **line} for i, line in enumerate(lines)]


def word_count_trace(backend: str = "standin") -> list[dict[str, Any]]:
    """Chapter 01's example on the agent layer: a tool call, then a text answer."""
    a = "agent"
    call = [{"id": "call#1", "name": "word_count", "args": {"text": "the quick brown fox"}}]
    return _number(
        [
            {"source": "meta", "type": "scenario", "id": "ch01-word-count", "layer": "agent", "backend": backend},
            {"source": "driver", "type": "prompt", "text": "How many words in 'the quick brown fox'?"},
            {"source": a, "type": "agent_start"},
            {"source": a, "type": "turn_start"},
            {"source": a, "type": "message_start", "role": "user", "text": "How many words?"},
            {"source": a, "type": "message_end", "role": "user", "text": "How many words?"},
            {
                "source": "model",
                "type": "request",
                "n": 1,
                "messages": [{"role": "user", "text": "How many words?"}],
                "tools": ["word_count"],
            },
            {"source": a, "type": "message_start", "role": "assistant", "stopReason": "pending"},
            {"source": a, "type": "message_update", "stream": True, "role": "assistant"},
            {"source": a, "type": "message_end", "role": "assistant", "stopReason": "toolUse", "toolCalls": call},
            {
                "source": a,
                "type": "tool_execution_start",
                "toolName": "word_count",
                "toolCallId": "call#1",
                "args": {"text": "the quick brown fox"},
            },
            {
                "source": a,
                "type": "tool_execution_end",
                "toolName": "word_count",
                "toolCallId": "call#1",
                "isError": False,
                "text": "4",
                "details": {"words": 4},
            },
            {
                "source": a,
                "type": "message_start",
                "role": "toolResult",
                "toolCallId": "call#1",
                "toolName": "word_count",
                "isError": False,
                "text": "4",
            },
            {
                "source": a,
                "type": "message_end",
                "role": "toolResult",
                "toolCallId": "call#1",
                "toolName": "word_count",
                "isError": False,
                "text": "4",
            },
            {"source": a, "type": "turn_end", "toolResults": [{"toolCallId": "call#1", "isError": False}]},
            {"source": a, "type": "turn_start"},
            {
                "source": "model",
                "type": "request",
                "n": 2,
                "messages": [
                    {"role": "user", "text": "How many words?"},
                    {"role": "assistant", "toolCalls": call},
                    {"role": "toolResult", "toolCallId": "call#1", "isError": False, "text": "4"},
                ],
                "tools": ["word_count"],
            },
            {"source": a, "type": "message_start", "role": "assistant", "stopReason": "pending"},
            {"source": a, "type": "message_end", "role": "assistant", "stopReason": "stop", "text": "Four words."},
            {"source": a, "type": "turn_end", "toolResults": []},
            {"source": a, "type": "agent_end", "messages": ["user", "assistant", "toolResult", "assistant"]},
            {"source": "driver", "type": "prompt_resolved"},
        ]
    )


def parallel_tools_trace(parallel: bool = True) -> list[dict[str, Any]]:
    """Two tool calls in one turn: both start before either ends when parallel, one after the other otherwise."""
    a = "agent"

    def start(n: int) -> dict[str, Any]:
        return {"source": a, "type": "tool_execution_start", "toolName": "sleep", "toolCallId": f"call#{n}"}

    def end(n: int) -> dict[str, Any]:
        return {
            "source": a,
            "type": "tool_execution_end",
            "toolName": "sleep",
            "toolCallId": f"call#{n}",
            "isError": False,
            "text": "done",
        }

    tools = [start(1), start(2), end(2), end(1)] if parallel else [start(1), end(1), start(2), end(2)]
    return _number(
        [
            {"source": a, "type": "agent_start"},
            {"source": a, "type": "turn_start"},
            {
                "source": "model",
                "type": "request",
                "n": 1,
                "messages": [{"role": "user", "text": "go"}],
                "tools": ["sleep"],
            },
            {
                "source": a,
                "type": "message_end",
                "role": "assistant",
                "stopReason": "toolUse",
                "toolCalls": [
                    {"id": "call#1", "name": "sleep", "args": {}},
                    {"id": "call#2", "name": "sleep", "args": {}},
                ],
            },
            *tools,
            {
                "source": a,
                "type": "turn_end",
                "toolResults": [{"toolCallId": "call#1", "isError": False}, {"toolCallId": "call#2", "isError": False}],
            },
            {"source": a, "type": "agent_end", "messages": ["user", "assistant", "toolResult", "toolResult"]},
        ]
    )


def guard_trace() -> list[dict[str, Any]]:
    """Chapter 16's guard on the app layer, as scenario-format.md shows it for real Pi 1.6.0 (shortened)."""
    s = "session"
    call = [{"id": "call#1", "name": "bash", "args": {"command": "git push --force origin main"}}]
    reason = "Guard blocked: \\bgit\\s+push\\b[^\\n]*(--force(?:-with-lease)?|-f)\\b"
    return _number(
        [
            {
                "source": "meta",
                "type": "scenario",
                "id": "ch16-guard-force-push",
                "layer": "app",
                "backend": "pi@1.6.0",
            },
            {"source": "driver", "type": "prompt", "text": "Push my branch."},
            {"source": s, "type": "agent_start"},
            {"source": s, "type": "turn_start"},
            {"source": s, "type": "message_start", "role": "system"},
            {"source": s, "type": "message_end", "role": "system"},
            {"source": s, "type": "message_start", "role": "user", "text": "Push my branch."},
            {"source": s, "type": "message_end", "role": "user", "text": "Push my branch."},
            {
                "source": "model",
                "type": "request",
                "n": 1,
                "messages": [{"role": "system"}, {"role": "user", "text": "Push my branch."}],
                "tools": ["bash"],
            },
            {"source": s, "type": "message_start", "role": "assistant", "stopReason": "pending"},
            {"source": s, "type": "message_end", "role": "assistant", "stopReason": "toolUse", "toolCalls": call},
            {
                "source": s,
                "type": "tool_execution_start",
                "toolName": "bash",
                "toolCallId": "call#1",
                "args": {"command": "git push --force origin main"},
            },
            {
                "source": "ext",
                "type": "tool_call",
                "extension": "review-guard",
                "handler": "guard",
                "toolName": "bash",
                "toolCallId": "call#1",
                "input": {"command": "git push --force origin main"},
                "result": {"block": True, "reason": reason},
            },
            {
                "source": s,
                "type": "tool_execution_end",
                "toolName": "bash",
                "toolCallId": "call#1",
                "isError": True,
                "text": reason,
                "details": {},
            },
            {
                "source": s,
                "type": "message_start",
                "role": "toolResult",
                "toolCallId": "call#1",
                "toolName": "bash",
                "isError": True,
                "text": reason,
            },
            {
                "source": s,
                "type": "message_end",
                "role": "toolResult",
                "toolCallId": "call#1",
                "toolName": "bash",
                "isError": True,
                "text": reason,
            },
            {"source": s, "type": "turn_end", "toolResults": [{"toolCallId": "call#1", "isError": True}]},
            {"source": s, "type": "turn_start"},
            {
                "source": "model",
                "type": "request",
                "n": 2,
                "messages": [
                    {"role": "system"},
                    {"role": "user", "text": "Push my branch."},
                    {"role": "assistant", "toolCalls": call},
                    {"role": "toolResult", "toolCallId": "call#1", "isError": True, "text": reason},
                ],
                "tools": ["bash"],
            },
            {"source": s, "type": "message_start", "role": "assistant", "stopReason": "pending"},
            {
                "source": s,
                "type": "message_end",
                "role": "assistant",
                "stopReason": "stop",
                "text": "The push was blocked.",
            },
            {"source": s, "type": "turn_end", "toolResults": []},
            {"source": s, "type": "agent_end", "messages": ["system", "user", "assistant", "toolResult", "assistant"]},
            {"source": s, "type": "agent_settled", "aborted": False},
            {"source": "driver", "type": "prompt_resolved"},
            {"source": "driver", "type": "dispose"},
        ]
    )


def session_entries() -> tuple[list[dict[str, Any]], str]:
    """A session tree with an edited branch and a compaction on the active branch; returns (entries, leaf id)."""

    def msg(i: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
        return {
            "type": "message",
            "id": i,
            "parentId": parent,
            "message": {"role": role, "content": [{"type": "text", "text": text}]},
        }

    entries = [
        {"type": "session", "version": 3, "id": "s"},
        msg("a", None, "user", "first question"),
        msg("b", "a", "assistant", "first answer"),
        msg("c", "b", "user", "second question"),
        msg("c2", "b", "user", "second question, edited"),
        msg("d", "c2", "assistant", "answer to the edit"),
        {"type": "compaction", "id": "k", "parentId": "d", "summary": "they asked twice", "firstKeptEntryId": "c2"},
        msg("e", "k", "user", "third question"),
    ]
    return entries, "e"
