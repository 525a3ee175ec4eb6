"""Chapter 01's experiments that run as scenarios: the same data on the stand-in and on real Pi, judged alike.

Each judge is a pure function of the traces (keyed by scenario name) and returns a `Finding` that can go either
way: it compares what the trace shows with what the chapter says.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pinb.chapters import common, tq
from pinb.chapters import scenarios as sc
from pinb.chapters.ch01 import assembly, packages
from pinb.chapters.ch01.program import NAME, printed_output, program
from pinb.chapters.experiments import (
    BookExampleExperiment,
    Finding,
    PackageExperiment,
    Params,
    ScenarioExperiment,
    Trace,
)
from pinb.chapters.properties import PropertyExperiment

# --- one turn ---------------------------------------------------------------------------------------------------


def _hello(params: Params) -> dict[str, dict[str, Any]]:
    prompt = str(params.get("prompt", "Hello there."))
    return {"hello": sc.app("ch01-hello", prompt, [sc.text("Hi.")])}


def judge_message_added(traces: dict[str, Trace]) -> Finding:
    lines = tq.core(traces["hello"])
    prompt = next((line.get("text") for line in traces["hello"] if line.get("type") == "prompt"), None)
    user_end = tq.index(lines, lambda ln: ln.get("type") == "message_end" and ln.get("role") == "user")
    first_request = tq.index(lines, tq.is_("request", "model"))
    if user_end < 0 or first_request < 0:
        return Finding(False, f"no user message_end ({user_end}) or no model request ({first_request})")
    last = lines[first_request].get("messages", [{}])[-1]
    holds = user_end < first_request and last.get("role") == "user" and last.get("text") == prompt
    return Finding(
        holds,
        f"user message recorded at core line {user_end}, request #1 at {first_request}; "
        f"request #1 ends with {last.get('role')} {last.get('text')!r}",
    )


def _observed(model: dict[str, Any] | None = None, name: str = "word-count-app") -> dict[str, Any]:
    """Chapter 01's example in a session, with the request's inputs traced (system prompt, model, thinking level)."""
    scenario = sc.word_count("app")
    scenario["id"] = f"ch01-{name}"
    scenario["observe"] = {"requests": True}
    if model is not None:
        scenario["model"] = model
    return scenario


def _four_inputs(params: Params) -> dict[str, dict[str, Any]]:
    level = str(params.get("thinking_level", "high"))
    return {
        "word-count-app": _observed(),
        "thinking": _observed({"reasoning": True, "thinking_level": level}, f"word-count-thinking-{level}"),
    }


def _inputs_line(trace: Trace) -> dict[str, Any]:
    return next((dict(ln) for ln in trace if ln.get("source") == "request" and ln.get("type") == "inputs"), {})


def judge_four_inputs(traces: dict[str, Trace], params: Params) -> Finding:
    requests = tq.requests(traces["word-count-app"])
    if not requests:
        return Finding(False, "no model request in the trace")
    first = requests[0]
    roles = [m.get("role") for m in first.get("messages", ())]
    has_system = roles[:1] == ["system"]
    has_branch = "user" in roles
    tools = list(first.get("tools", ()))
    # The fourth input: the model and its thinking level go out with the request, and a change to them shows there.
    plain, thinking = _inputs_line(traces["word-count-app"]), _inputs_line(traces["thinking"])
    level = str(params.get("thinking_level", "high"))
    settings = (
        bool(plain.get("model")) and plain.get("thinkingLevel") == "off" and thinking.get("thinkingLevel") == level
    )
    holds = has_system and has_branch and tools == ["word_count"] and settings
    return Finding(
        holds,
        f"request #1 carries messages {roles} (system first: {has_system}), tools {tools}, model "
        f"{plain.get('model')!r} with thinking level {plain.get('thinkingLevel')!r} ({thinking.get('thinkingLevel')!r} "
        f"when the session's level is {level!r})",
    )


def _model_settings(params: Params) -> dict[str, dict[str, Any]]:
    level = str(params.get("thinking_level", "high"))
    return {
        "off": _observed({"reasoning": True, "thinking_level": "off"}, "model-settings-off"),
        "thinking": _observed({"reasoning": True, "thinking_level": level}, f"model-settings-{level}"),
        "other-model": _observed({"id": "faux-2", "reasoning": True}, "model-settings-other-model"),
    }


def judge_model_settings(traces: dict[str, Trace], params: Params) -> Finding:
    """Which model and how hard it thinks reach the request as their own input: messages and tools stay the same."""
    level = str(params.get("thinking_level", "high"))
    seen = {name: _inputs_line(trace) for name, trace in traces.items()}
    first = {name: common.first_request(trace) for name, trace in traces.items()}
    same_rest = len({repr((r.get("messages"), r.get("tools"))) for r in first.values()}) == 1
    holds = seen["off"].get("thinkingLevel") == "off" and seen["thinking"].get("thinkingLevel") == level
    holds = (
        holds
        and seen["other-model"].get("model", "").endswith("/faux-2")
        and seen["off"].get("model") != seen["other-model"].get("model")
    )
    holds = holds and same_rest
    return Finding(
        holds,
        "request #1 inputs: "
        + "; ".join(
            f"{name}: model {s.get('model')!r}, thinking {s.get('thinkingLevel')!r}" for name, s in seen.items()
        )
        + f"; messages and tools identical across the three: {same_rest}",
    )


def _word_count_agent(params: Params) -> dict[str, dict[str, Any]]:
    return {"word-count": sc.word_count("agent")}


def _text_and_call(params: Params) -> dict[str, dict[str, Any]]:
    scenario = sc.word_count("agent")
    scenario["id"] = "ch01-text-and-call"
    scenario["responses"][0] = sc.calls(sc.call("word_count", {"text": "a b"}), preface="Let me count.")
    return {"text-and-call": scenario}


def judge_text_and_calls(traces: dict[str, Trace]) -> Finding:
    ends = tq.assistant_ends(traces["text-and-call"])
    if not ends:
        return Finding(False, "no assistant message_end")
    first = ends[0]
    names = [c.get("name") for c in first.get("toolCalls", ()) or ()]
    holds = bool(first.get("text")) and names == ["word_count"]
    return Finding(holds, f"first assistant message: text {first.get('text')!r}, tool calls {names}")


def judge_records_executes_records(traces: dict[str, Trace]) -> Finding:
    lines = tq.listener(traces["word-count"])
    order = [
        tq.index(lines, lambda ln: ln.get("type") == "message_end" and ln.get("stopReason") == "toolUse"),
        tq.index(lines, tq.is_("tool_execution_start")),
        tq.index(lines, tq.is_("tool_execution_end")),
        tq.index(lines, lambda ln: ln.get("type") == "message_end" and ln.get("role") == "toolResult"),
        tq.index(lines, tq.is_("turn_end")),
    ]
    holds = all(i >= 0 for i in order) and order == sorted(order)
    # Recorded means the result is part of the conversation: the next request carries it after the call.
    requests = tq.requests(traces["word-count"])
    carried = [m.get("role") for m in requests[1].get("messages", [])][-2:] if len(requests) > 1 else []
    holds = holds and carried == ["assistant", "toolResult"]
    return Finding(
        holds,
        "positions of assistant message_end(toolUse), tool_execution_start, tool_execution_end, "
        f"toolResult message_end, turn_end: {order}; request #2 ends with {carried}",
    )


def _continuation(params: Params) -> dict[str, dict[str, Any]]:
    follow = sc.agent(
        "ch01-follow-up",
        "Hello.",
        [sc.text("Hi there."), sc.text("Following up.")],
        queue=[{"when": "message_start#2", "do": "follow_up", "text": "And one more thing."}],
        settings={"stream": {"token_size": 1}},
    )
    plain = sc.agent("ch01-text-only", "Hello.", [sc.text("Hi there."), sc.text("never asked for")])
    return {"word-count": sc.word_count("agent"), "follow-up": follow, "text-only": plain}


def judge_continuation_test(traces: dict[str, Trace]) -> Finding:
    counts = {name: len(tq.requests(trace)) for name, trace in traces.items()}
    ends = {name: len(tq.events(trace, "agent_end")) for name, trace in traces.items()}
    holds = counts == {"word-count": 2, "follow-up": 2, "text-only": 1} and set(ends.values()) == {1}
    return Finding(
        holds,
        f"model requests: tool results → {counts['word-count']}, queued follow-up → {counts['follow-up']}, "
        f"neither → {counts['text-only']} (expected 2, 2, 1); agent_end per run {ends}",
    )


def _parallel(params: Params) -> dict[str, dict[str, Any]]:
    ms = int(params.get("tool_ms", 20))
    scenario = sc.agent(
        "ch01-two-tools",
        "Run both jobs.",
        [sc.calls(sc.call("job_a", {}), sc.call("job_b", {})), sc.text("Both done.")],
        tools=[sc.sleep_tool("job_a", ms), sc.sleep_tool("job_b", ms // 2)],
        settings={"tool_execution": "parallel"},
    )
    return {"word-count": sc.word_count("agent"), "two-tools": scenario}


def judge_turn_shape(traces: dict[str, Trace]) -> Finding:
    problems: list[str] = []
    notes: list[str] = []
    for name, trace in traces.items():
        listener = tq.listener(trace)
        source = listener[0].get("source") if listener else "agent"
        lines = [ln for ln in tq.core(trace) if ln.get("source") in (source, "model")]
        windows = tq.turn_windows(lines)
        if not windows:
            problems.append(f"{name}: no turn_start at all")
        if any(end < 0 for _, end in windows):
            problems.append(f"{name}: a turn that never reached turn_end")
        per_turn = []
        for start, end in windows:
            inside = lines[start : end + 1 if end >= 0 else len(lines)]
            n_requests = len(tq.requests(inside))
            asked = {c.get("id") for ln in inside if ln.get("type") == "message_end" for c in ln.get("toolCalls") or ()}
            ran = {ln.get("toolCallId") for ln in inside if str(ln.get("type")).startswith("tool_execution_")}
            per_turn.append(f"{n_requests} request(s), tools asked {sorted(asked)} ran {sorted(ran)}")
            if n_requests != 1:
                problems.append(f"{name}: a turn with {n_requests} requests")
            if ran != asked:
                problems.append(f"{name}: turn ran {sorted(ran)} but asked {sorted(asked)}")
        outside = [
            ln.get("type")
            for i, ln in enumerate(lines)
            if (str(ln.get("type")).startswith("tool_execution_") or ln.get("type") == "request")
            and not any(s <= i <= (e if e >= 0 else len(lines)) for s, e in windows)
        ]
        if outside:
            problems.append(f"{name}: {outside} outside any turn")
        notes.append(f"{name}: {len(windows)} turns [{'; '.join(per_turn)}]")
    return Finding(not problems, "; ".join(problems) or " | ".join(notes), " | ".join(notes))


def _continuation_app(params: Params) -> dict[str, dict[str, Any]]:
    follow = sc.app(
        "ch01-app-follow-up",
        "Hello.",
        [sc.text("Hi there, this reply streams slowly."), sc.text("Following up.")],
        queue=[{"when": "message_start#3", "do": "follow_up", "text": "And one more thing."}],
        settings={"stream": {"token_size": 2, "tokens_per_second": 200}},
    )
    after_end = common.after_agent_end(params)
    return {
        "word-count-app": sc.word_count("app"),
        "settle-continue": sc.settle_continue(),
        "follow-up-app": follow,
        "retry": after_end["retry"],
        "overflow-recovery": after_end["overflow-recovery"],
    }


def judge_continuation_explicit(traces: dict[str, Trace]) -> Finding:
    tools = len(tq.requests(traces["word-count-app"]))
    settle = traces["settle-continue"]
    settle_requests = len(tq.requests(settle))
    follow = traces["follow-up-app"]
    follow_requests = len(tq.requests(follow))
    follow_seen = any(tq.mentions(r, "And one more thing.") for r in tq.requests(follow))
    # The second request must not be the model's own doing: in those two runs the first reply already said stop.
    first_stops = {name: _first_stop_reason(traces[name]) for name in ("settle-continue", "follow-up-app")}
    # Retries and recovery: the application layer goes on past the failed run's agent_end on its own.
    automatic = {name: common.continued_after_agent_end(traces[name]) for name in ("retry", "overflow-recovery")}
    holds = tools == 2 and settle_requests == 2 and follow_requests == 2 and follow_seen
    holds = holds and set(first_stops.values()) == {"stop"} and all(ok for ok, _ in automatic.values())
    return Finding(
        holds,
        f"requests: after tool results {tools}, after a settlement handler's continue {settle_requests}, "
        f"with a queued follow-up {follow_requests} (follow-up reached the model: {follow_seen}); the first reply's "
        f"stop reason in the settlement and follow-up runs: {first_stops}; "
        + "; ".join(f"{name}: {order}" for name, (_, order) in automatic.items()),
    )


def _first_stop_reason(trace: Trace) -> Any:
    ends = tq.assistant_ends(trace)
    return ends[0].get("stopReason") if ends else None


# --- four inputs ------------------------------------------------------------------------------------------------


def judge_tool_registration(traces: dict[str, Trace]) -> Finding:
    table = common.inputs_table(traces)
    (base_m, base_t), (tool_m, tool_t) = table["base"], table["tool"]
    holds = tool_t == [*base_t, "lookup"] and tool_m == base_m
    return Finding(
        holds,
        f"with the extra tool request #1 declares {tool_t} (without: {base_t}); messages unchanged: {tool_m == base_m}",
    )


def judge_neither_changes_other(traces: dict[str, Trace]) -> Finding:
    table = common.inputs_table(traces)
    (base_m, base_t), (sent_m, sent_t), (tool_m, tool_t) = table["base"], table["sentence"], table["tool"]
    both_m, both_t = table["both"]
    # Each change must do something (else "changing one does nothing to the other" holds vacuously).
    sentence_acts = len(sent_m) == len(base_m) + 1
    tool_acts = len(tool_t) == len(base_t) + 1
    holds = sentence_acts and tool_acts and both_m == sent_m and both_t == tool_t
    holds = holds and sent_t == base_t and tool_m == base_m
    return Finding(
        holds,
        f"the injected sentence added {len(sent_m) - len(base_m)} message(s) and no tool ({sent_t} vs {base_t}); "
        f"the extra tool added {len(tool_t) - len(base_t)} tool(s) and no message; both together: messages equal "
        f"the sentence-only request's: {both_m == sent_m}, tools equal the tool-only request's: {both_t == tool_t}",
    )


def judge_tool_definitions_active(traces: dict[str, Trace]) -> Finding:
    table = common.inputs_table(traces)
    holds = table["base"][1] == ["bash"] and table["tool"][1] == ["bash", "lookup"]
    return Finding(holds, f"declared tools per request: base {table['base'][1]}, with lookup {table['tool'][1]}")


# --- the turn is not the run ------------------------------------------------------------------------------------


def judge_turn_versus_run(traces: dict[str, Trace]) -> Finding:
    lines = tq.listener(traces["word-count"])
    turns = len([ln for ln in lines if ln.get("type") == "turn_start"])
    requests = len(tq.requests(traces["word-count"]))
    starts = len([ln for ln in lines if ln.get("type") == "agent_start"])
    ends = len([ln for ln in lines if ln.get("type") == "agent_end"])
    holds = turns == requests == 2 and starts == ends == 1
    return Finding(holds, f"{turns} turns, {requests} model requests, inside {starts} agent_start / {ends} agent_end")


def judge_permission_sequence(traces: dict[str, Trace]) -> Finding:
    seq = common.settle_sequence(traces["settle-continue"])
    expected_tail = ["agent_end", "agent_before_settle", "agent_settled"]
    tail = [s for s in seq if s != "request"][-3:]
    acted = "agent_before_settle+continue" in seq and seq.index("agent_before_settle+continue") > seq.index("agent_end")
    holds = tail == expected_tail and acted
    return Finding(holds, f"order {seq}; a continue proposed after agent_end took effect: {acted}")


# --- queued messages --------------------------------------------------------------------------------------------


def _steering(params: Params) -> dict[str, dict[str, Any]]:
    ms = int(params.get("tool_ms", 30))
    steer = str(params.get("steer_text", "Also check the logs."))
    return {
        "steering": sc.agent(
            "ch01-steering",
            "Start the job.",
            [sc.calls(sc.call("job", {})), sc.text("Noted the steer.")],
            tools=[sc.sleep_tool("job", ms, "job finished")],
            queue=[{"when": "tool_execution_start#1", "do": "steer", "text": steer}],
        )
    }


def judge_steering(traces: dict[str, Trace]) -> Finding:
    trace = traces["steering"]
    lines = [ln for ln in tq.core(trace) if ln.get("source") in ("agent", "model")]
    steer_text = next((ln.get("text") for ln in trace if ln.get("type") == "queue"), "Also check the logs.")
    tool_end = tq.index(lines, tq.is_("tool_execution_end"))
    turn_end = tq.index(lines, tq.is_("turn_end"))
    steer_at = tq.index(lines, lambda ln: ln.get("type") == "message_start" and ln.get("text") == steer_text)
    request2 = tq.index(lines, tq.is_("request", "model", n=2))
    not_interrupted = tool_end >= 0 and not lines[tool_end].get("isError")
    holds = not_interrupted and 0 <= turn_end < steer_at < request2
    return Finding(
        holds,
        f"tool finished without error: {not_interrupted} ({lines[tool_end].get('text') if tool_end >= 0 else None!r}); "
        f"turn_end at {turn_end}, steering message at {steer_at}, request #2 at {request2}",
    )


def _follow_up(params: Params) -> dict[str, dict[str, Any]]:
    # Queued while a tool runs: pending work (the tool result's request) comes first, then the follow-up.
    with_tool = sc.word_count("app")
    with_tool["id"] = "ch01-app-follow-up-during-tool"
    with_tool["responses"].append(sc.text("Following up."))
    with_tool["queue"] = [{"when": "tool_execution_start#1", "do": "follow_up", "text": "And one more thing."}]
    return {"follow-up-app": _continuation_app(params)["follow-up-app"], "during-tool": with_tool}


def judge_follow_up(traces: dict[str, Trace]) -> Finding:
    trace = traces["follow-up-app"]
    listener = tq.listener(trace)
    source = listener[0].get("source") if listener else "session"
    lines = [ln for ln in tq.core(trace) if ln.get("source") in (source, "model")]
    text = "And one more thing."
    follow_at = tq.index(lines, lambda ln: ln.get("type") == "message_start" and ln.get("text") == text)
    stop_at = tq.index(lines, lambda ln: ln.get("type") == "message_end" and ln.get("stopReason") == "stop")
    settled = tq.index(lines, tq.is_("agent_settled", source))
    ends = tq.indexes(lines, tq.is_("agent_end", source))
    # "Resolved before the final settlement boundary": a request carries the follow-up before agent_settled.
    asked = tq.index(lines, lambda ln: tq.is_("request", "model")(ln) and tq.mentions(ln, text), max(follow_at, 0))
    holds = 0 <= stop_at < follow_at < asked < settled
    # Queued during a tool call: the tool result's request goes first; the follow-up waits for its stop reply.
    during = [ln for ln in tq.core(traces["during-tool"]) if ln.get("source") in (source, "model")]
    tool_end = tq.index(during, tq.is_("tool_execution_end"))
    answered = tq.index(during, lambda ln: ln.get("type") == "message_end" and ln.get("stopReason") == "stop")
    waited = tq.index(during, lambda ln: ln.get("type") == "message_start" and ln.get("text") == text)
    holds = holds and 0 <= tool_end < answered < waited
    return Finding(
        holds,
        f"first stop reply at {stop_at}, follow-up message at {follow_at}, the request carrying it at {asked}, "
        f"agent_end at {ends}, agent_settled at {settled}; queued during a tool call: tool ended at {tool_end}, "
        f"the stop reply to its result at {answered}, the follow-up at {waited}",
    )


def _abort(params: Params) -> dict[str, dict[str, Any]]:
    return {
        "abort": sc.agent(
            "ch01-abort-queued",
            ["Start the long job.", "Carry on."],
            [sc.calls(sc.call("job", {})), sc.text("Back."), sc.text("Still here."), sc.text("And here.")],
            tools=[sc.sleep_tool("job", int(params.get("abort_tool_ms", 5000)), "never")],
            queue=[
                {"when": "tool_execution_start#1", "do": "steer", "text": "Queued steer."},
                {"when": "tool_execution_start#1", "do": "follow_up", "text": "Queued follow-up."},
                {"when": "tool_execution_start#1", "do": "abort"},
            ],
        )
    }


def judge_abort_keeps_queued(traces: dict[str, Trace]) -> Finding:
    trace = traces["abort"]
    lines = [ln for ln in trace if ln.get("source") in ("agent", "model", "driver") and not ln.get("stream")]
    abort_at = tq.index(lines, lambda ln: ln.get("source") == "driver" and ln.get("do") == "abort")
    first_end = tq.index(lines, tq.is_("agent_end"), max(abort_at, 0))
    if abort_at < 0 or first_end < 0:
        return Finding(False, f"no abort ({abort_at}) or no agent_end after it ({first_end})")
    stops = [ln.get("stopReason") for ln in lines[abort_at:first_end] if ln.get("type") == "message_end"]
    stops = [stop for stop in stops if stop is not None]
    requests_after_abort = tq.requests(lines[abort_at:first_end])
    later = tq.requests(lines[first_end:])
    where: dict[str, str] = {}
    for text in ("Queued steer.", "Queued follow-up."):
        in_run = any(ln.get("type") == "message_start" and ln.get("text") == text for ln in lines[abort_at:first_end])
        reached = any(tq.mentions(r, text) for r in later)
        where[text] = ("added to the aborted run's transcript; " if in_run else "") + (
            "reached a later request" if reached else "never reached the model"
        )
    kept = all(value.endswith("reached a later request") for value in where.values())
    # "Stops the current run": the run ends (agent_end) without asking the provider again; Pi names the last
    # reply's stop reason differently across releases (aborted on 1.6.0, error on 1.0.3), so it is evidence only.
    holds = not requests_after_abort and kept
    return Finding(
        holds,
        f"after the abort the run ended with no further provider request ({len(requests_after_abort)}); last stop "
        f"reason {stops[-1] if stops else None!r}; queued messages: {where}",
    )


# --- the example ------------------------------------------------------------------------------------------------


def example_lines(trace: Trace) -> list[str]:
    """What chapter 01's program prints, computed from the trace exactly as its subscriber does."""
    import json

    out = []
    for line in tq.listener(trace):
        if line.get("type") == "tool_execution_end":
            out.append(f"tool: {line.get('toolName')} {json.dumps(line.get('details'), separators=(',', ':'))}")
        if line.get("type") == "message_end" and line.get("role") == "assistant":
            out.append(f"stop: {line.get('stopReason')}")
    return out


