"""Scenario builders for the chapter experiments: plain dicts in the scenario format, one function per shape.

They live in the package (not the repository's `scenarios/` folder) so that a notebook installed with pip on
Colab has them too. Each returns a fresh dict the caller may change.
"""

from __future__ import annotations

from typing import Any

SYSTEM = "You are a coding assistant."
WORD_COUNT_TOOL: dict[str, Any] = {
    "name": "word_count",
    "description": "Count the words in a string.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "behavior": {"kind": "word_count"},
}


def text(value: str, stop: str = "stop") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "stopReason": stop}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolCall", "name": name, "arguments": arguments}


def calls(*blocks: dict[str, Any], preface: str | None = None) -> dict[str, Any]:
    content = ([{"type": "text", "text": preface}] if preface else []) + list(blocks)
    return {"content": content, "stopReason": "toolUse"}


def bash_tool(name: str = "bash", stdout: str = "done") -> dict[str, Any]:
    return {"name": name, "behavior": {"kind": "simulated_bash", "stdout": stdout}}


def sleep_tool(name: str, ms: int, result: str = "finished") -> dict[str, Any]:
    return {"name": name, "behavior": {"kind": "sleep", "ms": ms, "then": {"text": result}}}


def handler(
    event: str, label: str, kind: str = "record", *, occurrences: list[int] | None = None, **action: Any
) -> dict[str, Any]:
    """One handler; ``occurrences`` limits its action to those invocations (docs/scenario-format.md)."""
    built: dict[str, Any] = {"event": event, "label": label, "action": {"kind": kind, **action}}
    if occurrences is not None:
        built["occurrences"] = list(occurrences)
    return built


def command(name: str, kind: str = "record", **action: Any) -> dict[str, Any]:
    """An extension command (``pi.registerCommand``) whose handler performs one action."""
    return {"name": name, "action": {"kind": kind, **action}}


def extension(name: str, *handlers: dict[str, Any], commands: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    built: dict[str, Any] = {"name": name, "handlers": list(handlers)}
    if commands:
        built["commands"] = list(commands)
    return built


def word_count(layer: str = "agent", sentence: str = "the quick brown fox") -> dict[str, Any]:
    """Chapter 01's example: one word_count call, then a text answer."""
    scenario: dict[str, Any] = {
        "id": f"ch01-word-count-{layer}",
        "layer": layer,
        "system_prompt": "You count words." if layer == "agent" else SYSTEM,
        "prompt": f"How many words in '{sentence}'?",
        "tools": [WORD_COUNT_TOOL],
        "responses": [calls(call("word_count", {"text": sentence})), text("Four words.")],
    }
    return scenario


def app(id_: str, prompt: str | list[str], responses: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """An app-layer scenario with the chapters' system prompt."""
    return {"id": id_, "layer": "app", "system_prompt": SYSTEM, "prompt": prompt, "responses": responses, **fields}


def agent(id_: str, prompt: str | list[str], responses: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"id": id_, "layer": "agent", "prompt": prompt, "responses": responses, **fields}


def settle_continue(at_event: str = "agent_before_settle", entry_text: str = "Check the plan.") -> dict[str, Any]:
    """A handler on `at_event` proposes one custom_message entry and `continue: true`, once; every boundary recorded."""
    return app(
        f"ch-continue-{at_event.replace('_', '-')}",
        "Write the plan.",
        [text("Plan."), text("Plan, checked.")],
        extensions=[
            extension(
                "checker",
                handler(
                    at_event,
                    "continue",
                    "continue_once",
                    entry={"type": "custom_message", "customType": "check", "content": entry_text, "display": False},
                ),
            ),
            extension(
                "watcher",
                handler("agent_start", "w-start"),
                handler("agent_end", "w-end"),
                *([handler("agent_before_settle", "w-settle")] if at_event != "agent_before_settle" else []),
                handler("agent_settled", "w-settled"),
            ),
        ],
    )


RUN_SHAPE_EVENTS: tuple[str, ...] = (
    "input",
    "before_agent_start",
    "agent_start",
    "turn_start",
    "message_start",
    "message_end",
    "tool_call",
    "tool_result",
    "turn_end",
    "agent_end",
    "agent_before_settle",
    "agent_settled",
)


def run_shape() -> dict[str, Any]:
    """Chapter 16's sequence diagram as a scenario: one tool call, every drawn event recorded by one handler."""
    return app(
        "ch16-run-shape",
        "Count the words in 'one two three'.",
        [calls(call("word_count", {"text": "one two three"})), text("Three words.")],
        tools=[WORD_COUNT_TOOL],
        extensions=[extension("observer", *(handler(event, f"on-{event}") for event in RUN_SHAPE_EVENTS))],
    )


__all__ = [
    "RUN_SHAPE_EVENTS",
    "SYSTEM",
    "WORD_COUNT_TOOL",
    "agent",
    "app",
    "bash_tool",
    "call",
    "calls",
    "extension",
    "handler",
    "run_shape",
    "settle_continue",
    "sleep_tool",
    "text",
    "word_count",
]
