"""Scenarios and trace readings more than one chapter's properties use, by name: the four request inputs and the
settlement run.

A chapter imports what it needs from here (`common.settle`, `common.settle_sequence`); no chapter reaches into
another chapter's folder.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.properties import Params, Trace

INJECTED = "Remember: the user prefers short answers."


def four_inputs(params: Params) -> dict[str, dict[str, Any]]:
    sentence = str(params.get("injected_sentence", INJECTED))
    inject = sc.extension(
        "injector",
        sc.handler("before_agent_start", "inject", "inject_message", customType="note", content=sentence),
    )
    extra_tool = {"name": "lookup", "behavior": {"kind": "return", "text": "found"}}
    base_tools = [sc.bash_tool()]

    def variant(name: str, extensions: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return sc.app(f"ch01-inputs-{name}", "List the files.", [sc.text("Done.")], tools=tools, extensions=extensions)

    return {
        "base": variant("base", [], base_tools),
        "sentence": variant("sentence", [inject], base_tools),
        "tool": variant("tool", [], [*base_tools, extra_tool]),
        "both": variant("both", [inject], [*base_tools, extra_tool]),
    }


def first_request(trace: Trace) -> dict[str, Any]:
    requests = tq.requests(trace)
    return dict(requests[0]) if requests else {"messages": [], "tools": []}


def inputs_table(traces: dict[str, Trace]) -> dict[str, tuple[list[Any], list[str]]]:
    return {
        name: (list(first_request(t).get("messages", [])), list(first_request(t).get("tools", [])))
        for name, t in traces.items()
    }


def settle(params: Params) -> dict[str, dict[str, Any]]:
    return {"settle-continue": sc.settle_continue(entry_text=str(params.get("settle_entry", "Check the plan.")))}


def settle_sequence(trace: Trace) -> list[str]:
    kept = []
    for line in tq.core(trace):
        kind = line.get("type")
        if kind in ("agent_start", "agent_end", "agent_settled") and line.get("source") == "session":
            kept.append(str(kind))
        elif kind == "agent_before_settle" and line.get("source") == "ext" and line.get("handler") == "continue":
            kept.append("agent_before_settle" + ("+continue" if (line.get("result") or {}).get("continue") else ""))
        elif kind == "request":
            kept.append("request")
    return kept


def after_agent_end(params: Params) -> dict[str, dict[str, Any]]:
    """What can continue after agent_end: a settlement handler, an automatic retry, overflow recovery with
    compaction, and a follow-up queued at agent_end (each its own scenario)."""
    retry = sc.app(
        "after-agent-end-retry",
        "Hello.",
        [
            {"content": [], "stopReason": "error", "errorMessage": "503 Service Unavailable: overloaded"},
            sc.text("Hi, on the second attempt."),
        ],
        settings={"retry": {"base_delay_ms": 1}},
    )
    overflow = sc.app(
        "after-agent-end-overflow",
        ["First question.", "Second question."],
        [
            sc.text("First answer."),
            {
                "content": [],
                "stopReason": "error",
                "errorMessage": "prompt is too long: 213462 tokens > 200000 maximum",
            },
            sc.text("History summary."),
            sc.text("Turn prefix summary."),
            sc.text("Second answer."),
        ],
        settings={"compaction": {"keep_recent_tokens": 1}},
    )
    queued = sc.app(
        "after-agent-end-follow-up",
        "Hello.",
        [sc.text("Hi."), sc.text("Sure, one more.")],
        queue=[{"when": "agent_end#1", "do": "follow_up", "text": "One more thing."}],
    )
    return {**settle(params), "retry": retry, "overflow-recovery": overflow, "queued": queued}
