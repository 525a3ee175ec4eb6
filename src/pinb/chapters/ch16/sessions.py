"""Chapter 16's claims about declared result types, repeated continuation, project trust, shutdown, the prompt
replacement by before_agent_start and session_before_compact, as scenarios (pinb's application-layer fields), so they
run on the stand-in and on real Pi.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.experiments import Finding, Params, Trace

PROJECT_PROMPT = "PROJECT SYSTEM PROMPT: review before you write."
OWN_SUMMARY = "The user asked four questions; the last one is still open."
WORDS = " word" * 40


def _ext(trace: Trace, type_: str) -> list[dict[str, Any]]:
    return [dict(line) for line in tq.ext_lines(trace, type_)]


def _driver(trace: Trace, type_: str) -> list[dict[str, Any]]:
    return [dict(line) for line in trace if line.get("source") == "driver" and line.get("type") == type_]


def _history(request: dict[str, Any]) -> list[str]:
    return [f"{m.get('role')}:{m.get('text', '')}" for m in request.get("messages", ()) if m.get("role") != "system"]


# --- settlement: an unconditional continuation -----------------------------------------------------------------------


def looping(params: Params) -> dict[str, dict[str, Any]]:
    cap = int(params.get("loop_limit", 6))
    entry = {"type": "custom_message", "customType": "again", "content": "Once more.", "display": False}
    handler = sc.handler("agent_before_settle", "again", "continue_times", times=cap, entry=entry)
    looper = sc.extension("looper", handler)
    scenario = sc.app("ch16-unconditional-loop", "go", [sc.text(f"reply {n}") for n in range(cap + 2)])
    return {"loop": {**scenario, "extensions": [looper]}}


def judge_unconditional_loop(traces: dict[str, Trace], params: Params) -> Finding:
    cap = int(params.get("loop_limit", 6))
    trace = traces["loop"]
    asked = len(_ext(trace, "agent_before_settle"))
    continued = sum(1 for line in _ext(trace, "agent_before_settle") if (line.get("result") or {}).get("continue"))
    requests = len(tq.requests(trace))
    holds = continued == cap and asked == cap + 1 and requests == cap + 1
    return Finding(
        holds,
        f"a handler that appends an entry and answers continue: true was asked {asked} times and continued "
        f"{continued} times; the run made {requests} requests: only the handler's own count ({cap}) ended it",
    )


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


def judge_project_trust(traces: dict[str, Trace]) -> Finding:
    trace = traces["trust"]
    asked = [(line.get("handler"), (line.get("result") or {}).get("trusted")) for line in _ext(trace, "project_trust")]
    prompt = next((str(line.get("systemPrompt", "")) for line in trace if line.get("source") == "request"), "")
    trusted = prompt.startswith(PROJECT_PROMPT)
    holds = asked == [("undecided", "undecided"), ("yes", "yes")] and trusted
    return Finding(
        holds,
        f"project_trust handlers asked, in order, with their answers: {asked}; the project's SYSTEM.md in effect "
        f"(the project was trusted): {trusted}",
    )


# --- events: session_shutdown --------------------------------------------------------------------------------------


def shutdown(params: Params) -> dict[str, dict[str, Any]]:
    releaser = sc.extension("releaser", sc.handler("session_shutdown", "release"))
    scenario = sc.app("ch16-session-shutdown", "Hello.", [sc.text("Hi.")], steps=[{"do": "shutdown"}])
    return {"shutdown": {**scenario, "extensions": [releaser]}}


#: The reason the shutdown step passes, as Pi's AgentSessionRuntime.dispose does on exit: an input of the scenario
#: (the runner emits the event with it), so its arrival shows the event reached the handler, not that Pi chose it.
SHUTDOWN_REASON_INPUT = "quit"


def judge_session_shutdown(traces: dict[str, Trace]) -> Finding:
    reasons = [line.get("reason") for line in _ext(traces["shutdown"], "session_shutdown")]
    return Finding(
        reasons == [SHUTDOWN_REASON_INPUT],
        f"on exit, session_shutdown reached the handler {len(reasons)} time(s), with reasons {reasons}; the reason "
        f"{SHUTDOWN_REASON_INPUT!r} is the input the shutdown step passes (as AgentSessionRuntime.dispose does), "
        "not an observation of Pi",
    )


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


def judge_before_agent_start_replace(traces: dict[str, Trace], params: Params) -> Finding:
    replacement = str(params.get("replacement_prompt", "You answer in haiku."))

    def received(trace: Trace) -> list[str]:
        return [str(line.get("systemPrompt", "")) for line in trace if line.get("source") == "request"]

    got, base = received(traces["replaced"]), received(traces["plain"])
    holds = got == [replacement] and bool(base) and base != [replacement] and bool(base[0])
    return Finding(
        holds,
        f"with the handler the model received the system prompt {got[0] if got else None!r}; without it, a prompt "
        f"of {len(base[0]) if base else 0} characters starting {base[0][:40] if base else ''!r}",
    )


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


def judge_before_compact(traces: dict[str, Trace]) -> Finding:
    cancel, supply = _compaction(traces["cancel"]), _compaction(traces["supply"])
    seen = cancel["seen"]
    carried = seen.get("reason") == "manual" and seen.get("willRetry") is False
    carried = carried and (seen.get("messagesToSummarize") or 0) > 0 and "firstKeptEntryId" in seen
    cancelled = bool(cancel["rejected"]) and not cancel["compactions"]
    cancelled = cancelled and any(m.startswith("user:question 0") for m in cancel["next"])
    entry = supply["compactions"][-1] if supply["compactions"] else {}
    head = supply["next"][0] if supply["next"] else ""
    supplied = entry.get("summary") == OWN_SUMMARY and entry.get("firstKeptEntryId") == supply["seen"].get(
        "firstKeptEntryId"
    )
    supplied = supplied and OWN_SUMMARY in head and not any(m.startswith("user:question 0") for m in supply["next"])
    return Finding(
        carried and cancelled and supplied,
        f"the event carried reason {seen.get('reason')!r}, willRetry {seen.get('willRetry')}, a preparation of "
        f"{seen.get('messagesToSummarize')} messages to summarise (first kept {seen.get('firstKeptEntryId')}); "
        f"{{cancel: true}} → compact() rejected with {cancel['rejected']}, compaction entries "
        f"{len(cancel['compactions'])}, the next request still starts with the first question: "
        f"{any(m.startswith('user:question 0') for m in cancel['next'])}; own summary → compaction entry "
        f"{entry.get('summary')!r}, next request starts {head[:60] + '…' if len(head) > 60 else head!r}",
    )