def judge_three_lines(traces: dict[str, Trace]) -> Finding:
    printed, book = example_lines(traces["word-count"]), printed_output()
    return Finding(printed == book, "printed " + " | ".join(printed), "book: " + " | ".join(book))


PORT = (
    "the stand-in's port of the program (scenario ch01-word-count-agent on pinb's Python agent core), not the book's "
    "TypeScript program, which only the pi backend runs"
)


def judge_port_three_lines(traces: dict[str, Trace]) -> Finding:
    finding = judge_three_lines(traces)
    return Finding(finding.holds, f"{PORT}: {finding.evidence}", finding.detail)


# The book's program itself, run verbatim by Node (pi backend): judged from a `pinb.scenario.reference.BookExampleRun`.

#: Node's messages when it refuses a .ts file or its type syntax: Node did not execute the TypeScript itself.
TS_REFUSED = (
    "ERR_UNKNOWN_FILE_EXTENSION",
    'Unknown file extension ".ts"',
    "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX",
    "ERR_INVALID_TYPESCRIPT_SYNTAX",
    "ERR_NO_TYPESCRIPT",
)
#: Failures that come after Node has parsed the file: resolving or linking its imports.
AT_IMPORT = ("does not provide an export named", "ERR_MODULE_NOT_FOUND", "Cannot find package", "Cannot find module")
MIN_NODE = (22, 19)


