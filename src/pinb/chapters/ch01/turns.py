"""Turns, read two ways: what a scenario's script asks for (the expected side) and what a trace shows (observed).

`script` walks a scenario's faux responses the way the chapter describes a run: a reply that calls tools is one
turn and the tool results ask for another request; a reply without tool calls ends the run, unless a queued
follow-up is waiting. It reads only the scenario (its prompts, responses, queue and tools), never pinb's loop.
`observed_turns` cuts a trace into its turn_start … turn_end windows and says what each one held.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pinb.chapters import tq
from pinb.chapters.properties import Trace


@dataclass(frozen=True)
class Turn:
    """One scripted reply: its text, its tool calls (name, arguments) and its stop reason."""

    text: str
    calls: tuple[tuple[str, str], ...]
    stop: str


def _key(name: str, args: Any) -> tuple[str, str]:
    return str(name), json.dumps(args or {}, sort_keys=True, ensure_ascii=False)


def reply(response: Mapping[str, Any]) -> Turn:
    blocks = list(response.get("content", ()))
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    calls = tuple(_key(b.get("name"), b.get("arguments")) for b in blocks if b.get("type") == "toolCall")
    return Turn(text, calls, str(response.get("stopReason", "stop")))


def prompts(scenario: Mapping[str, Any]) -> list[str]:
    prompt = scenario.get("prompt", [])
    return [prompt] if isinstance(prompt, str) else [str(p) for p in prompt]


def follow_ups(scenario: Mapping[str, Any]) -> list[str]:
    return [str(q.get("text")) for q in scenario.get("queue", ()) if q.get("do") == "follow_up"]


def script(scenario: Mapping[str, Any]) -> list[list[Turn]]:
    """The turns each prompt's run is scripted to take. A queued follow-up is taken by the first prompt's run
    (the family queues them there): after its last reply without tool calls, the follow-up asks once more."""
    responses = [reply(r) for r in scenario.get("responses", ())]
    runs: list[list[Turn]] = []
    at = 0

    def chain() -> list[Turn]:
        nonlocal at
        turns: list[Turn] = []
        while at < len(responses):
            turn = responses[at]
            at += 1
            turns.append(turn)
            if not turn.calls or turn.stop != "toolUse":
                break
        return turns

    for n, _ in enumerate(prompts(scenario)):
        turns = chain()
        for _ in follow_ups(scenario) if n == 0 else ():
            turns += chain()
        runs.append(turns)
    return runs


def words(text: str) -> int:
    """Chapter 01's tool as the book writes it: `text.split(/\\s+/).filter(Boolean).length`."""
    return len([w for w in text.split() if w])


def tool_details(scenario: Mapping[str, Any], name: str, args_json: str) -> Any:
    """What the scenario's tool `name` returns as details for these arguments (from the tool's behaviour)."""
    tool: Mapping[str, Any] = next((t for t in scenario.get("tools", ()) if t.get("name") == name), {})
    behavior = tool.get("behavior", {})
    if behavior.get("kind") == "word_count":
        return {"words": words(str(json.loads(args_json).get("text", "")))}
    if behavior.get("kind") == "return":
        return behavior.get("details", {})
    return None


# --- the trace side ---------------------------------------------------------------------------------------------


def loop_lines(trace: Trace) -> list[Mapping[str, Any]]:
    """The public listener's lines and the model's requests, in order."""
    listener = tq.listener(trace)
    source = listener[0].get("source") if listener else "agent"
    return [ln for ln in tq.core(trace) if ln.get("source") in (source, "model")]


@dataclass(frozen=True)
class SeenTurn:
    requests: int
    text: str
    asked: tuple[tuple[str, str], ...]
    ran: tuple[tuple[str, str], ...]
    """Tool executions that started and ended inside the window."""
    results: int
    """toolResult messages recorded inside the window, before its turn_end."""
    closed: bool


def observed_turns(trace: Trace) -> list[SeenTurn]:
    lines = loop_lines(trace)
    seen: list[SeenTurn] = []
    for start, end in tq.turn_windows(lines):
        inside = lines[start : (end + 1 if end >= 0 else len(lines))]
        assistant = [ln for ln in inside if ln.get("type") == "message_end" and ln.get("role") == "assistant"]
        asked = tuple(_key(c.get("name"), c.get("args")) for a in assistant for c in a.get("toolCalls") or ())
        started = {ln.get("toolCallId"): ln for ln in inside if ln.get("type") == "tool_execution_start"}
        ended = {ln.get("toolCallId") for ln in inside if ln.get("type") == "tool_execution_end"}
        ran = tuple(_key(str(ln.get("toolName")), ln.get("args")) for cid, ln in started.items() if cid in ended)
        results = sum(1 for ln in inside if ln.get("type") == "message_end" and ln.get("role") == "toolResult")
        text = "".join(str(a.get("text") or "") for a in assistant)
        seen.append(SeenTurn(len(tq.requests(inside)), text, asked, ran, results, end >= 0))
    return seen


def runs_of(trace: Trace) -> list[list[Mapping[str, Any]]]:
    """The lines of each driver prompt's run (from its `prompt` line to the next one)."""
    starts = [i for i, ln in enumerate(trace) if ln.get("source") == "driver" and ln.get("type") == "prompt"]
    bounds = [*starts, len(trace)]
    return [list(trace[a:b]) for a, b in itertools.pairwise(bounds)]


def sorted_calls(calls: Sequence[tuple[str, str]]) -> list[str]:
    """Tool calls as `name(args)`, sorted: parallel tools may end in any order."""
    return sorted(f"{name}({args})" for name, args in calls)


__all__ = [
    "SeenTurn",
    "Turn",
    "follow_ups",
    "loop_lines",
    "observed_turns",
    "prompts",
    "reply",
    "runs_of",
    "script",
    "sorted_calls",
    "tool_details",
    "words",
]
