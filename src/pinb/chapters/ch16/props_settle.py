"""Chapter 16's boundaries and settlement as properties: continuation at turn_end and agent_before_settle, its
exhaustion, agent_settled, and the work that follows agent_end.

What a witness should do is worked out from its own scenario: which invocations of a boundary handler answer
`continue: true` (its action), how many replies the model has scripted, which of them end a turn without tool calls.
The family ranges over both boundaries, 1–3 continuations, runs with and without a tool-call turn, and entries of
any text.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import common, tq
from pinb.chapters import scenarios as sc
from pinb.chapters.ch16 import experiments as ex
from pinb.chapters.ch16 import props_common as wt
from pinb.chapters.ch16 import sessions
from pinb.chapters.properties import Params, Premise, Property, Witness, st

BOUNDARIES = ("turn_end", "agent_before_settle")
ENTRY_TEXTS = ("Check the plan.", "Add the risks.", "Once more, with tests.", "Prüfe die Annahmen.", "再確認して")


def _continuer(s: Any) -> tuple[str, dict[str, Any]] | None:
    """The boundary handler that continues: (event, action)."""
    return next(
        (
            (h["event"], h["action"])
            for _e, h in wt.handlers(s)
            if h["event"] in BOUNDARIES and h["action"].get("kind") in ("continue_once", "continue_times")
        ),
        None,
    )


def _continues_on(action: dict[str, Any], invocation: int) -> bool:
    if action["kind"] == "continue_once":
        return invocation == action.get("at", 1)
    return invocation <= action["times"]


def plan(s: Any) -> dict[str, Any]:
    """The run the chapter's two boundaries make of this scenario: requests, which of them carry the proposed
    entry, the continuing handler's answers, low-level runs and settlements."""
    found = _continuer(s)
    responses = s["responses"]
    none_continues: tuple[str, dict[str, Any]] = ("", {"kind": "continue_times", "times": 0})
    event, action = found if found is not None else none_continues
    entry = (action.get("entry") or {}).get("content")
    requests, answers, entry_from = 0, [], None
    turn_invocations = settle_invocations = 0
    runs = 1
    while requests < len(responses):
        requests += 1
        tool_turn = responses[requests - 1].get("stopReason") == "toolUse"
        if event == "turn_end":
            turn_invocations += 1
            go = _continues_on(action, turn_invocations)
            answers.append(go)
            if go and entry_from is None:
                entry_from = requests + 1
            if tool_turn or go:
                continue
        elif tool_turn:
            continue
        if event == "agent_before_settle":
            settle_invocations += 1
            go = _continues_on(action, settle_invocations)
            answers.append(go)
            if go:
                entry_from = entry_from or requests + 1
                runs += 1
                continue
        break
    return {
        "requests": requests,
        "entry in request": [entry_from is not None and n >= entry_from for n in range(1, requests + 1)]
        if entry
        else [],
        "continue answers": answers,
        "agent_end": runs,
        "agent_settled": 1,
    }


def observed_plan(lines: list[dict[str, Any]], s: Any) -> dict[str, Any]:
    found = _continuer(s)
    entry = ((found[1].get("entry") or {}).get("content") if found else None) or ""
    label = next(
        (
            str(h.get("label"))
            for _e, h in wt.handlers(s)
            if found and h["event"] == found[0] and h["action"] is found[1]
        ),
        "",
    )
    answers = [
        bool((ln.get("result") or {}).get("continue"))
        for ln in tq.ext_lines(lines, found[0] if found else "")
        if ln.get("handler") == label
    ]
    return {
        "requests": len(tq.requests(lines)),
        "entry in request": [tq.mentions(r, entry) for r in tq.requests(lines)] if entry else [],
        "continue answers": answers,
        "agent_end": len(tq.events(lines, "agent_end", "session")),
        "agent_settled": len(tq.events(lines, "agent_settled", "session")),
    }


def settles_last(lines: list[dict[str, Any]]) -> bool:
    """agent_settled comes after the last model request, and nothing but its own handlers follows it."""
    core = tq.core(lines)
    settled = tq.indexes(core, tq.is_("agent_settled", "session"))
    last_request = max(tq.indexes(core, tq.is_("request")), default=-1)
    if len(settled) != 1:
        return False
    rest = core[settled[0] + 1 :]
    return settled[0] > last_request and all(ln.get("type") == "agent_settled" for ln in rest)