def _ran_on(run: Any) -> str:
    core = run.packages.get("@earendil-works/pi-agent-core", "?")
    ai = run.packages.get("@earendil-works/pi-ai", "?")
    return f"Node {run.node} with pi-agent-core {core} and pi-ai {ai}"


def _error_line(run: Any) -> str:
    """The one line of stderr that names the error (else the first line), with where it points when Node says."""
    head = list(run.stderr_head)
    error = next((ln.strip() for ln in head if ln.lstrip().split(":")[0].endswith("Error")), None)
    error = error or (head[0].strip() if head else "no output on stderr")
    where = next((ln.rsplit("/", 1)[-1] for ln in head[:1] if ".ts:" in ln), "")
    return f"{error} (at {where})" if where else error


def _failure(run: Any) -> str:
    if run.timed_out:
        return f"on Pi {run.pi_version} the book's program did not finish: {_error_line(run)}"
    stage = "fails at import" if any(m in ln for ln in run.stderr_head for m in AT_IMPORT) else "fails"
    printed = " | ".join(run.stdout.splitlines()) or "nothing"
    return (
        f"on Pi {run.pi_version} the book's program {stage}: {_error_line(run)}; exit code {run.exit_code}, printed "
        f"{printed} ({_ran_on(run)})"
    )


