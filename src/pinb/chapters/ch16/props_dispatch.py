"""Chapter 16's dispatch rules as properties: order, unsubscribing, declared result types, awaiting, failing
`tool_call` handlers. Each ranges over every extension event a plain run dispatches, not one event."""

from __future__ import annotations

from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.ch16 import props_common as wt
from pinb.chapters.properties import Params, Premise, Property, Witness, st

# --- registration order --------------------------------------------------------------------------------------------


def order_hand(params: Params) -> dict[str, dict[str, Any]]:
    """Three extensions loaded in an order that is not alphabetical, with handlers on three events."""
    h = sc.handler
    return {
        "order": wt.plain_run(
            "ch16-handler-order",
            [
                sc.extension("zeta", h("tool_call", "a1"), h("turn_start", "a2"), h("tool_call", "a3")),
                sc.extension("alpha", h("tool_call", "b1"), h("turn_start", "b2")),
                sc.extension("mid", h("tool_call", "c1"), h("turn_end", "c2"), h("turn_start", "c3")),
            ],
        )
    }


def _distinct(orders: list[list[str]]) -> list[list[str]]:
    out: list[list[str]] = []
    for order in orders:
        if order not in out:
            out.append(order)
    return out


def _shared_premise(w: Witness) -> Premise:
    s, seen = wt.scenario(w), wt.dispatches(wt.trace(w))
    shared = wt.shared_events(s, seen)
    across = {e: exts for e, exts in shared.items() if len(exts) >= 2}
    return wt.premise(
        bool(across),
        "; ".join(f"{e}: handlers in {len(x)} extensions ({', '.join(sorted(x))})" for e, x in sorted(across.items())),
        "no dispatched event had handlers in two extensions",
    )


def order_expected(w: Witness) -> dict[str, list[str]]:
    return {e: o for e, o in wt.declared_order(wt.scenario(w)).items() if len(o) >= 2}


def order_observed(w: Witness) -> dict[str, list[list[str]]]:
    return {e: _distinct(d) for e, d in wt.dispatches(wt.trace(w)).items() if len(d[0]) >= 2 or len(d) > 1}


def order_agree(expected: dict[str, list[str]], observed: dict[str, list[list[str]]]) -> bool:
    checked = [e for e in expected if e in observed]
    return bool(checked) and all(observed[e] == [expected[e]] for e in checked)


@st.composite
def _order_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    exts = draw(wt.extension_sets(wt.RUN_EVENTS, min_extensions=2))
    parallel = draw(st.booleans())
    calls = draw(st.sampled_from([("ls",), ("ls", "pwd")]))
    return {"order": wt.plain_run("ch16-handler-order-gen", exts, commands=calls, parallel=parallel)}


REGISTRATION_ORDER = Property(
    hand=order_hand,
    premise=_shared_premise,
    expected=order_expected,
    observed=order_observed,
    family=lambda params: _order_family(),
    agree=order_agree,
)


# --- handlers are awaited ------------------------------------------------------------------------------------------


def _slow(ms: int) -> dict[str, Any]:
    return {"kind": "sleep", "ms": ms}


def awaited_hand(params: Params) -> dict[str, dict[str, Any]]:
    ms = int(params.get("handler_ms", 50))
    h = sc.handler
    return {
        "sleep": wt.plain_run(
            "ch16-slow-handler",
            [
                sc.extension(
                    "slow", h("tool_call", "slow", "sleep", ms=ms), h("turn_start", "slow-turn", "sleep", ms=ms)
                ),
                sc.extension("fast", h("tool_call", "fast"), h("turn_start", "fast-turn")),
            ],
        )
    }