def boundary_scenario(event: str, times: int, entry: str, tool_turn: bool, once: bool = False) -> dict[str, Any]:
    action: dict[str, Any] = {
        "entry": {"type": "custom_message", "customType": "check", "content": entry, "display": False}
    }
    action.update({"kind": "continue_once"} if once else {"kind": "continue_times", "times": times})
    responses = [sc.calls(sc.call("bash", {"command": "ls"}))] if tool_turn else []
    responses += [sc.text(f"Plan, take {n + 1}.") for n in range(times + 2)]
    return sc.app(
        f"ch16-continue-{event.replace('_', '-')}-gen",
        "Write the plan.",
        responses,
        tools=[sc.bash_tool()],
        extensions=[
            sc.extension("checker", {"event": event, "label": "continue", "action": action}),
            sc.extension("watcher", sc.handler("agent_end", "w-end"), sc.handler("agent_settled", "w-settled")),
        ],
    )


def boundary_family(events: tuple[str, ...], name: str = "settle-continue") -> Any:
    return st.builds(
        lambda e, k, text, tool, once: {name: boundary_scenario(e, k, text, tool, once)},
        st.sampled_from(events),
        st.integers(1, 3),
        st.sampled_from(ENTRY_TEXTS),
        st.booleans(),
        st.sampled_from([False, False, True]),
    )


def _continuing(w: Witness, events: tuple[str, ...] = BOUNDARIES) -> Premise:
    names = [
        f"{name}: {found[0]} answers continue: true"
        for name, s in w.scenarios.items()
        if (found := _continuer(s)) is not None and found[0] in events and any(plan(s)["continue answers"])
    ]
    return wt.premise(
        bool(names), "; ".join(names), f"no {' or '.join(events)} handler that answers continue: true when it is asked"
    )


def _plans(w: Witness, events: tuple[str, ...], keys: tuple[str, ...]) -> dict[str, Any]:
    return {
        name: {k: v for k, v in plan(s).items() if k in keys}
        for name, s in w.scenarios.items()
        if (found := _continuer(s)) is not None and found[0] in events
    }


def _seen(w: Witness, events: tuple[str, ...], keys: tuple[str, ...]) -> dict[str, Any]:
    return {
        name: {k: v for k, v in observed_plan(list(w.traces.get(name, [])), s).items() if k in keys}
        for name, s in w.scenarios.items()
        if (found := _continuer(s)) is not None and found[0] in events
    }


def boundary_property(hand: Any, events: tuple[str, ...], keys: tuple[str, ...], family: Any = None) -> Property:
    return Property(
        hand=hand,
        premise=lambda w: _continuing(w, events),
        expected=lambda w: _plans(w, events, keys),
        observed=lambda w: _seen(w, events, keys),
        family=family or (lambda params: boundary_family(events)),
    )


ACTIONABLE = ("requests", "entry in request")


def _both(params: Params) -> Any:
    return st.tuples(boundary_family(("turn_end",), "turn-end"), boundary_family(("agent_before_settle",))).map(
        lambda pair: {**pair[0], **pair[1]}
    )


# --- agent_settled ----------------------------------------------------------------------------------------------------


def settled_expected(w: Witness) -> dict[str, Any]:
    return {name: {"agent_settled": 1, "settles last": True} for name in w.scenarios}


def settled_observed(w: Witness) -> dict[str, Any]:
    return {
        name: {
            "agent_settled": len(tq.events(list(w.traces.get(name, [])), "agent_settled", "session")),
            "settles last": settles_last(list(w.traces.get(name, []))),
        }
        for name in w.scenarios
    }


def _late_entry(s: Any) -> str | None:
    return next(
        (
            (h["action"].get("entry") or {}).get("content")
            for _e, h in wt.handlers(s)
            if h["event"] == "agent_settled" and h["action"].get("kind") == "continue_once"
        ),
        None,
    )


def _late_scenario(times: int, entry: str, late: str, tool: bool) -> dict[str, Any]:
    s = boundary_scenario("agent_before_settle", times, entry, tool)
    act = sc.handler(
        "agent_settled",
        "act",
        "continue_once",
        entry={"type": "custom_message", "customType": "late", "content": late, "display": False},
    )
    s["extensions"].append(sc.extension("latecomer", act))
    return {"settle-continue": s}