def _printed_book_output(run: Any) -> bool:
    return run.exit_code == 0 and run.stdout.splitlines() == printed_output()


def judge_book_three_lines(run: Any) -> Finding:
    detail = "book: " + " | ".join(printed_output()) + f"; command `{' '.join(run.command)}`, run {run.ran_at}"
    if run.exit_code != 0:
        return Finding(False, _failure(run), detail)
    printed = " | ".join(run.stdout.splitlines()) or "nothing"
    return Finding(
        _printed_book_output(run),
        f"the book's program, verbatim, printed {printed} (exit code 0; {_ran_on(run)})",
        detail,
    )


def judge_book_runs_on_pinned(run: Any) -> Finding:
    detail = (
        "1.0.4, the book's pin, was not on the npm registry when pinb last checked (pi-01.packages.pinned-release); "
        "the pi backend runs the program on the nearest release there (1.0.3), on 1.6.0, and on 1.0.4 from a local "
        f"package source (pinb reference install --from); packages {run.packages}"
    )
    if run.exit_code != 0:
        return Finding(False, _failure(run), detail)
    printed = " | ".join(run.stdout.splitlines()) or "nothing"
    return Finding(
        _printed_book_output(run),
        f"the book's program ran unchanged on {_ran_on(run)} and printed {printed}",
        detail,
    )


