"""Experiments and judges more than one chapter uses, by name: the four request inputs and the settlement run.

A chapter imports what it needs from here (`common.settle`, `common.judge_settled_final`); no chapter reaches into
another chapter's folder.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.experiments import Finding, Params, Trace

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


def judge_branch_injection(traces: dict[str, Trace], params: Params) -> Finding:
    sentence = str(params.get("injected_sentence", INJECTED))
    table = inputs_table(traces)
    (base_m, base_t), (sent_m, sent_t) = table["base"], table["sentence"]
    added = [m for m in sent_m if m not in base_m]
    holds = len(sent_m) == len(base_m) + 1 and any(sentence in str(m.get("text", "")) for m in added)
    holds = holds and sent_t == base_t
    return Finding(
        holds,
        f"with the injecting handler request #1 has {len(sent_m)} messages (without: {len(base_m)}), added "
        f"{[(m.get('role'), m.get('text')) for m in added]}; tools {sent_t} vs {base_t}",
    )


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


def continued_after_agent_end(trace: Trace) -> tuple[bool, str]:
    """In the last prompt's run: model work after its first agent_end, and agent_settled once, at the end."""
    starts = [i for i, ln in enumerate(trace) if ln.get("source") == "driver" and ln.get("type") == "prompt"]
    run = trace[starts[-1] :] if starts else trace
    kinds = [
        str(ln.get("type"))
        for ln in run
        if (
            ln.get("source") == "session"
            and ln.get("type") in ("agent_end", "agent_settled", "auto_retry_start", "compaction_start")
        )
        or (ln.get("source") == "model" and ln.get("type") == "request")
    ]
    first_end = kinds.index("agent_end") if "agent_end" in kinds else -1
    holds = first_end >= 0 and "request" in kinds[first_end:] and kinds.count("agent_settled") == 1
    holds = holds and kinds[-1:] == ["agent_settled"]
    return holds, " → ".join(kinds)


def judge_agent_end_not_the_end(traces: dict[str, Trace]) -> Finding:
    seen = {name: continued_after_agent_end(trace) for name, trace in traces.items()}
    holds = bool(seen) and all(ok for ok, _ in seen.values())
    return Finding(holds, "; ".join(f"{name}: {order}" for name, (_, order) in seen.items()))


def judge_before_settle_actionable(traces: dict[str, Trace], params: Params) -> Finding:
    trace = traces["settle-continue"]
    requests = tq.requests(trace)
    entry_seen = len(requests) >= 2 and tq.mentions(requests[1], str(params.get("settle_entry", "Check the plan.")))
    seq = settle_sequence(trace)
    holds = "agent_before_settle+continue" in seq and entry_seen and len(requests) == 2
    return Finding(
        holds,
        f"{len(requests)} requests; the proposed entry reached request #2: {entry_seen}; sequence {seq}",
    )


def judge_settled_final(traces: dict[str, Trace]) -> Finding:
    lines = tq.core(traces["settle-continue"])
    settled = tq.indexes(lines, tq.is_("agent_settled", "session"))
    if len(settled) != 1:
        return Finding(False, f"{len(settled)} agent_settled events")
    after = [f"{ln.get('source')}:{ln.get('type')}" for ln in lines[settled[0] + 1 :]]
    holds = all(item == "ext:agent_settled" for item in after)
    return Finding(holds, f"one agent_settled; after it: {after or 'nothing'}")
