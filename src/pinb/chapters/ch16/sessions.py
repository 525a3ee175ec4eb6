"""The hand-written scenarios of chapter 16's claims about declared result types, repeated continuation, project
trust, shutdown, the prompt replacement by before_agent_start and session_before_compact (pinb's application-layer
fields), so they run on the stand-in and on real Pi; their properties are in `props_events` and `props_settle`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.properties import Params, Trace

PROJECT_PROMPT = "PROJECT SYSTEM PROMPT: review before you write."
OWN_SUMMARY = "The user asked four questions; the last one is still open."
WORDS = " word" * 40


def _ext(trace: Trace, type_: str) -> list[dict[str, Any]]:
    return [dict(line) for line in tq.ext_lines(trace, type_)]


def _driver(trace: Trace, type_: str) -> list[dict[str, Any]]:
    return [dict(line) for line in trace if line.get("source") == "driver" and line.get("type") == type_]


def _history(request: Mapping[str, Any]) -> list[str]:
    return [f"{m.get('role')}:{m.get('text', '')}" for m in request.get("messages", ()) if m.get("role") != "system"]


# --- settlement: an unconditional continuation -----------------------------------------------------------------------


def looping(params: Params) -> dict[str, dict[str, Any]]:
    cap = int(params.get("loop_limit", 6))
    entry = {"type": "custom_message", "customType": "again", "content": "Once more.", "display": False}
    handler = sc.handler("agent_before_settle", "again", "continue_times", times=cap, entry=entry)
    looper = sc.extension("looper", handler)
    scenario = sc.app("ch16-unconditional-loop", "go", [sc.text(f"reply {n}") for n in range(cap + 2)])
    return {"loop": {**scenario, "extensions": [looper]}}


# --- events: project_trust -----------------------------------------------------------------------------------------


def trust(params: Params) -> dict[str, dict[str, Any]]:
    def deciding(name: str, answer: str) -> dict[str, Any]:
        return sc.extension(name, sc.handler("project_trust", name, "trust", trusted=answer))

    scenario = sc.app(
        "ch16-project-trust",
        "Hello.",
        [sc.text("Hi.")],
        project={"files": {".pi/SYSTEM.md": PROJECT_PROMPT}, "trust": "ask"},
        extensions=[deciding("undecided", "undecided"), deciding("yes", "yes"), deciding("no", "no")],
        observe={"requests": True},
    )
    del scenario["system_prompt"]  # the project's SYSTEM.md is the prompt when the project is trusted
    return {"trust": scenario}


# --- events: session_shutdown --------------------------------------------------------------------------------------


def shutdown(params: Params) -> dict[str, dict[str, Any]]:
    releaser = sc.extension("releaser", sc.handler("session_shutdown", "release"))
    scenario = sc.app("ch16-session-shutdown", "Hello.", [sc.text("Hi.")], steps=[{"do": "shutdown"}])
    return {"shutdown": {**scenario, "extensions": [releaser]}}


#: The reason the shutdown step passes, as Pi's AgentSessionRuntime.dispose does on exit: an input of the scenario
#: (the runner emits the event with it), so its arrival shows the event reached the handler, not that Pi chose it.


# --- events: before_agent_start replaces the prompt ------------------------------------------------------------------


def replaced(params: Params) -> dict[str, dict[str, Any]]:
    replacement = str(params.get("replacement_prompt", "You answer in haiku."))
    replacer = sc.extension(
        "replacer", sc.handler("before_agent_start", "replace", "return_value", value={"systemPrompt": replacement})
    )
    observe = {"observe": {"requests": True}}
    return {
        "replaced": {
            **sc.app("ch16-before-agent-start-replace", "hello", [sc.text("ok")], **observe),
            "extensions": [replacer],
        },
        "plain": sc.app("ch16-before-agent-start-plain", "hello", [sc.text("ok")], **observe),
    }


# --- events: session_before_compact ---------------------------------------------------------------------------------


def before_compact(params: Params) -> dict[str, dict[str, Any]]:
    def compacting(id_: str, action: dict[str, Any]) -> dict[str, Any]:
        handler = {"event": "session_before_compact", "label": "before", "action": action}
        return sc.app(
            id_,
            [f"question {n}{WORDS}" for n in range(4)],
            [sc.text(f"answer {n}{WORDS}") for n in range(4)] + [sc.text("next answer")],
            settings={"compaction": {"keep_recent_tokens": 60}},
            extensions=[sc.extension("compactor", handler)],
            steps=[{"do": "compact"}, {"do": "prompt", "text": "question 4"}, {"do": "snapshot"}],
        )

    return {
        "cancel": compacting("ch16-before-compact-cancel", {"kind": "cancel_compaction"}),
        "supply": compacting("ch16-before-compact-supply", {"kind": "supply_summary", "summary": OWN_SUMMARY}),
    }


def _compaction(trace: Trace) -> dict[str, Any]:
    seen = next(iter(_ext(trace, "session_before_compact")), {})
    rejected = [line.get("error") for line in _driver(trace, "step_rejected")]
    snapshot = next(iter(line for line in trace if line.get("source") == "tree"), {})
    compactions = [e for e in snapshot.get("entries", ()) if e.get("type") == "compaction"]
    requests = tq.requests(trace)
    return {
        "seen": seen,
        "rejected": rejected,
        "compactions": compactions,
        "next": _history(requests[-1]) if requests else [],
    }