def _node_at_least(version: str, minimum: tuple[int, int]) -> bool:
    parts = version.lstrip("v").split(".")
    try:
        return (int(parts[0]), int(parts[1])) >= minimum
    except (IndexError, ValueError):
        return False


def judge_node_runs_typescript(run: Any) -> Finding:
    node_ok = _node_at_least(run.node, MIN_NODE)
    plain = len(run.command) == 2 and run.command[1].endswith(".ts")
    refused = next((m for m in TS_REFUSED if any(m in ln for ln in run.stderr_head)), None)
    after_parse = run.exit_code == 0 or any(m in ln for ln in run.stderr_head for m in AT_IMPORT)
    holds = node_ok and plain and refused is None and after_parse
    how = f"`{' '.join(run.command)}` with Node {run.node} (no flag, no loader, no compile step)"
    if refused is not None:
        observed = f"Node refused the TypeScript: {_error_line(run)}"
    elif run.exit_code == 0:
        observed = "Node executed the .ts file directly; it ran to exit code 0"
    elif after_parse:
        observed = (
            "Node parsed the .ts file and stripped its types itself; the program then failed resolving its "
            f"imports, after parsing, on Pi {run.pi_version}: {_error_line(run)}"
        )
    else:
        observed = f"the run failed before it showed Node executing the TypeScript: {_error_line(run)}"
    return Finding(
        holds,
        f"{how}: {observed}",
        "checked with the reference Node; 'from the examples/ folder beside this book' is the book's own layout",
    )