SETTLED_NOTIFICATION_ONLY = Property(
    hand=ex._settled_acts,
    premise=lambda w: wt.premise(
        any(_late_entry(s) for s in w.scenarios.values())
        and any(ln.get("handler") == "act" for t in w.traces.values() for ln in tq.ext_lines(t, "agent_settled")),
        "a handler answers continue: true with an entry at agent_settled",
        "no agent_settled handler tried to continue",
    ),
    expected=lambda w: {
        name: {**plan(s), "late entry in a request": False, "settles last": True}
        for name, s in w.scenarios.items()
        if _late_entry(s)
    },
    observed=lambda w: {
        name: {
            **observed_plan(list(w.traces.get(name, [])), s),
            "late entry in a request": any(
                tq.mentions(r, _late_entry(s) or "") for r in tq.requests(w.traces.get(name, []))
            ),
            "settles last": settles_last(list(w.traces.get(name, []))),
        }
        for name, s in w.scenarios.items()
        if _late_entry(s)
    },
    family=lambda params: st.builds(
        _late_scenario,
        st.integers(1, 2),
        st.sampled_from(ENTRY_TEXTS),
        st.sampled_from(("Too late.", "Zu spät.", "Continue anyway.")),
        st.booleans(),
    ),
)

# --- an unconditional continuation loops ---------------------------------------------------------------------------


UNCONDITIONAL_CAN_LOOP = boundary_property(
    sessions.looping,
    ("agent_before_settle",),
    ("requests", "continue answers", "agent_end"),
    lambda params: st.builds(
        lambda k, text, tool: {"loop": boundary_scenario("agent_before_settle", k, text, tool)},
        st.integers(2, 6),
        st.sampled_from(ENTRY_TEXTS),
        st.booleans(),
    ),
)

# --- what continues after agent_end ---------------------------------------------------------------------------------


def _prompts(s: Any) -> int:
    prompt = s.get("prompt")
    return len(prompt) if isinstance(prompt, list) else 1


def work_after_agent_end(s: Any) -> int:
    """Model requests the scenario scripts after its last prompt's first low-level run: every scripted reply past
    the first that ends that run (a reply without tool calls, an error included)."""
    found = _continuer(s)
    if found is not None and found[0] == "agent_before_settle":
        return int(plan(s)["requests"]) - wt.requests_until_stop(s)
    responses = s["responses"]
    i = 0
    for _ in range(_prompts(s)):
        while i < len(responses) and responses[i].get("stopReason") == "toolUse":
            i += 1
        i += 1
    return max(0, len(responses) - i)


def _mechanism(s: Any) -> str | None:
    if _continuer(s) is not None:
        return "a boundary handler continues"
    if s.get("queue"):
        return "a follow-up is queued"
    if any(r.get("stopReason") == "error" for r in s["responses"]):
        return "a provider error the session recovers from"
    return None


def after_end_observed(lines: list[dict[str, Any]]) -> dict[str, Any]:
    starts = [i for i, ln in enumerate(lines) if ln.get("source") == "driver" and ln.get("type") == "prompt"]
    run = lines[starts[-1] :] if starts else lines
    core = tq.core(run)
    first_end = tq.index(core, tq.is_("agent_end", "session"))
    after = core[first_end + 1 :] if first_end >= 0 else []
    return {
        "requests after the first agent_end": sum(1 for ln in after if ln.get("type") == "request"),
        "agent_settled": len(tq.events(run, "agent_settled", "session")),
        "settles last": settles_last(run) if first_end >= 0 else False,
    }


def _retry_scenario(failures: int, message: str) -> dict[str, Any]:
    error = {"content": [], "stopReason": "error", "errorMessage": message}
    return sc.app(
        "ch16-after-agent-end-retry-gen",
        "Hello.",
        [*([error] * failures), sc.text("Hi, after the retries.")],
        settings={"retry": {"base_delay_ms": 1}},
    )


def _queued_scenario(texts: list[str]) -> dict[str, Any]:
    return sc.app(
        "ch16-after-agent-end-follow-up-gen",
        "Hello.",
        [sc.text("Hi."), *(sc.text(f"Sure: {t}") for t in texts)],
        queue=[{"when": "agent_end#1", "do": "follow_up", "text": t} for t in texts],
    )