def _sleepers(s: dict[str, Any] | Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for _ext, h in wt.handlers(s):
        if h["action"].get("kind") == "sleep" and h["action"].get("ms", 0) > 0:
            out.setdefault(h["event"], []).append(str(h.get("label")))
    return out


def _awaited_events(w: Witness) -> list[str]:
    """Events with a sleeping handler and another handler, that were dispatched: were the slow one not awaited, its
    line would leave the dispatch (it is written when the handler returns)."""
    s, seen = wt.scenario(w), wt.dispatches(wt.trace(w))
    order = wt.declared_order(s)
    return [e for e in _sleepers(s) if e in seen and len(order[e]) >= 2]


def awaited_premise(w: Witness) -> Premise:
    events = _awaited_events(w)
    slow = _sleepers(wt.scenario(w))
    return wt.premise(
        bool(events),
        "; ".join(f"{e}: {', '.join(slow[e])} sleeps, beside another handler" for e in events),
        "no dispatched event had a sleeping handler beside another handler",
    )


def awaited_expected(w: Witness) -> dict[str, list[str]]:
    """Each handler returns before the next starts and before the event's processing goes on: one dispatch, the
    handlers' lines in registration order with nothing else between them."""
    order = wt.declared_order(wt.scenario(w))
    return {e: order[e] for e in _awaited_events(w)}


def awaited_observed(w: Witness) -> dict[str, list[list[str]]]:
    seen = wt.dispatches(wt.trace(w))
    return {e: _distinct(seen.get(e, [])) for e in _sleepers(wt.scenario(w))}


@st.composite
def _awaited_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    event = draw(st.sampled_from(wt.RUN_EVENTS))
    exts = draw(wt.extension_sets([event], min_extensions=1))
    labels = [(i, j) for i, ext in enumerate(exts) for j, _h in enumerate(ext["handlers"])]
    i, j = draw(st.sampled_from(labels))
    exts[i]["handlers"][j]["action"] = _slow(draw(st.integers(10, 30)))
    if len(labels) == 1:
        exts.insert(draw(st.integers(0, 1)), sc.extension("other", sc.handler(event, "other1")))
    return {"sleep": wt.plain_run("ch16-slow-handler-gen", exts, parallel=draw(st.booleans()))}


HANDLERS_AWAITED = Property(
    hand=awaited_hand,
    premise=awaited_premise,
    expected=awaited_expected,
    observed=awaited_observed,
    family=lambda params: _awaited_family(),
    agree=lambda expected, observed: bool(expected) and all(observed.get(e) == [o] for e, o in expected.items()),
)


# --- declared result types ------------------------------------------------------------------------------------------

#: Results other events declare (tool_call's block, turn_end's continue, input's handled, session_before_*'s cancel,
#: context's messages, before_agent_start's systemPrompt, tool_result's patch), returned where none is declared.
FOREIGN_RESULTS: tuple[dict[str, Any], ...] = (
    {"block": True, "reason": "not declared here"},
    {"continue": True},
    {"action": "handled"},
    {"cancel": True},
    {"messages": []},
    {"systemPrompt": "Answer only 'hijacked'."},
    {"content": [{"type": "text", "text": "hijacked"}], "isError": True},
    {"action": "transform", "text": "hijacked"},
)


def declared_hand(params: Params) -> dict[str, dict[str, Any]]:
    def ret(event: str, label: str, value: dict[str, Any]) -> dict[str, Any]:
        return sc.handler(event, label, "return_value", value=value)

    returner = sc.extension(
        "returner",
        ret("turn_start", "block", {"block": True, "reason": "turn_start has no result"}),
        ret("agent_start", "continue", {"continue": True}),
        ret("tool_execution_start", "exec-block", {"block": True, "reason": "tool_execution_start has no result"}),
        ret("agent_end", "end-continue", {"continue": True}),
        ret("tool_execution_end", "exec-patch", FOREIGN_RESULTS[6]),
    )
    return {"notify-only": wt.plain_run("ch16-notify-only-results", [returner], spare_reply=True)}


def _returned(w: Witness) -> list[str]:
    return sorted(
        {
            str(ln.get("type"))
            for ln in tq.ext_lines(wt.trace(w))
            if ln.get("type") in wt.NOTIFY_ONLY_EVENTS and ln.get("result")
        }
    )


def declared_premise(w: Witness) -> Premise:
    returned = _returned(w)
    return wt.premise(
        bool(returned),
        f"handlers returned values on notification-only events: {', '.join(returned)}",
        "no handler of a notification-only event returned a value",
    )


def plain_outcome(s: Any) -> dict[str, Any]:
    """What the run does when return values have no effect, from the scenario alone: it asks the model until its
    first answer without tool calls, every bash call runs and answers the tool's output, the answer is its text."""
    n = wt.requests_until_stop(s)
    calls = [b for r in s["responses"][:n] for b in r["content"] if b.get("type") == "toolCall"]
    return {
        "requests": n,
        "tool results": [["bash", wt.TOOL_OUTPUT, False] for _ in calls],
        "answer": wt.response_texts(s)[n - 1],
    }


def run_outcome(lines: list[dict[str, Any]]) -> dict[str, Any]:
    answers = wt.replies(lines)
    return {
        "requests": len(tq.requests(lines)),
        "tool results": [list(r) for r in wt.tool_results(lines)],
        "answer": answers[-1] if answers else None,
    }


@st.composite
def _declared_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    def action(event: str) -> dict[str, Any]:
        return {"kind": "return_value", "value": draw(st.sampled_from(FOREIGN_RESULTS))}

    exts = draw(wt.extension_sets(wt.NOTIFY_ONLY_EVENTS, action=action))
    calls = draw(st.sampled_from([("ls",), ("ls", "pwd")]))
    return {"notify-only": wt.plain_run("ch16-notify-only-gen", exts, commands=calls, spare_reply=True)}


DECLARED_RESULT_TYPE = Property(
    hand=declared_hand,
    premise=declared_premise,
    expected=lambda w: plain_outcome(wt.scenario(w)),
    observed=lambda w: run_outcome(wt.trace(w)),
    family=lambda params: _declared_family(),
)


# --- unsubscribing ---------------------------------------------------------------------------------------------------

#: Events a two-turn run dispatches more than once.
REPEATED_EVENTS = ("turn_start", "tool_execution_start", "tool_call", "tool_result", "tool_execution_end", "turn_end")


def _two_steps(id_: str, event: str, before: bool, steps: int = 2, front: int = 0, middle: int = 0) -> dict[str, Any]:
    """`steps` tool-call turns; a remover that unsubscribes the target at its first call, the target loaded after
    it (or, `before`, first), `front` bystander extensions loaded before them and `middle` between them."""
    remover = sc.extension("remover", sc.handler(event, "remover", "unsubscribe", target="target"))
    observer = sc.extension("observer", sc.handler(event, "target"))

    def bystanders(where: str, n: int) -> list[dict[str, Any]]:
        return [sc.extension(f"{where}{i}", sc.handler(event, f"{where}{i}")) for i in range(n)]

    inner = [*bystanders("middle", middle)]
    pair = [observer, *inner, remover] if before else [remover, *inner, observer]
    return sc.app(
        id_,
        "Two steps.",
        [*(sc.calls(sc.call("step", {"n": n})) for n in range(1, steps + 1)), sc.text("Done.")],
        tools=[{"name": "step", "behavior": {"kind": "return", "text": "stepped"}}],
        extensions=[*bystanders("front", front), *pair],
    )


@st.composite
def _unsubscribe_family(draw: st.DrawFn, target_first: bool) -> dict[str, dict[str, Any]]:
    """Unsubscribing on any event a two-to-four-turn run repeats, with bystander extensions before and between;
    with `target_first`, the target is sometimes loaded before the remover."""
    event = draw(st.sampled_from(REPEATED_EVENTS))
    steps = draw(st.integers(2, 4))
    front, middle = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    before = draw(st.booleans()) if target_first else False
    return {"unsubscribe": _two_steps("ch16-unsubscribe-gen", event, before, steps, front, middle)}


def unsubscribe_hand(params: Params) -> dict[str, dict[str, Any]]:
    return {"unsubscribe": _two_steps("ch16-unsubscribe", "tool_execution_start", before=False)}


def _unsub_event(w: Witness) -> tuple[str | None, bool]:
    """The event the remover unsubscribes on, and whether the target dispatches after it in the same dispatch."""
    order = {h.get("label"): (e, h) for e, h in wt.handlers(wt.scenario(w))}
    remover = next((h for _e, h in wt.handlers(wt.scenario(w)) if h["action"].get("kind") == "unsubscribe"), None)
    if remover is None:
        return None, False
    target = remover["action"]["target"]
    labels = wt.declared_order(wt.scenario(w)).get(remover["event"], [])
    after = target in labels and labels.index(target) > labels.index(str(remover.get("label")))
    return (remover["event"] if target in order else None), after


def _target_runs(w: Witness) -> list[bool]:
    event, _after = _unsub_event(w)
    return ["target" in d for d in wt.dispatches(wt.trace(w)).get(event or "", [])]


def unsubscribe_premise(w: Witness, need_after: bool = False) -> Premise:
    """For the unsubscription itself, the registration must have been live (it ran at the first dispatch) for its
    absence later to mean anything; for the dispatch in progress, that first run is what is observed."""
    event, after = _unsub_event(w)
    runs = _target_runs(w)
    holds = event is not None and len(runs) >= 2 and (after if need_after else runs[0])
    return wt.premise(
        holds,
        f"{event}: the remover unsubscribes the target at its first dispatch; {len(runs)} dispatches"
        + ("; the target comes after the remover in that dispatch" if after else ""),
        "no handler unsubscribed a registration of an event dispatched twice"
        + (", later in the same dispatch" if need_after else ""),
    )


UNSUBSCRIBE = Property(
    hand=unsubscribe_hand,
    premise=unsubscribe_premise,
    expected=lambda w: {"later dispatches reach the target": False},
    observed=lambda w: {"later dispatches reach the target": any(_target_runs(w)[1:])},
    family=lambda params: _unsubscribe_family(True),
)
NOT_IN_PROGRESS = Property(
    hand=unsubscribe_hand,
    premise=lambda w: unsubscribe_premise(w, need_after=True),
    expected=lambda w: {"the dispatch in progress reaches the target": True},
    observed=lambda w: {"the dispatch in progress reaches the target": (_target_runs(w) or [False])[0]},
    family=lambda params: _unsubscribe_family(False),
)


# --- a failing tool_call handler blocks the call ------------------------------------------------------------------


def throwing_hand(params: Params) -> dict[str, dict[str, Any]]:
    faulty = sc.extension(
        "faulty",
        sc.handler("tool_call", "boom", "throw", message="tool_call handler failed"),
        sc.handler("turn_start", "noisy", "throw", message="turn_start handler failed"),
    )
    return {"throw": wt.plain_run("ch16-throwing-handlers", [faulty])}


def _throwing_calls(w: Witness) -> bool:
    return any(
        h["event"] == "tool_call" and h["action"].get("kind") == "throw" for _e, h in wt.handlers(wt.scenario(w))
    )


def throwing_premise(w: Witness) -> Premise:
    calls = tq.events(wt.trace(w), "tool_execution_start", "session")
    holds = _throwing_calls(w) and bool(calls)
    return wt.premise(
        holds, f"a tool_call handler throws; {len(calls)} tool calls", "no throwing tool_call handler saw a call"
    )


def throwing_expected(w: Witness) -> dict[str, Any]:
    s = wt.scenario(w)
    outcome = plain_outcome(s)
    return {"calls that ran their body": 0, "calls": len(outcome["tool results"]), "requests": outcome["requests"]}


def throwing_observed(w: Witness) -> dict[str, Any]:
    lines = wt.trace(w)
    results = wt.tool_results(lines)
    return {
        "calls that ran their body": sum(1 for _t, text, err in results if text == wt.TOOL_OUTPUT or not err),
        "calls": len(results),
        "requests": len(tq.requests(lines)),
    }


@st.composite
def _throwing_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    exts = draw(wt.extension_sets(["tool_call", "turn_start"]))
    i = draw(st.integers(0, len(exts) - 1))
    exts[i]["handlers"].append(sc.handler("tool_call", "boom", "throw", message=draw(st.sampled_from(["no", "bad"]))))
    calls = draw(st.sampled_from([("ls",), ("ls", "pwd"), ("a", "b", "c")]))
    return {"throw": wt.plain_run("ch16-throwing-gen", exts, commands=calls, parallel=draw(st.booleans()))}


FAILING_TOOL_CALL = Property(
    hand=throwing_hand,
    premise=throwing_premise,
    expected=throwing_expected,
    observed=throwing_observed,
    family=lambda params: _throwing_family(),
)

PROPERTIES: dict[str, Property] = {
    "dispatch.registration-order": REGISTRATION_ORDER,
    "dispatch.handlers-awaited": HANDLERS_AWAITED,
    "dispatch.declared-result-type": DECLARED_RESULT_TYPE,
    "dispatch.on-returns-unsubscribe": UNSUBSCRIBE,
    "dispatch.unsubscribe-not-in-progress": NOT_IN_PROGRESS,
    "dispatch.failing-tool-call-blocks": FAILING_TOOL_CALL,
}
