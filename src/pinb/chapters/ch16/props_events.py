"""Chapter 16's run shape and events table as properties: the order a run reaches its events, concurrency, and
what each event's handler can do (its "Can do" column). The table's Shape column (the fields each event carries)
is not judged here: the ledger lists it as uncovered for every row.

Expected values are worked out from each witness's scenario: the prompt and the transform a handler applies, the
text a replacement template makes, the words a mutated input holds, the order project_trust handlers answer in.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import common, tq
from pinb.chapters import scenarios as sc
from pinb.chapters.ch16 import experiments as ex
from pinb.chapters.ch16 import props_common as wt
from pinb.chapters.ch16 import sessions
from pinb.chapters.ch16.props_guard import hand_copy, hit, results
from pinb.chapters.properties import Params, Premise, Property, Witness, st

TEXTS = (
    "hello",
    "Fix the build.",
    "Prüfe das.",
    "修正して",
    "emoji 🚀 here",
    "two  spaces",
    "Line one\nline two",
    "x",
    "Résumé, s'il vous plaît",
)


def fill(template: str, text: str) -> str:
    """A scenario template's `{text}` replaced by `text` (scenarios/README.md)."""
    return text.join(template.split("{text}"))


def _prompt(s: Any) -> str:
    prompt = s.get("prompt")
    return prompt[0] if isinstance(prompt, list) else str(prompt)


def first_user_texts(lines: list[dict[str, Any]]) -> list[Any]:
    first = tq.requests(lines)[0] if tq.requests(lines) else {}
    return [m.get("text") for m in first.get("messages", ()) if m.get("role") == "user"]


def _action(s: Any, event: str) -> dict[str, Any] | None:
    return next(
        (h["action"] for _e, h in wt.handlers(s) if h["event"] == event and h["action"]["kind"] != "record"), None
    )


def _has(s: Any, event: str, kind: str | None = None) -> bool:
    return any(h["event"] == event and (kind is None or h["action"]["kind"] == kind) for _e, h in wt.handlers(s))


# --- the shape of a run -----------------------------------------------------------------------------------------------

STAGES = {"input": "input", "before_agent_start": "before_agent_start", "agent_end": "agent_end"}
MIDDLE = ("request", "message_start", "message_end", "tool_call", "tool_result")
#: The name of the stage the middle events belong to (a label of the observed order, not an observation).
MIDDLE_STAGE = "model, message and tool events"


def shape_scenario(turns: int, per_turn: int, parallel: bool, preface: bool, prompt: str = "Count.") -> dict[str, Any]:
    s = sc.run_shape()
    s["id"] = "ch16-run-shape-gen"
    s["prompt"] = prompt
    s["extensions"][0]["handlers"].append(sc.handler("message_update", "on-message_update"))
    calls = [
        sc.calls(
            *(sc.call("word_count", {"text": f"w{t} x{c}"}) for c in range(per_turn)), preface="ok" if preface else None
        )
        for t in range(turns)
    ]
    s["responses"] = [*calls, sc.text("Counted.")]
    s["settings"] = {"tool_execution": "parallel" if parallel else "sequential"}
    return {"shape": s}


def shape_family(params: Params) -> Any:
    return st.builds(
        shape_scenario, st.integers(1, 3), st.integers(1, 2), st.booleans(), st.booleans(), st.sampled_from(TEXTS)
    )