def after_agent_end(params: Params) -> dict[str, dict[str, Any]]:
    """The shared witness of what continues after agent_end; its transient error comes twice (Pi retries up to
    three times), so a retry that gives up early shows."""
    out = common.after_agent_end(params)
    retry = out["retry"]["responses"]
    out["retry"]["responses"] = [retry[0], *retry]
    return out


AGENT_END_NOT_THE_END = Property(
    hand=after_agent_end,
    premise=lambda w: wt.premise(
        any(_mechanism(s) and work_after_agent_end(s) for s in w.scenarios.values()),
        "; ".join(f"{n}: {_mechanism(s)}" for n, s in w.scenarios.items() if _mechanism(s)),
        "no scenario scripts work after its first low-level run",
    ),
    expected=lambda w: {
        name: {"requests after the first agent_end": work_after_agent_end(s), "agent_settled": 1, "settles last": True}
        for name, s in w.scenarios.items()
        if _mechanism(s)
    },
    observed=lambda w: {
        name: after_end_observed(list(w.traces.get(name, []))) for name, s in w.scenarios.items() if _mechanism(s)
    },
    family=lambda params: st.fixed_dictionaries(
        {
            "settle-continue": boundary_family(("agent_before_settle",)).map(lambda d: d["settle-continue"]),
            "retry": st.builds(
                _retry_scenario,
                st.integers(1, 2),
                st.sampled_from(("503 Service Unavailable: overloaded", "overloaded_error", "429 Too Many Requests")),
            ),
            "queued": st.lists(
                st.sampled_from(("One more thing.", "And the tests?", "Danke!")), min_size=1, max_size=2
            ).map(_queued_scenario),
        }
    ),
)

WRONG_CORRECT = Property(
    hand=ex._settle,
    premise=lambda w: _continuing(w, ("agent_before_settle",)),
    expected=lambda w: {
        name: {"requests after the first agent_end": work_after_agent_end(s), "agent_settled": 1, "settles last": True}
        for name, s in w.scenarios.items()
    },
    observed=lambda w: {name: after_end_observed(list(w.traces.get(name, []))) for name in w.scenarios},
    family=lambda params: boundary_family(("agent_before_settle",)),
)


def _exhausted_expected(w: Witness) -> dict[str, Any]:
    return {
        name: {**{k: v for k, v in plan(s).items() if k in ("continue answers", "agent_settled")}, "settles last": True}
        for name, s in w.scenarios.items()
    }


def _exhausted_observed(w: Witness) -> dict[str, Any]:
    return {
        name: {
            **{
                k: v
                for k, v in observed_plan(list(w.traces.get(name, [])), s).items()
                if k in ("continue answers", "agent_settled")
            },
            "settles last": settles_last(list(w.traces.get(name, []))),
        }
        for name, s in w.scenarios.items()
    }


SETTLE_AFTER_EXHAUSTED = Property(
    hand=ex._settle,
    premise=lambda w: _continuing(w, ("agent_before_settle",)),
    expected=_exhausted_expected,
    observed=_exhausted_observed,
    family=lambda params: boundary_family(("agent_before_settle",)),
)
CONTINUATION_BRANCH = boundary_property(
    ex._settle,
    ("agent_before_settle",),
    ("requests", "entry in request", "continue answers", "agent_end", "agent_settled"),
)

PROPERTIES: dict[str, Property] = {
    "settle.before-settle-actionable": boundary_property(ex._settle, ("agent_before_settle",), ACTIONABLE),
    "events.agent-before-settle": boundary_property(ex._settle, ("agent_before_settle",), ACTIONABLE),
    "events.turn-end": boundary_property(ex._turn_end, ("turn_end",), ACTIONABLE),
    "settle.turn-end-actionable": boundary_property(ex._both_boundaries, BOUNDARIES, ACTIONABLE, _both),
    "run.continuation-branch": CONTINUATION_BRANCH,
    "run.settle-after-continuation-exhausted": SETTLE_AFTER_EXHAUSTED,
    "settle.unconditional-can-loop": UNCONDITIONAL_CAN_LOOP,
    "settle.settled-notification-only": SETTLED_NOTIFICATION_ONLY,
    "settle.wrong-correct": WRONG_CORRECT,
    "run.agent-end-not-the-end": AGENT_END_NOT_THE_END,
}
