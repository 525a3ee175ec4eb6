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


def judge_agent_end_not_the_end(traces: dict[str, Trace]) -> Finding:
    seq = settle_sequence(traces["settle-continue"])
    first_end = seq.index("agent_end") if "agent_end" in seq else -1
    after = seq[first_end + 1 :] if first_end >= 0 else []
    holds = first_end >= 0 and "request" in after and seq[-1:] == ["agent_settled"]
    return Finding(holds, f"boundaries and requests in order: {seq}")


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