def judge_core_runs_alone(traces: dict[str, Trace]) -> Finding:
    trace = traces["word-count"]
    meta = next((ln for ln in trace if ln.get("source") == "meta"), {})
    sources = sorted({str(ln.get("source")) for ln in tq.core(trace)})
    ended = bool(tq.events(trace, "agent_end"))
    # It ran: the loop asked the (scripted, provider-neutral) model, executed the call and answered.
    requests = len(tq.requests(trace))
    ran_tool = bool(tq.events(trace, "tool_execution_end"))
    answers = [ln.get("stopReason") for ln in tq.assistant_ends(trace)]
    holds = meta.get("layer") == "agent" and set(sources) <= {"agent", "model"} and ended
    holds = holds and requests >= 1 and ran_tool and answers[-1:] == ["stop"]
    return Finding(
        holds,
        f"events came from {sources} only (no session or extension lines); {requests} model request(s) to the "
        f"scripted provider, a tool executed: {ran_tool}, replies {answers}, run completed: {ended}",
    )


def judge_tool_shape(traces: dict[str, Trace]) -> Finding:
    end = next(iter(tq.events(traces["word-count"], "tool_execution_end")), None)
    if end is None:
        return Finding(False, "no tool_execution_end")
    holds = end.get("text") == "4" and end.get("details") == {"words": 4}
    return Finding(holds, f"tool result content text {end.get('text')!r}, details {end.get('details')}")