def _stages(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run's stages in order (input, before_agent_start, the model/message/tool events, agent_end), and
    which middle events it reached."""
    order: list[str] = []
    middle: set[str] = set()
    for ln in tq.core(lines):
        kind = str(ln.get("type"))
        if ln.get("source") == "ext" and kind in STAGES:
            stage = STAGES[kind]
        elif (ln.get("source") == "ext" and kind in MIDDLE) or kind == "request":
            stage = MIDDLE_STAGE
            middle.add(kind)
        else:
            continue
        if not order or order[-1] != stage:
            order.append(stage)
        if stage == "agent_end":
            break
    return {"stages": order, "middle events": sorted(middle)}


def shape_expected(w: Witness) -> dict[str, Any]:
    s = wt.scenario(w)
    handled = {h["event"] for _e, h in wt.handlers(s)}
    calls = any(r.get("stopReason") == "toolUse" for r in s["responses"])
    middle = {"request"} | {e for e in ("message_start", "message_end") if e in handled}
    middle |= {e for e in ("tool_call", "tool_result") if e in handled and calls}
    return {
        "stages": ["input", "before_agent_start", MIDDLE_STAGE, "agent_end"],
        "middle events": sorted(middle),
    }


def _shape_premise(w: Witness) -> Premise:
    s = wt.scenario(w)
    needed = ("input", "before_agent_start", "agent_end", "tool_call")
    missing = [e for e in needed if not _has(s, e)]
    calls = any(r.get("stopReason") == "toolUse" for r in s.get("responses", ()))
    return wt.premise(
        not missing and calls,
        "handlers on input, before_agent_start, the message and tool events and agent_end; a tool call",
        f"no handler on {', '.join(missing)}" if missing else "no tool call",
    )


RUN_SHAPE = Property(
    hand=ex._run_shape,
    premise=_shape_premise,
    expected=shape_expected,
    observed=lambda w: _stages(wt.trace(w)),
    family=shape_family,
)


def diagram_expected(w: Witness) -> dict[str, Any]:
    """The chapter's diagram: no departure from its order; message_update inside every streamed reply."""
    replies = sum(1 for _ in wt.scenario(w)["responses"])
    return {"departures from the diagram": [], "replies streamed inside their message": replies}


def diagram_observed(w: Witness) -> dict[str, Any]:
    lines = wt.trace(w)
    seen = [str(ln.get("type")) for ln in tq.ext_lines(lines)]
    _updates, streamed, within = ex._streaming(lines)
    return {
        "departures from the diagram": ex.diagram_violations(seen),
        "replies streamed inside their message": streamed if within else -1,
    }


SEQUENCE_DIAGRAM = Property(
    hand=ex._run_shape,
    premise=lambda w: wt.premise(
        _shape_premise(w).holds and _has(wt.scenario(w), "message_update"),
        _shape_premise(w).says + "; a handler on message_update",
        "not every event the diagram draws has a handler, or no tool call",
    ),
    expected=diagram_expected,
    observed=diagram_observed,
    family=shape_family,
)

# --- tool calls may run concurrently; settlement after more than one run ------------------------------------------


def concurrent_scenarios(tools: int, ms: int, times: int, text: str) -> dict[str, Any]:
    jobs = [f"job_{chr(97 + i)}" for i in range(tools)]
    parallel = sc.app(
        "ch16-parallel-tools-gen",
        "Run them.",
        [sc.calls(*(sc.call(j, {}) for j in jobs)), sc.text("All done.")],
        tools=[
            {"name": j, "behavior": {"kind": "sleep", "ms": ms + 10 * i, "updates": [f"{j}: started"]}}
            for i, j in enumerate(jobs)
        ],
        settings={"tool_execution": "parallel"},
    )
    from pinb.chapters.ch16.props_settle import boundary_scenario

    return {"parallel": parallel, "settle-continue": boundary_scenario("agent_before_settle", times, text, False)}


def _concurrent_expected(w: Witness) -> dict[str, Any]:
    from pinb.chapters.ch16.props_settle import plan

    s = w.scenarios["parallel"]
    parallel = (s.get("settings") or {}).get("tool_execution", "parallel") == "parallel"
    batch = max(sum(1 for b in r["content"] if b.get("type") == "toolCall") for r in s["responses"])
    return {
        "tool executions open at once": batch if parallel else 1,
        "stream lines of one call while another ran": parallel and batch >= 2,
        "low-level runs before the settlement": plan(w.scenarios["settle-continue"])["agent_end"],
        "agent_settled": 1,
    }


def _concurrent_observed(w: Witness) -> dict[str, Any]:
    from pinb.chapters.views import max_concurrency

    par = [ln for ln in w.traces.get("parallel", []) if ln.get("source") == "session"]
    seq = common.settle_sequence(w.traces.get("settle-continue", []))
    return {
        "tool executions open at once": max_concurrency(par),
        "stream lines of one call while another ran": bool(ex.interleaved_updates(list(w.traces.get("parallel", [])))),
        "low-level runs before the settlement": seq.count("agent_end"),
        "agent_settled": seq.count("agent_settled"),
    }


TOOL_CALLS_CONCURRENT = Property(
    hand=ex._concurrent,
    premise=lambda w: wt.premise(
        "parallel" in w.scenarios and _concurrent_expected(w)["tool executions open at once"] >= 2,
        "a batch of tool calls that sleep, executed in parallel mode; a continuation at agent_before_settle",
        "no batch of two or more calls in parallel mode",
    ),
    expected=_concurrent_expected,
    observed=_concurrent_observed,
    family=lambda params: st.builds(
        concurrent_scenarios,
        st.integers(2, 4),
        st.integers(20, 40),
        st.integers(1, 2),
        st.sampled_from(("Check the plan.", "Once more.")),
    ),
    picture="parallel",
)

# --- notify or transform --------------------------------------------------------------------------------------------


def notify_scenario(prompt: str, template: str, replacement: str, commands: list[str]) -> dict[str, Any]:
    s = hand_copy(ex._notify_transform)["transform"]
    s["id"] = "ch16-notify-transform-gen"
    s["prompt"] = prompt
    shaper = s["extensions"][0]["handlers"]
    shaper[1]["action"]["text"] = template
    shaper[2]["action"]["text"] = replacement
    s["responses"][0] = sc.calls(*(sc.call("bash", {"command": c}) for c in commands))
    return {"transform": s}


def _notify_expected(w: Witness) -> dict[str, Any]:
    s = wt.scenario(w)
    template = (_action(s, "input") or {}).get("text", "{text}")
    replace = (_action(s, "tool_result") or {}).get("text", "{text}")
    from pinb.chapters.ch16.props_guard import calls, no_ui_reason, tool_output

    out = []
    for tool, args in calls(s):
        source = hit(tool, args)
        out.append(no_ui_reason(source) if source else fill(replace, tool_output(s, tool) or ""))
    return {"user text": [fill(template, _prompt(s))], "results": out, "agent_start returned": [None]}


def _notify_observed(w: Witness) -> dict[str, Any]:
    lines = wt.trace(w)
    return {
        "user text": first_user_texts(lines),
        "results": [text for _tool, text, _err in results(lines)],
        "agent_start returned": [ln.get("result") for ln in tq.ext_lines(lines, "agent_start")],
    }


def _notify_premise(w: Witness) -> Premise:
    s = wt.scenario(w)
    from pinb.chapters.ch16.props_guard import calls

    verdicts = {hit(t, a) is not None for t, a in calls(s)}
    holds = _has(s, "agent_start", "record") and _has(s, "input", "transform_input") and _has(s, "tool_result")
    holds = holds and verdicts == {True, False}
    return wt.premise(
        holds,
        "a notifying agent_start handler, an input transform, a result replacement, and a call the guard cancels "
        "beside one it lets through",
        "not every kind of handler, or no call cancelled beside one let through",
    )


NOTIFY_OR_TRANSFORM = Property(
    hand=ex._notify_transform,
    premise=_notify_premise,
    expected=_notify_expected,
    observed=_notify_observed,
    family=lambda params: st.builds(
        notify_scenario,
        st.sampled_from(TEXTS),
        st.sampled_from(("{text}!", "<<{text}>>", "{text} (reworded)")),
        st.sampled_from(("[redacted]", "[{text} hidden]", "{text}{text}")),
        st.permutations(["ls", "git reset --hard", "git push --force", "pwd"]).map(lambda xs: list(xs[:3])),
    ),
)

# --- session_start / session_shutdown ---------------------------------------------------------------------------------


def lifecycle(extensions: int | list[bool], prompt: str, shutdown: bool) -> dict[str, Any]:
    """Extensions with a session_shutdown handler each, and a session_start handler where the flag says so."""
    flags = [True] * extensions if isinstance(extensions, int) else extensions
    exts = [
        sc.extension(
            f"life{i}",
            *([sc.handler("session_start", f"start{i}")] if start else []),
            sc.handler("session_shutdown", f"stop{i}"),
        )
        for i, start in enumerate(flags)
    ]
    s = sc.app("ch16-lifecycle-gen", prompt, [sc.text("Hello.")], extensions=exts)
    if shutdown:
        s["steps"] = [{"do": "shutdown"}]
    return s


def _labels(s: Any, event: str) -> list[str]:
    return [str(h.get("label")) for _e, h in wt.handlers(s) if h["event"] == event]


def _start_observed(w: Witness) -> dict[str, Any]:
    lines = tq.core(wt.trace(w))
    starts = [ln for ln in lines if ln.get("type") == "session_start" and ln.get("source") == "ext"]
    first_run = tq.index(lines, tq.is_("agent_start"))
    last_start = max(tq.indexes(lines, tq.is_("session_start", "ext")), default=-1)
    return {
        "handlers and reasons": [[ln.get("handler"), ln.get("reason")] for ln in starts],
        "before the first run": 0 <= last_start < first_run,
    }


SESSION_START = Property(
    hand=ex._lifecycle,
    premise=lambda w: wt.premise(
        bool(_labels(wt.scenario(w), "session_start")),
        f"session_start handlers: {', '.join(_labels(wt.scenario(w), 'session_start'))}; one fresh session",
        "no session_start handler",
    ),
    expected=lambda w: {
        "handlers and reasons": [[label, "startup"] for label in _labels(wt.scenario(w), "session_start")],
        "before the first run": True,
    },
    observed=_start_observed,
    family=lambda params: st.builds(
        lambda n, p, down: {"lifecycle": lifecycle(n, p, down)},
        st.integers(1, 3),
        st.sampled_from(TEXTS),
        st.booleans(),
    ),
)


def _shutdown_expected(w: Witness) -> dict[str, Any]:
    s = wt.scenario(w)
    down = any(step.get("do") == "shutdown" for step in s.get("steps", ()))
    return {"handlers and reasons": [[label, "quit"] for label in _labels(s, "session_shutdown")] if down else []}


SESSION_SHUTDOWN = Property(
    hand=sessions.shutdown,
    premise=lambda w: wt.premise(
        bool(_labels(wt.scenario(w), "session_shutdown"))
        and any(step.get("do") == "shutdown" for step in wt.scenario(w).get("steps", ())),
        f"session_shutdown handlers {', '.join(_labels(wt.scenario(w), 'session_shutdown'))}; the session exits",
        "no session_shutdown handler, or the session never exits",
    ),
    expected=_shutdown_expected,
    observed=lambda w: {
        "handlers and reasons": [
            [ln.get("handler"), ln.get("reason")] for ln in tq.ext_lines(wt.trace(w), "session_shutdown")
        ]
    },
    family=lambda params: st.builds(
        lambda flags, p: {"shutdown": lifecycle(flags, p, True)},
        st.lists(st.booleans(), min_size=1, max_size=4),
        st.sampled_from(TEXTS),
    ),
)

# --- input -----------------------------------------------------------------------------------------------------------


def input_scenarios(prompt: str, template: str) -> dict[str, Any]:
    def one(name: str, action: dict[str, Any]) -> dict[str, Any]:
        extension = sc.extension("gate", {"event": "input", "label": "gate", "action": action})
        return sc.app(f"ch16-input-{name}-gen", prompt, [sc.text("Hi."), sc.text("again")], extensions=[extension])

    return {
        "continue": one("continue", {"kind": "record"}),
        "transform": one("transform", {"kind": "transform_input", "text": template}),
        "handled": one("handled", {"kind": "transform_input", "handled": True}),
    }


def _input_expected(w: Witness) -> dict[str, Any]:
    out = {}
    for name, s in w.scenarios.items():
        action = _action(s, "input") or {"kind": "record"}
        if action.get("handled"):
            out[name] = {"handler saw": _prompt(s), "model received": None, "runs": 0}
        elif action["kind"] == "transform_input":
            out[name] = {"handler saw": _prompt(s), "model received": fill(action["text"], _prompt(s)), "runs": 1}
        else:
            out[name] = {"handler saw": _prompt(s), "model received": _prompt(s), "runs": 1}
    return out


def _input_observed(w: Witness) -> dict[str, Any]:
    out = {}
    for name, lines in w.traces.items():
        seen = [ln.get("text") for ln in tq.ext_lines(lines, "input")]
        users = first_user_texts(list(lines))
        out[name] = {
            "handler saw": seen[0] if seen else None,
            "model received": users[0] if users else None,
            "runs": len(tq.events(lines, "agent_start", "session")),
        }
    return out


def _input_premise(w: Witness) -> Premise:
    kinds = {
        ("handled" if (a := _action(s, "input") or {}).get("handled") else a.get("kind", "record"))
        for s in w.scenarios.values()
        if _has(s, "input")
    }
    return wt.premise(
        len(kinds) >= 2,
        f"input handlers that {', '.join(sorted(kinds))}",
        "fewer than two of the row's outcomes (continue, transform, handle)",
    )


INPUT = Property(
    hand=ex._input,
    premise=_input_premise,
    expected=_input_expected,
    observed=_input_observed,
    family=lambda params: st.builds(
        input_scenarios,
        st.sampled_from(TEXTS),
        st.sampled_from(("{text}!", "[{text}]", "Please: {text}", "{text} {text}", "«{text}»", "Rewritten.")),
    ),
)

# --- before_agent_start -----------------------------------------------------------------------------------------------


def _inject_scenarios(sentence: str, prompt: str) -> dict[str, Any]:
    out = common.four_inputs({"injected_sentence": sentence})
    for s in out.values():
        s["prompt"] = prompt
    return {"sentence": out["sentence"], "base": out["base"]}


def _injected(s: Any) -> str | None:
    return (_action(s, "before_agent_start") or {}).get("content")


def _inject_observed(w: Witness) -> dict[str, Any]:
    table = common.inputs_table(dict(w.traces))
    (base_m, base_t), (sent_m, sent_t) = table["base"], table["sentence"]
    added, rest = [], list(base_m)
    for m in sent_m:  # a multiset difference: an injected text may equal the prompt's
        if m in rest:
            rest.remove(m)
        else:
            added.append(m)
    return {"added messages": [m.get("text") for m in added], "tools unchanged": sent_t == base_t}


BEFORE_AGENT_START = Property(
    hand=ex._inject,
    premise=lambda w: wt.premise(
        bool(_injected(w.scenarios.get("sentence", {}))) and not _injected(w.scenarios.get("base", {})),
        "the same scenario with and without a handler that injects a message",
        "no pair of scenarios that differ by an injecting handler",
    ),
    expected=lambda w: {"added messages": [_injected(w.scenarios["sentence"])], "tools unchanged": True},
    observed=_inject_observed,
    family=lambda params: st.builds(
        _inject_scenarios,
        st.sampled_from(
            (
                "Remember: short answers.",
                "Use British spelling.",
                "Antworte auf Deutsch.",
                "絵文字 🚀",
                "x",
                "Two\nlines",
            )
        ),
        st.sampled_from(TEXTS),
    ),
    picture="sentence",
)


def _replace_scenarios(replacement: str, prompt: str) -> dict[str, Any]:
    out = sessions.replaced({"replacement_prompt": replacement})
    for s in out.values():
        s["prompt"] = prompt
    return out


def _replacement(s: Any) -> str | None:
    action = _action(s, "before_agent_start") or {}
    value = action.get("value") if action.get("kind") == "return_value" else None
    return value.get("systemPrompt") if isinstance(value, dict) else None


def _system_prompts(lines: Any) -> list[str]:
    return [str(ln.get("systemPrompt", "")) for ln in lines if ln.get("source") == "request"]


BEFORE_AGENT_START_REPLACE = Property(
    hand=sessions.replaced,
    premise=lambda w: wt.premise(
        bool(_replacement(w.scenarios.get("replaced", {}))) and "plain" in w.scenarios,
        "a handler returns a systemPrompt; the same run without it",
        "no handler replaces the system prompt, or no run without it to compare",
    ),
    expected=lambda w: {
        "with the handler": [_replacement(w.scenarios["replaced"])],
        "without it, the replacement": False,
    },
    observed=lambda w: {
        "with the handler": _system_prompts(w.traces.get("replaced", [])),
        "without it, the replacement": _system_prompts(w.traces.get("plain", []))
        == [_replacement(w.scenarios["replaced"])],
    },
    family=lambda params: st.builds(
        _replace_scenarios,
        st.sampled_from(
            ("You answer in haiku.", "Réponds en français.", "Only JSON.", "短く答えて", "x", "Be 🚀 brief.")
        ),
        st.sampled_from(TEXTS),
    ),
)

# --- tool_call ------------------------------------------------------------------------------------------------------


def _mutate_scenarios(original: str, mutated: str, command: str) -> dict[str, Any]:
    out = hand_copy(ex._mutate)
    s = out["mutate"]
    s["responses"][0] = sc.calls(sc.call("word_count", {"text": original}))
    s["extensions"][0]["handlers"][0]["action"]["set"] = {"text": mutated}
    out["no-ui"]["responses"][0] = sc.calls(sc.call("bash", {"command": command}))
    return out


def _tool_call_expected(w: Witness) -> dict[str, Any]:
    from pinb.chapters.ch16.props_guard import calls, guard_expects

    s = w.scenarios["mutate"]
    args = {**calls(s)[0][1], **((_action(s, "tool_call") or {}).get("set") or {})}
    return {
        "words the tool counted": {"words": len(str(args["text"]).split())},
        "block": guard_expects(Witness(w.name, {"no-ui": w.scenarios["no-ui"]}, w.traces))["no-ui"],
    }


def _tool_call_observed(w: Witness) -> dict[str, Any]:
    from pinb.chapters.ch16.props_guard import guard_returns

    end = next(iter(tq.events(w.traces.get("mutate", []), "tool_execution_end", "session")), {})
    return {
        "words the tool counted": end.get("details"),
        "block": guard_returns(Witness(w.name, {"no-ui": w.scenarios["no-ui"]}, w.traces))["no-ui"],
    }


TOOL_CALL = Property(
    hand=ex._mutate,
    premise=lambda w: wt.premise(
        "mutate" in w.scenarios
        and bool((_action(w.scenarios["mutate"], "tool_call") or {}).get("set"))
        and "no-ui" in w.scenarios,
        "a handler mutates event.input; the guard blocks a matching call",
        "no handler mutates event.input, or no blocked call",
    ),
    expected=_tool_call_expected,
    observed=_tool_call_observed,
    family=lambda params: st.builds(
        _mutate_scenarios,
        st.sampled_from(("one two", "a", "the quick brown fox", "x y")),
        st.sampled_from(("a b c d e", "x", "eins zwei drei", "日本 語 🚀")),
        st.sampled_from(("git push --force", "git reset --hard", "git clean -fdx", "git push -f origin main")),
    ),
    picture="mutate",
)

# --- tool_result -----------------------------------------------------------------------------------------------------


def _result_scenario(stdout: str, template: str, is_error: bool, details: dict[str, Any]) -> dict[str, Any]:
    s = ex._tool_result({})["replace"]
    s["tools"] = [sc.bash_tool(stdout=stdout)]
    s["extensions"][0]["handlers"][0]["action"].update(text=template, isError=is_error, details=details)
    return {"replace": s}


def _result_expected(w: Witness) -> dict[str, Any]:
    from pinb.chapters.ch16.props_guard import tool_output

    s = wt.scenario(w)
    action = _action(s, "tool_result") or {}
    text = fill(action.get("text", "{text}"), tool_output(s, "bash") or "")
    return {
        "result": [text, action.get("isError", False), action.get("details")],
        "the model saw": [text],
    }


def _result_observed(w: Witness) -> dict[str, Any]:
    lines = wt.trace(w)
    end = next(iter(tq.events(lines, "tool_execution_end", "session")), {})
    requests = tq.requests(lines)
    seen = [
        m.get("text")
        for m in (requests[1].get("messages", ()) if len(requests) > 1 else ())
        if m.get("role") == "toolResult"
    ]
    return {"result": [end.get("text"), end.get("isError"), end.get("details")], "the model saw": seen}


TOOL_RESULT = Property(
    hand=ex._tool_result,
    premise=lambda w: wt.premise(
        _has(wt.scenario(w), "tool_result", "replace_result") and bool(tq.events(wt.trace(w), "tool_execution_end")),
        "a tool_result handler replaces a call's result",
        "no tool_result handler replaced a result",
    ),
    expected=_result_expected,
    observed=_result_observed,
    family=lambda params: st.builds(
        _result_scenario,
        st.sampled_from(("secret.txt", "a\nb", "ünïcode 🚀")),
        st.sampled_from(("[1 file]", "[{text}]", "redacted: {text}")),
        st.booleans(),
        st.sampled_from(({"n": 1}, {"files": ["a"]}, {})),
    ),
)

# --- message_end ------------------------------------------------------------------------------------------------------


def _message_scenarios(draft: str, template: str) -> dict[str, Any]:
    out = ex._message_end({})
    for s in out.values():
        s["responses"][0] = sc.calls(sc.call("bash", {"command": "ls"}), preface=draft)
        s["extensions"][0]["handlers"][0]["action"]["text"] = template
    return out


def _message_expected(w: Witness) -> dict[str, Any]:
    out = {}
    for name, s in w.scenarios.items():
        action = _action(s, "message_end") or {}
        draft = wt.response_texts(s)[0]
        same_role = action.get("as_role") in (None, action.get("role", "assistant"))
        text = fill(action.get("text", "{text}"), draft) if same_role else draft
        out[name] = {"finalized": ["assistant", text], "next request carries": [text], "refused": not same_role}
    return out


def _message_observed(w: Witness) -> dict[str, Any]:
    out = {}
    for name, lines in w.traces.items():
        ends = tq.assistant_ends(lines)
        requests = tq.requests(lines)
        seen = [
            m.get("text")
            for m in (requests[1].get("messages", ()) if len(requests) > 1 else ())
            if m.get("role") == "assistant"
        ]
        errors = [ln.get("event") for ln in lines if ln.get("source") == "error"]
        first = ends[0] if ends else {}
        out[name] = {
            "finalized": [first.get("role"), first.get("text")],
            "next request carries": seen,
            "refused": "message_end" in errors,
        }
    return out


MESSAGE_END = Property(
    hand=ex._message_end,
    premise=lambda w: wt.premise(
        any(_has(s, "message_end", "replace_message") for s in w.scenarios.values()),
        "a message_end handler replaces the assistant's reply (one keeping its role, one changing it)",
        "no message_end handler returns a replacement",
    ),
    expected=_message_expected,
    observed=_message_observed,
    family=lambda params: st.builds(
        _message_scenarios,
        st.sampled_from(("draft", "Entwurf", "下書き 🚀", "two words", "Let me look.", "ok", "Hmm.", "Checking\nnow")),
        st.sampled_from(
            ("[{text}]", "{text} (edited)", "replaced", "{text}{text}", "« {text} »", "{text}.", "Ä{text}")
        ),
    ),
)

# --- project_trust ----------------------------------------------------------------------------------------------------


def _trust_scenario(answers: list[str]) -> dict[str, Any]:
    s = sessions.trust({})["trust"]
    s["extensions"] = [
        sc.extension(f"{a}-{i}", sc.handler("project_trust", f"{a}-{i}", "trust", trusted=a))
        for i, a in enumerate(answers)
    ]
    return {"trust": s}


def _trust_answers(s: Any) -> list[tuple[str, str]]:
    return [(str(h.get("label")), h["action"]["trusted"]) for _e, h in wt.handlers(s) if h["event"] == "project_trust"]


def _trust_expected(w: Witness) -> dict[str, Any]:
    """Asked in load order until the first answer that decides; the project's SYSTEM.md is in effect iff it is yes."""
    asked, decided = [], None
    for label, answer in _trust_answers(wt.scenario(w)):
        asked.append([label, answer])
        if answer != "undecided":
            decided = answer
            break
    return {"asked": asked, "project prompt in effect": decided == "yes"}


def _trust_observed(w: Witness) -> dict[str, Any]:
    lines = wt.trace(w)
    asked = [
        [ln.get("handler"), (ln.get("result") or {}).get("trusted")] for ln in tq.ext_lines(lines, "project_trust")
    ]
    prompt = next((str(ln.get("systemPrompt", "")) for ln in lines if ln.get("source") == "request"), "")
    return {"asked": asked, "project prompt in effect": prompt.startswith(sessions.PROJECT_PROMPT)}


PROJECT_TRUST = Property(
    hand=sessions.trust,
    premise=lambda w: wt.premise(
        len(_trust_answers(wt.scenario(w))) >= 2
        and any(a != "undecided" for _l, a in _trust_answers(wt.scenario(w))[1:]),
        f"project_trust answers in load order: {[a for _l, a in _trust_answers(wt.scenario(w))]}",
        "fewer than two project_trust handlers, or none after the first decides",
    ),
    expected=_trust_expected,
    observed=_trust_observed,
    family=lambda params: (
        st.lists(st.sampled_from(("undecided", "yes", "no")), min_size=2, max_size=4)
        .filter(lambda xs: any(a != "undecided" for a in xs[1:]))
        .map(_trust_scenario)
    ),
)

# --- session_before_compact -------------------------------------------------------------------------------------------


def _compact_scenarios(summary: str, questions: int, keep: int = 60) -> dict[str, Any]:
    out = sessions.before_compact({})
    out["supply"]["extensions"][0]["handlers"][0]["action"]["summary"] = summary
    for s in out.values():
        s["prompt"] = [f"question {n}{sessions.WORDS}" for n in range(questions)]
        s["responses"] = [sc.text(f"answer {n}{sessions.WORDS}") for n in range(questions)] + [sc.text("next answer")]
        s["steps"][1]["text"] = f"question {questions}"
        s["settings"] = {"compaction": {"keep_recent_tokens": keep}}
    return out


def _compact_expected(w: Witness) -> dict[str, Any]:
    s = w.scenarios["supply"]
    summary = (_action(s, "session_before_compact") or {}).get("summary")
    return {
        "cancel": {"compaction entries": 0, "compact() rejected": True, "first question still sent": True},
        "supply": {"summary": summary, "next request starts with it": True, "first question still sent": False},
    }


def _compact_observed(w: Witness) -> dict[str, Any]:
    cancel = sessions._compaction(list(w.traces.get("cancel", [])))
    supply = sessions._compaction(list(w.traces.get("supply", [])))
    entry = supply["compactions"][-1] if supply["compactions"] else {}
    s = w.scenarios["supply"]
    summary = (_action(s, "session_before_compact") or {}).get("summary") or "\0"
    return {
        "cancel": {
            "compaction entries": len(cancel["compactions"]),
            "compact() rejected": bool(cancel["rejected"]),
            "first question still sent": any(m.startswith("user:question 0") for m in cancel["next"]),
        },
        "supply": {
            "summary": entry.get("summary"),
            "next request starts with it": bool(supply["next"]) and summary in supply["next"][0],
            "first question still sent": any(m.startswith("user:question 0") for m in supply["next"]),
        },
    }


SESSION_BEFORE_COMPACT = Property(
    hand=sessions.before_compact,
    premise=lambda w: wt.premise(
        {"cancel", "supply"} <= set(w.traces)
        and all(tq.ext_lines(w.traces[n], "session_before_compact") for n in ("cancel", "supply")),
        "a manual compaction whose handler cancels, and one whose handler supplies the summary",
        "no compaction reached a session_before_compact handler",
    ),
    expected=_compact_expected,
    observed=_compact_observed,
    family=lambda params: st.builds(
        _compact_scenarios,
        st.sampled_from(
            (
                sessions.OWN_SUMMARY,
                "Vier Fragen; die letzte ist offen.",
                "要約: 四つの質問",
                "Short summary 🚀",
                "x",
                "Questions asked; one open.",
            )
        ),
        st.integers(3, 6),
        st.sampled_from((40, 60, 90)),
    ),
    picture="supply",
)

PROPERTIES: dict[str, Property] = {
    "run.shape": RUN_SHAPE,
    "run.sequence-diagram": SEQUENCE_DIAGRAM,
    "run.tool-calls-concurrent": TOOL_CALLS_CONCURRENT,
    "dispatch.notify-or-transform": NOTIFY_OR_TRANSFORM,
    "events.session-start": SESSION_START,
    "events.session-shutdown": SESSION_SHUTDOWN,
    "events.input": INPUT,
    "events.before-agent-start": BEFORE_AGENT_START,
    "events.before-agent-start-replace": BEFORE_AGENT_START_REPLACE,
    "events.tool-call": TOOL_CALL,
    "events.tool-result": TOOL_RESULT,
    "events.message-end": MESSAGE_END,
    "events.project-trust": PROJECT_TRUST,
    "events.session-before-compact": SESSION_BEFORE_COMPACT,
}