# --- the agent-core seams (scenario hooks: pinb's extension of the format) -----------------------------------


def _hooked(id_: str, sentence: str, hooks: dict[str, Any] | None) -> dict[str, Any]:
    scenario = sc.word_count("agent", sentence)
    scenario["id"] = id_
    if hooks is not None:
        scenario["hooks"] = hooks
    return scenario


def _prepare_request(params: Params) -> dict[str, dict[str, Any]]:
    message = str(params.get("hook_error", "policy says no"))
    record = {"prepare_request": {"kind": "record"}}

    def throw(at: int) -> dict[str, Any]:
        return {"prepare_request": {"kind": "throw", "message": message, "at": at}}

    return {
        "hook-returns": _hooked("ch01-seam-prepare-request-returns", "two words", record),
        "hook-throws-first": _hooked("ch01-seam-prepare-request-throws-first", "two words", throw(1)),
        "hook-throws-second": _hooked("ch01-seam-prepare-request-throws-second", "two words", throw(2)),
    }


def _after_throw(trace: Trace, message: str) -> str:
    """How a run whose prepareRequest threw ended: the last assistant message's stop reason and error, agent_end."""
    ends = tq.assistant_ends(tq.listener(trace))
    last = ends[-1] if ends else {}
    ended = bool(tq.events(trace, "agent_end"))
    if last.get("errorMessage") == message and ended:
        return f"ended with an assistant {last.get('stopReason')!r} carrying the hook's error"
    return f"last assistant message {last.get('stopReason')!r} / {last.get('errorMessage')!r}, agent_end: {ended}"


def judge_prepare_request_throw(traces: dict[str, Trace], params: Params) -> Finding:
    message = str(params.get("hook_error", "policy says no"))
    counts = {name: len(tq.requests(trace)) for name, trace in traces.items()}
    # The second prepareRequest runs after the tool result, before the request that would carry it.
    expected = {"hook-returns": 2, "hook-throws-first": 0, "hook-throws-second": 1}
    endings = {name: _after_throw(traces[name], message) for name in ("hook-throws-first", "hook-throws-second")}
    ended_on_error = all(text.startswith("ended with") for text in endings.values())
    holds = counts == expected and ended_on_error
    return Finding(
        holds,
        f"provider requests: hook returns → {counts['hook-returns']}, throws on its 1st call → "
        f"{counts['hook-throws-first']}, throws on its 2nd call → {counts['hook-throws-second']} (expected 2, 0, 1); "
        f"after the throw: {endings['hook-throws-second']}",
    )


MUTATED_TEXT = "one two three four five"


def _before_tool_call(params: Params) -> dict[str, dict[str, Any]]:
    mutated = str(params.get("mutated_text", MUTATED_TEXT))
    hooks = {"before_tool_call": {"kind": "mutate_args", "set": {"text": mutated}}}
    return {
        "hook-mutates": _hooked("ch01-seam-before-tool-call-mutates", "two words", hooks),
        "no-hook": _hooked("ch01-seam-before-tool-call-none", "two words", None),
    }


def judge_before_tool_call_mutation(traces: dict[str, Trace], params: Params) -> Finding:
    mutated = str(params.get("mutated_text", MUTATED_TEXT))
    seen: dict[str, tuple[Any, Any]] = {}
    for name, trace in traces.items():
        start = next(iter(tq.events(trace, "tool_execution_start")), {})
        end = next(iter(tq.events(trace, "tool_execution_end")), {})
        seen[name] = ((start.get("args") or {}).get("text"), end.get("details"))
    asked, counted = seen["hook-mutates"]
    plain_asked, plain_counted = seen["no-hook"]
    # The tool reports how many words it received: the mutated text's count, not the model's.
    holds = (
        asked == plain_asked
        and plain_counted == {"words": len(str(plain_asked).split())}
        and counted == {"words": len(mutated.split())}
        and counted != plain_counted
    )
    return Finding(
        holds,
        f"the model asked word_count for {asked!r}; with the hook setting text to {mutated!r} the tool counted "
        f"{counted}, without it {plain_counted}",
    )


#: The experiments as the notebook ran them before they were properties (kept for the book's program on the pi
#: backend, whose run the framework judges through `BookExampleExperiment`, and for comparison in the tests).
JUDGED: dict[str, Any] = {
    "loop.message-added-to-branch": ScenarioExperiment(_hello, judge_message_added),
    "loop.request-four-inputs": ScenarioExperiment(_four_inputs, judge_four_inputs),
    "inputs.table-model-settings": ScenarioExperiment(_model_settings, judge_model_settings, picture="thinking"),
    "loop.response-text-and-tool-calls": ScenarioExperiment(_text_and_call, judge_text_and_calls),
    "loop.records-executes-records": ScenarioExperiment(_word_count_agent, judge_records_executes_records),
    "loop.continuation-test": ScenarioExperiment(_continuation, judge_continuation_test),
    "loop.turn-shape": ScenarioExperiment(_parallel, judge_turn_shape, picture="two-tools"),
    "loop.continuation-explicit": ScenarioExperiment(_continuation_app, judge_continuation_explicit),
    "loop.wider-run": ScenarioExperiment(_continuation_app, judge_continuation_explicit, "settle-continue"),
    "inputs.branch-injection": ScenarioExperiment(
        common.four_inputs, common.judge_branch_injection, picture="sentence"
    ),
    "inputs.tool-registration": ScenarioExperiment(common.four_inputs, judge_tool_registration, picture="tool"),
    "inputs.neither-changes-other": ScenarioExperiment(common.four_inputs, judge_neither_changes_other, picture="both"),
    "context.tool-definitions-active": ScenarioExperiment(common.four_inputs, judge_tool_definitions_active),
    "context.extensions-add-instructions": ScenarioExperiment(
        common.four_inputs, common.judge_branch_injection, "sentence"
    ),
    "run.turn-versus-run": ScenarioExperiment(_word_count_agent, judge_turn_versus_run),
    "run.agent-end-not-the-end": ScenarioExperiment(common.after_agent_end, common.judge_agent_end_not_the_end),
    "settle.before-settle-actionable": ScenarioExperiment(common.settle, common.judge_before_settle_actionable),
    "settle.settled-final": ScenarioExperiment(common.settle, common.judge_settled_final),
    "settle.permission-sequence": ScenarioExperiment(common.settle, judge_permission_sequence),
    "queue.steering-after-turn": ScenarioExperiment(_steering, judge_steering),
    "queue.follow-up-after-pending-work": ScenarioExperiment(_follow_up, judge_follow_up),
    "queue.abort-keeps-queued": ScenarioExperiment(_abort, judge_abort_keeps_queued),
    "packages.core-runs-alone": ScenarioExperiment(_word_count_agent, judge_core_runs_alone),
    "seam.prepare-request-throw-stops": ScenarioExperiment(
        _prepare_request, judge_prepare_request_throw, picture="hook-throws-second"
    ),
    "seam.before-tool-call-mutation": ScenarioExperiment(_before_tool_call, judge_before_tool_call_mutation),
    "example.three-lines": BookExampleExperiment(
        NAME, program, judge_book_three_lines, ScenarioExperiment(_word_count_agent, judge_port_three_lines)
    ),
    "example.node-runs-typescript": BookExampleExperiment(NAME, program, judge_node_runs_typescript),
    "example.tool-shape": ScenarioExperiment(_word_count_agent, judge_tool_shape),
    "example.runs-on-pinned-packages": BookExampleExperiment(NAME, program, judge_book_runs_on_pinned),
}
JUDGED.update(assembly.EXPERIMENTS)
JUDGED.update({name: PackageExperiment(judge, packages.load_facts) for name, judge in packages.JUDGES.items()})


def record_facts(version: str) -> Path:
    """`pinb claims facts`: read the package facts of Pi `version` live and write their snapshot (committed)."""
    from pinb.chapters.ch01 import package_facts

    package_facts.record_package_facts(version)
    return package_facts.facts_path(version)


def _experiments() -> dict[str, Any]:
    """Every claim's experiment: its property (package claims with the facts loader), and the book's program as
    the framework runs it on the pi backend (its property form is `props_packages.PROGRAM_PROPERTIES`; the
    stand-in port's is `props_loop.THREE_LINES_PORT`)."""
    from pinb.chapters.ch01.properties import FACT_PROPERTIES, PROGRAM_PROPERTIES, SCENARIO_PROPERTIES

    found: dict[str, Any] = {name: PropertyExperiment(prop) for name, prop in SCENARIO_PROPERTIES.items()}
    found.update({name: PropertyExperiment(prop, packages.load_facts) for name, prop in FACT_PROPERTIES.items()})
    found.update({name: JUDGED[name] for name in PROGRAM_PROPERTIES})
    return found


def __getattr__(name: str) -> Any:
    # EXPERIMENTS is built on first use: the property modules import this module's scenario builders.
    if name == "EXPERIMENTS":
        globals()["EXPERIMENTS"] = _experiments()
        return globals()["EXPERIMENTS"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
