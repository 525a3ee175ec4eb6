"""Chapter 16's experiments that run as scenarios (both backends): dispatch rules, run shape, boundaries, the guard.

Each judge is a pure function of the traces; none can pass without the trace showing what the chapter says.
"""

from __future__ import annotations

from typing import Any

from pinb.app.guard import guard_verdict
from pinb.chapters import common, tq
from pinb.chapters import scenarios as sc
from pinb.chapters.ch16.guard import EVASION_CORPUS, book_decision, book_patterns, guard_extension, pattern_sources
from pinb.chapters.experiments import Finding, Params, Trace

BASH_OUTPUT = "pushed"


# --- the guard --------------------------------------------------------------------------------------------------


def _guard_scenario(name: str, command: str, ui: dict[str, Any]) -> dict[str, Any]:
    return sc.app(
        f"ch16-guard-{name}",
        "Push my branch.",
        [sc.calls(sc.call("bash", {"command": command})), sc.text("Done.")],
        tools=[sc.bash_tool(stdout=BASH_OUTPUT)],
        # A second extension watches the dialogs the guard opens (ui_prompt_start names the dialog's title).
        extensions=[guard_extension(), sc.extension("ui-watch", sc.handler("ui_prompt_start", "watch"))],
        ui=ui,
    )


def _guard(params: Params) -> dict[str, dict[str, Any]]:
    command = "git push --force origin main"  # the book's command; the guard tester takes the reader's
    return {
        name: _guard_scenario(name, command, ui)
        for name, ui in (
            ("no-ui", {"has_ui": False, "confirm": False}),
            ("ui-yes", {"has_ui": True, "confirm": True}),
            ("ui-no", {"has_ui": True, "confirm": False}),
        )
    }


def long_force_push(cut: int = 200) -> str:
    """A force push whose `JSON.stringify({command})` runs past `cut` UTF-16 code units with an emoji across the
    cut (its first unit is the last one kept): `raw.slice(0, cut)` keeps half of it, a code-point slice all of it."""
    head = "git push --force origin main -o merge_request.description="
    words = "Ship-the-tested-release-over-the-stale-branch-after-review-"
    prefix_units = cut - 1 - len('{"command":"')
    filler = (words * (prefix_units // len(words) + 1))[: prefix_units - len(head)]
    return f"{head}{filler}\N{ROCKET}-done"


def _guard_dialogs(params: Params) -> dict[str, dict[str, Any]]:
    out = _guard(params)
    out["ui-long"] = _guard_scenario("ui-long", long_force_push(), {"has_ui": True, "confirm": False})
    return out


def _bash_result(trace: Trace) -> dict[str, Any]:
    ends = tq.events(trace, "tool_execution_end")
    ends = [e for e in ends if e.get("source") == "session"] or ends
    return dict(ends[0]) if ends else {}


def judge_blocks_before_body(traces: dict[str, Trace]) -> Finding:
    result = _bash_result(traces["no-ui"])
    blocked = bool(result.get("isError")) and str(result.get("text", "")).startswith("Guard blocked")
    body_ran = result.get("text") == BASH_OUTPUT
    return Finding(
        blocked and not body_ran,
        f"tool result isError={result.get('isError')} text={result.get('text')!r} (the body would answer "
        f"{BASH_OUTPUT!r})",
    )


def judge_blocks_force_push(traces: dict[str, Trace]) -> Finding:
    result = _bash_result(traces["no-ui"])
    guard = tq.ext_lines(traces["no-ui"], "tool_call")
    returned = guard[0].get("result") if guard else None
    reason = f"Guard blocked: {book_decision('git push --force origin main')}"  # the chapter's own regexes decide
    holds = result.get("text") == reason and result.get("isError") is True
    holds = holds and returned == {"block": True, "reason": reason}
    return Finding(holds, f"without a UI the handler returned {returned}; the model saw {result.get('text')!r}")


def _patterns(params: Params) -> dict[str, dict[str, Any]]:
    # Every shell command of the corpus, including the spellings the book's regexes let through (case, tabs, ...).
    commands = [case.command for case in EVASION_CORPUS if case.tool_name == "bash"]
    # Two more where JavaScript's regexes differ from Python's: \b between "é" and "g" (ASCII word characters
    # only), and \s against U+0085 (not JavaScript whitespace).
    commands += ["égit push --force", "git\u0085push -f"]
    return {
        "patterns": sc.app(
            "ch16-guard-patterns",
            "Tidy up.",
            [sc.calls(*(sc.call("bash", {"command": c}) for c in commands)), sc.text("Done.")],
            tools=[sc.bash_tool(stdout=BASH_OUTPUT)],
            extensions=[guard_extension()],
        )
    }


def _results_by_command(trace: Trace) -> dict[str, dict[str, Any]]:
    """tool_execution_end per command (the session listener's), via the start line's args."""
    starts = {}
    for line in tq.listener(trace):
        if line.get("type") == "tool_execution_start":
            args = line.get("args") or {}
            starts[line.get("toolCallId")] = (line.get("toolName"), args.get("command", args.get("content")))
    out: dict[str, dict[str, Any]] = {}
    for line in tq.listener(trace):
        if line.get("type") == "tool_execution_end" and line.get("toolCallId") in starts:
            tool, command = starts[line["toolCallId"]]
            out[f"{tool}:{command}"] = dict(line)
    return out


def judge_patterns(traces: dict[str, Trace]) -> Finding:
    """Per command: the run blocks exactly what the chapter's regexes block (JavaScript semantics), naming the
    pattern that matched, and agrees with the verdicts recorded from Node running the book's handler."""
    results = _results_by_command(traces["patterns"])
    wrong: list[str] = []
    blocked = allowed = 0
    for case in (c for c in EVASION_CORPUS if c.tool_name == "bash"):
        hit = book_decision(case.command)
        expected = f"Guard blocked: {hit}" if hit is not None else BASH_OUTPUT
        seen = results.get(f"bash:{case.command}", {}).get("text")
        if seen != expected or (hit is not None) != case.js_blocked:
            wrong.append(f"{case.command!r} → {seen!r}")
        elif hit is None:
            allowed += 1
        else:
            blocked += 1
    patterns = len(book_patterns())
    return Finding(
        not wrong and patterns > 0,
        f"{blocked + allowed + len(wrong)} shell commands: {blocked} blocked naming the book's pattern, {allowed} let "
        f"through, as the chapter's {patterns} regexes decide in JavaScript; {len(wrong)} decided otherwise"
        + (f": {wrong[:3]}" if wrong else ""),
    )


def _tool_filter(params: Params) -> dict[str, dict[str, Any]]:
    command = "git push --force origin main"
    return {
        "tools": sc.app(
            "ch16-guard-tool-filter",
            "Push.",
            [sc.calls(*(sc.call(t, {"command": command}) for t in ("bash", "powershell", "shell"))), sc.text("ok")],
            tools=[sc.bash_tool("bash", BASH_OUTPUT), sc.bash_tool("powershell", BASH_OUTPUT), sc.bash_tool("shell")],
            extensions=[guard_extension()],
        )
    }


def judge_tool_filter(traces: dict[str, Trace]) -> Finding:
    results = _results_by_command(traces["tools"])
    verdict = {key.split(":")[0]: bool(r.get("isError")) for key, r in results.items()}
    holds = verdict == {"bash": True, "powershell": True, "shell": False}
    return Finding(holds, f"blocked per tool for the same force push: {verdict}")


def _reads_and_mutation(params: Params) -> dict[str, dict[str, Any]]:
    harmless = sc.app(
        "ch16-guard-reads",
        "Check.",
        [sc.calls(sc.call("bash", {"command": "git status"})), sc.text("ok")],
        tools=[sc.bash_tool(stdout=BASH_OUTPUT)],
        extensions=[guard_extension(), sc.extension("after", sc.handler("tool_call", "after"))],
    )
    mutated = sc.app(
        "ch16-guard-after-mutation",
        "Check.",
        [sc.calls(sc.call("bash", {"command": "git status"})), sc.text("ok")],
        tools=[sc.bash_tool(stdout=BASH_OUTPUT)],
        extensions=[
            sc.extension(
                "rewriter", sc.handler("tool_call", "rewrite", "mutate_input", set={"command": "git push -f"})
            ),
            guard_extension(),
        ],
    )
    return {"reads": harmless, "mutated": mutated}


def judge_reads_not_mutates(traces: dict[str, Trace]) -> Finding:
    after = [ln for ln in tq.ext_lines(traces["reads"], "tool_call") if ln.get("handler") == "after"]
    seen_after = after[0].get("input") if after else None
    guard_seen = [ln for ln in tq.ext_lines(traces["mutated"], "tool_call") if ln.get("handler") == "guard"]
    guard_input = guard_seen[0].get("input") if guard_seen else None
    mutated_result = _bash_result(traces["mutated"])
    holds = seen_after == {"command": "git status"}
    holds = holds and guard_input == {"command": "git push -f"} and mutated_result.get("isError") is True
    return Finding(
        holds,
        f"a handler after the guard saw {seen_after}; after another handler mutated event.input the guard saw "
        f"{guard_input} and the call ended isError={mutated_result.get('isError')}",
    )


def _corpus(params: Params) -> dict[str, dict[str, Any]]:
    blocks = [sc.call(case.tool_name, case.input) for case in EVASION_CORPUS]
    return {
        "corpus": sc.app(
            "ch16-guard-evasions",
            "Clean up the repository.",
            [sc.calls(*blocks), sc.text("Done.")],
            tools=[sc.bash_tool(stdout=BASH_OUTPUT), {"name": "write", "behavior": {"kind": "return", "text": "ok"}}],
            extensions=[guard_extension()],
        )
    }


def corpus_table(trace: Trace) -> list[dict[str, Any]]:
    """One row per corpus case: what it destroys, JavaScript's verdict, the stand-in guard's, and the run's."""
    ends = [ln for ln in tq.listener(trace) if ln.get("type") == "tool_execution_end"]
    starts = [ln for ln in tq.listener(trace) if ln.get("type") == "tool_execution_start"]
    order = {ln.get("toolCallId"): i for i, ln in enumerate(starts)}
    by_index = {order.get(ln.get("toolCallId"), -1): ln for ln in ends}
    rows = []
    for i, case in enumerate(EVASION_CORPUS):
        end = by_index.get(i)
        observed = None if end is None else bool(str(end.get("text", "")).startswith("Guard blocked"))
        rows.append(
            {
                "command": case.command,
                "tool": case.tool_name,
                "destroys": case.destroys,
                "js_blocked": case.js_blocked,
                "python_blocked": guard_verdict(case.tool_name, case.input, pattern_sources()).blocked,
                "run_blocked": observed,
                "note": case.note,
            }
        )
    return rows


def judge_not_unconditional(traces: dict[str, Trace]) -> Finding:
    rows = corpus_table(traces["corpus"])
    missing = [r["command"] for r in rows if r["run_blocked"] is None]
    if missing:
        return Finding(False, f"{len(missing)} corpus calls have no tool result in the trace: {missing[:3]}")
    destructive = [r for r in rows if not r["destroys"].startswith("nothing")]
    blocked = [r for r in destructive if r["run_blocked"]]
    # Through the inspected tool itself: shell commands the book's own regexes do not match, and the run let pass.
    shell_through = [
        r for r in destructive if r["tool"] == "bash" and not r["run_blocked"] and book_decision(r["command"]) is None
    ]
    other_tools = [r for r in destructive if r["tool"] != "bash" and not r["run_blocked"]]
    book_example = next((r for r in rows if r["command"] == "git push --force" and r["tool"] == "bash"), None)
    false_positive = [r for r in rows if r["destroys"].startswith("nothing") and r["run_blocked"]]
    off_book = [
        r["command"]
        for r in rows
        if r["tool"] == "bash" and r["run_blocked"] != (book_decision(r["command"]) is not None)
    ]
    holds = bool(shell_through) and bool(book_example and book_example["run_blocked"]) and not off_book
    return Finding(
        holds,
        f"of {len(destructive)} commands that force-push or destroy work, the guard blocked {len(blocked)}; "
        f"{len(shell_through)} bash commands the book's regexes do not match went through (e.g. "
        f"{[r['command'] for r in shell_through[:3]]}), {len(other_tools)} through another tool; the book's "
        f"`git push --force` blocked: {bool(book_example and book_example['run_blocked'])}; false positives "
        f"{len(false_positive)}; bash verdicts differing from the book's regexes: {off_book[:3] or 'none'}",
        f"run verdicts differing from JavaScript's recorded verdicts: "
        f"{[r['command'] for r in rows if r['run_blocked'] != r['js_blocked']] or 'none'}",
    )


# --- dispatch ---------------------------------------------------------------------------------------------------


def _unsubscribe(params: Params) -> dict[str, dict[str, Any]]:
    return {
        "unsubscribe": sc.app(
            "ch16-unsubscribe",
            "Two steps.",
            [sc.calls(sc.call("step", {"n": 1})), sc.calls(sc.call("step", {"n": 2})), sc.text("Done.")],
            tools=[{"name": "step", "behavior": {"kind": "return", "text": "stepped"}}],
            extensions=[
                sc.extension("remover", sc.handler("tool_execution_start", "remover", "unsubscribe", target="target")),
                sc.extension("observer", sc.handler("tool_execution_start", "target")),
            ],
        )
    }


def _target_calls(trace: Trace) -> list[str | None]:
    return [ln.get("toolCallId") for ln in tq.ext_lines(trace, "tool_execution_start") if ln.get("handler") == "target"]


def judge_on_returns_unsubscribe(traces: dict[str, Trace]) -> Finding:
    starts = len(tq.events(traces["unsubscribe"], "tool_execution_start", "session"))
    target = _target_calls(traces["unsubscribe"])
    # The registration must have been live (it ran for call#1) for its absence at call#2 to mean anything.
    holds = starts == 2 and "call#1" in target and "call#2" not in target
    return Finding(
        holds, f"{starts} tool_execution_start events; the unsubscribed handler ran for {target or 'neither'}"
    )


def judge_unsubscribe_not_in_progress(traces: dict[str, Trace]) -> Finding:
    target = _target_calls(traces["unsubscribe"])
    return Finding(
        "call#1" in target,
        f"unsubscribed during the dispatch of call#1's event; the target still ran for {target or 'no event'}",
    )


def _notify_transform(params: Params) -> dict[str, dict[str, Any]]:
    return {
        "transform": sc.app(
            "ch16-notify-transform",
            "hello",
            [
                sc.calls(sc.call("bash", {"command": "ls"}), sc.call("bash", {"command": "git reset --hard"})),
                sc.text(""),
            ],
            tools=[sc.bash_tool(stdout="a b c")],
            extensions=[
                sc.extension(
                    "shaper",
                    sc.handler("agent_start", "notice"),
                    sc.handler("input", "shout", "transform_input", text="{text}!"),
                    sc.handler("tool_result", "redact", "replace_result", text="[redacted]"),
                ),
                guard_extension(),
            ],
        )
    }


def judge_notify_or_transform(traces: dict[str, Trace]) -> Finding:
    trace = traces["transform"]
    first = tq.requests(trace)[0] if tq.requests(trace) else {}
    user_texts = [m.get("text") for m in first.get("messages", ()) if m.get("role") == "user"]
    results = {k.split(":", 1)[1]: r.get("text") for k, r in _results_by_command(trace).items()}
    notice = [ln.get("result") for ln in tq.ext_lines(trace, "agent_start")]
    transformed = user_texts == ["hello!"]
    replaced = results.get("ls") == "[redacted]"
    cancelled = str(results.get("git reset --hard", "")).startswith("Guard blocked")
    holds = transformed and replaced and cancelled and notice == [None]
    return Finding(
        holds,
        f"input transformed: {user_texts}; tool_result replaced: {results.get('ls')!r}; tool_call cancelled: "
        f"{results.get('git reset --hard')!r}; agent_start handler returned {notice}",
    )


def _throwing(params: Params) -> dict[str, dict[str, Any]]:
    return {
        "throw": sc.app(
            "ch16-throwing-handlers",
            "Go.",
            [sc.calls(sc.call("bash", {"command": "ls"})), sc.text("Carried on.")],
            tools=[sc.bash_tool(stdout=BASH_OUTPUT)],
            extensions=[
                sc.extension(
                    "faulty",
                    sc.handler("tool_call", "boom", "throw", message="tool_call handler failed"),
                    sc.handler("turn_start", "noisy", "throw", message="turn_start handler failed"),
                )
            ],
        )
    }


def judge_failing_tool_call(traces: dict[str, Trace]) -> Finding:
    trace = traces["throw"]
    result = _bash_result(trace)
    requests = len(tq.requests(trace))
    turn_start_errors = [ln for ln in tq.ext_lines(trace, "turn_start") if "error" in ln]
    blocked = result.get("isError") is True and result.get("text") != BASH_OUTPUT
    carried_on = requests == 2 and len(turn_start_errors) >= 1
    return Finding(
        blocked and carried_on,
        f"throwing tool_call handler → tool result isError={result.get('isError')} {result.get('text')!r}; "
        f"throwing turn_start handler ({len(turn_start_errors)} errors) → the run went on to {requests} requests",
    )


# --- run shape and boundaries -----------------------------------------------------------------------------------


def _run_shape(params: Params) -> dict[str, dict[str, Any]]:
    scenario = sc.run_shape()
    # The diagram also draws message_update: a handler on it too (its lines are stream lines).
    scenario["extensions"][0]["handlers"].append(sc.handler("message_update", "on-message_update"))
    return {"shape": scenario}


def _streaming(trace: Trace) -> tuple[int, int, bool]:
    """message_update handler calls, messages that streamed, and whether every update fell inside a message."""
    inside = streamed = updates = 0
    within = True
    got = False
    for line in trace:
        kind = line.get("type")
        if line.get("source") != "ext" or kind not in ("message_start", "message_update", "message_end"):
            continue
        if kind == "message_start":
            inside, got = 1, False
        elif kind == "message_update":
            updates += 1
            within = within and bool(inside)
            got = True
        else:
            streamed += 1 if inside and got else 0
            inside = 0
    return updates, streamed, within


def _ext_types(trace: Trace) -> list[str]:
    return [str(ln.get("type")) for ln in tq.ext_lines(trace)]


def judge_run_shape(traces: dict[str, Trace]) -> Finding:
    seen = _ext_types(traces["shape"])
    positions = {name: (seen.index(name) if name in seen else -1) for name in ("input", "before_agent_start")}
    end = seen.index("agent_end") if "agent_end" in seen else -1
    middle = set(seen[max(positions.values()) + 1 : end]) if end >= 0 else set()
    holds = 0 <= positions["input"] < positions["before_agent_start"] < end
    holds = holds and {"message_start", "message_end", "tool_call", "tool_result"} <= middle
    return Finding(holds, f"handler events in order: {seen}")


def diagram_violations(seen: list[str]) -> list[str]:
    """Where an ext event sequence departs from chapter 16's sequence diagram (empty when it follows it)."""
    problems: list[str] = []
    head = ["input", "before_agent_start", "agent_start"]
    if seen[:3] != head:
        problems.append(f"starts {seen[:3]}, not {head}")
    tail = ["agent_end", "agent_before_settle", "agent_settled"]
    if seen[-3:] != tail:
        problems.append(f"ends {seen[-3:]}, not {tail}")
    body = seen[3:-3]
    in_turn = False
    open_calls = 0
    turns = 0
    for kind in body:
        if kind == "turn_start":
            if in_turn:
                problems.append("turn_start inside a turn")
            in_turn, turns = True, turns + 1
        elif kind == "turn_end":
            if not in_turn:
                problems.append("turn_end outside a turn")
            if open_calls:
                problems.append("turn_end with a tool_call not followed by its tool_result")
            in_turn = False
        elif kind in ("tool_call", "tool_result"):
            if not in_turn:
                problems.append(f"{kind} outside a turn")
            open_calls += 1 if kind == "tool_call" else -1
            if open_calls < 0:
                problems.append("tool_result before its tool_call")
        elif kind not in ("message_start", "message_end"):
            problems.append(f"unexpected {kind} inside the run")
    if turns == 0:
        problems.append("no turn")
    return problems


def judge_sequence_diagram(traces: dict[str, Trace]) -> Finding:
    seen = _ext_types(traces["shape"])
    problems = diagram_violations(seen)
    updates, streamed, within = _streaming(traces["shape"])
    replies = len(tq.assistant_ends(traces["shape"]))
    if not (updates and within and streamed >= replies):
        problems.append(
            f"message_update: {updates} handler calls, {streamed} of {replies} replies streamed between their "
            f"message_start and message_end, all inside a message: {within}"
        )
    return Finding(
        not problems,
        "; ".join(problems)
        or f"handler events follow the diagram: {' → '.join(seen)}; message_update reached the handler {updates} "
        f"times, inside each of the {replies} replies",
    )


def _settle(params: Params) -> dict[str, dict[str, Any]]:
    return common.settle(params)


def judge_continuation_branch(traces: dict[str, Trace]) -> Finding:
    seq = common.settle_sequence(traces["settle-continue"])
    settle_calls = [
        ln for ln in tq.ext_lines(traces["settle-continue"], "agent_before_settle") if ln.get("handler") == "continue"
    ]
    continued = [bool((ln.get("result") or {}).get("continue")) for ln in settle_calls]
    first = seq.index("agent_before_settle+continue") if "agent_before_settle+continue" in seq else -1
    holds = continued == [True, False] and first >= 0 and "request" in seq[first:] and seq[-1] == "agent_settled"
    return Finding(holds, f"agent_before_settle continue results {continued}; sequence {seq}")


def judge_settle_after_exhausted(traces: dict[str, Trace]) -> Finding:
    seq = common.settle_sequence(traces["settle-continue"])
    settled = [i for i, s in enumerate(seq) if s == "agent_settled"]
    last_request = max((i for i, s in enumerate(seq) if s == "request"), default=-1)
    holds = len(settled) == 1 and settled[0] > last_request and seq.count("agent_end") >= 2
    return Finding(holds, f"sequence {seq}")


def _concurrent(params: Params) -> dict[str, dict[str, Any]]:
    ms = int(params.get("tool_ms", 30))
    return {
        "parallel": sc.app(
            "ch16-parallel-tools",
            "Run both.",
            [sc.calls(sc.call("job_a", {}), sc.call("job_b", {})), sc.text("Both done.")],
            tools=[
                {"name": "job_a", "behavior": {"kind": "sleep", "ms": ms, "updates": ["a: started"]}},
                {"name": "job_b", "behavior": {"kind": "sleep", "ms": ms // 2, "updates": ["b: started"]}},
            ],
            settings={"tool_execution": "parallel"},
        ),
        "settle-continue": sc.settle_continue(),
    }


def interleaved_updates(trace: Trace) -> list[str]:
    """Stream lines (tool_execution_update) of one call that fall while another call is running."""
    lines = [ln for ln in trace if ln.get("source") == "session"]
    spans: dict[Any, tuple[int, int]] = {}
    for i, line in enumerate(lines):
        call = line.get("toolCallId")
        if line.get("type") == "tool_execution_start":
            spans[call] = (i, len(lines))
        elif line.get("type") == "tool_execution_end" and call in spans:
            spans[call] = (spans[call][0], i)
    return [
        f"{line.get('toolName')} update inside {other}"
        for i, line in enumerate(lines)
        if line.get("type") == "tool_execution_update"
        for other, (start, end) in spans.items()
        if other != line.get("toolCallId") and start < i < end
    ]


def judge_concurrent(traces: dict[str, Trace]) -> Finding:
    from pinb.chapters.views import max_concurrency

    lines = [ln for ln in traces["parallel"] if ln.get("source") == "session"]
    overlap = max_concurrency(lines)
    seq = common.settle_sequence(traces["settle-continue"])
    runs_before_settle = seq.count("agent_end")
    mixed = interleaved_updates(traces["parallel"])
    holds = overlap >= 2 and runs_before_settle >= 2 and seq.count("agent_settled") == 1 and bool(mixed)
    return Finding(
        holds,
        f"{overlap} tool executions open at once; stream lines of one call while another ran: {mixed or 'none'}; "
        f"{runs_before_settle} low-level runs (agent_end) before one agent_settled",
    )


def _turn_end(params: Params) -> dict[str, dict[str, Any]]:
    """A turn_end handler that appends an entry and continues on its first two turns: one ran a tool call, the
    second would have ended the run."""
    scenario = sc.settle_continue("turn_end", entry_text="Add the risks.")
    handler = scenario["extensions"][0]["handlers"][0]
    handler["action"] = {"kind": "continue_times", "times": 2, "entry": handler["action"]["entry"]}
    scenario["responses"] = [sc.calls(sc.call("bash", {"command": "ls"})), *scenario["responses"]]
    scenario["tools"] = [sc.bash_tool()]
    return {"turn-end": scenario}


def judge_turn_end_actionable(traces: dict[str, Trace]) -> Finding:
    trace = traces["turn-end"]
    requests = tq.requests(trace)
    entry_seen = len(requests) >= 2 and tq.mentions(requests[1], "Add the risks.")
    appended = [ln.get("entryType") for ln in tq.events(trace, "entry_appended")]
    holds = len(requests) == 2 and entry_seen
    return Finding(
        holds,
        f"{len(requests)} requests after a turn_end continue; entry reached request #2: {entry_seen}; "
        f"entries appended {appended}",
    )


def _both_boundaries(params: Params) -> dict[str, dict[str, Any]]:
    return {**_turn_end(params), **common.settle(params)}


def judge_both_boundaries_actionable(traces: dict[str, Trace], params: Params) -> Finding:
    """The sentence is about agent_before_settle's handler, 'alongside turn_end': both must add work."""
    turn_end = judge_turn_end_actionable(traces)
    settle = common.judge_before_settle_actionable(traces, params)
    return Finding(
        turn_end.holds and settle.holds, f"turn_end: {turn_end.evidence}; agent_before_settle: {settle.evidence}"
    )


def judge_wrong_correct(traces: dict[str, Trace]) -> Finding:
    first = common.judge_agent_end_not_the_end(traces)
    last = common.judge_settled_final(traces)
    return Finding(first.holds and last.holds, f"{first.evidence}; {last.evidence}")


# --- the events table -------------------------------------------------------------------------------------------


def _lifecycle(params: Params) -> dict[str, dict[str, Any]]:
    return {
        "lifecycle": sc.app(
            "ch16-session-lifecycle",
            "Hi.",
            [sc.text("Hello.")],
            extensions=[
                sc.extension("life", sc.handler("session_start", "start"), sc.handler("session_shutdown", "stop"))
            ],
        )
    }


def judge_session_start(traces: dict[str, Trace]) -> Finding:
    lines = tq.core(traces["lifecycle"])
    start = tq.index(lines, tq.is_("session_start", "ext"))
    run = tq.index(lines, tq.is_("agent_start"))
    reason = lines[start].get("reason") if start >= 0 else None
    holds = 0 <= start < run and reason == "startup"
    return Finding(holds, f"session_start (reason {reason!r}) at {start}, first agent_start at {run}")


def _input(params: Params) -> dict[str, dict[str, Any]]:
    def one(name: str, action: dict[str, Any]) -> dict[str, Any]:
        extension = sc.extension("gate", {"event": "input", "label": "gate", "action": action})
        return sc.app(f"ch16-input-{name}", "hello", [sc.text("Hi."), sc.text("again")], extensions=[extension])

    return {
        "continue": one("continue", {"kind": "record"}),
        "transform": _notify_transform(params)["transform"],
        "handled": one("handled", {"kind": "transform_input", "handled": True}),
    }


def judge_input(traces: dict[str, Trace]) -> Finding:
    """All three outcomes the row names: continue (unchanged), transform the text, handle it (no run at all)."""

    def user_texts(trace: Trace) -> list[Any]:
        first = tq.requests(trace)[0] if tq.requests(trace) else {}
        return [m.get("text") for m in first.get("messages", ()) if m.get("role") == "user"]

    seen = {name: [ln.get("text") for ln in tq.ext_lines(trace, "input")] for name, trace in traces.items()}
    received = {name: user_texts(trace) for name, trace in traces.items()}
    handled_runs = len(tq.events(traces["handled"], "agent_start"))
    holds = all(texts[:1] == ["hello"] for texts in seen.values())
    holds = holds and received["continue"] == ["hello"] and received["transform"] == ["hello!"]
    holds = holds and not tq.requests(traces["handled"]) and handled_runs == 0
    return Finding(
        holds,
        f"input handlers saw {seen['transform'][:1]}; the model received: continue → {received['continue']}, "
        f"transform → {received['transform']}; handled → {len(tq.requests(traces['handled']))} requests, "
        f"{handled_runs} runs started",
    )


def _settled_acts(params: Params) -> dict[str, dict[str, Any]]:
    # A handler that tries to act at agent_settled: it returns continue: true with an entry, as at the boundaries.
    scenario = sc.settle_continue()
    scenario["id"] = "ch16-settled-acts"
    act = sc.handler(
        "agent_settled",
        "act",
        "continue_once",
        entry={"type": "custom_message", "customType": "late", "content": "Too late.", "display": False},
    )
    scenario["extensions"] = [*scenario["extensions"], sc.extension("latecomer", act)]
    return {"settle-continue": scenario}


def judge_settled_notification_only(traces: dict[str, Trace]) -> Finding:
    final = common.judge_settled_final(traces)
    trace = traces["settle-continue"]
    acted = [ln.get("result") for ln in tq.ext_lines(trace, "agent_settled") if ln.get("handler") == "act"]
    late_request = any(tq.mentions(r, "Too late.") for r in tq.requests(trace))
    holds = final.holds and acted[:1] == [acted[0]] and bool(acted and (acted[0] or {}).get("continue"))
    holds = holds and not late_request
    return Finding(
        holds,
        f"{final.evidence}; a handler returned {acted[0] if acted else None} at agent_settled and the entry reached "
        f"a request: {late_request}",
    )


def _inject(params: Params) -> dict[str, dict[str, Any]]:
    inputs = common.four_inputs(params)
    return {"sentence": inputs["sentence"], "base": inputs["base"]}


def judge_before_agent_start(traces: dict[str, Trace], params: Params) -> Finding:
    finding = common.judge_branch_injection(traces, params)
    return Finding(finding.holds, "inject a message: " + finding.evidence)


def _mutate(params: Params) -> dict[str, dict[str, Any]]:
    mutate = sc.app(
        "ch16-mutate-input",
        "Count.",
        [sc.calls(sc.call("word_count", {"text": "one two"})), sc.text("ok")],
        tools=[sc.WORD_COUNT_TOOL],
        extensions=[
            sc.extension("rewriter", sc.handler("tool_call", "rewrite", "mutate_input", set={"text": "a b c d e"}))
        ],
    )
    return {"mutate": mutate, "no-ui": _guard(params)["no-ui"]}


def judge_tool_call_event(traces: dict[str, Trace]) -> Finding:
    end = next(iter(tq.events(traces["mutate"], "tool_execution_end", "session")), {})
    blocked = judge_blocks_force_push({"no-ui": traces["no-ui"]})
    holds = end.get("details") == {"words": 5} and blocked.holds
    return Finding(
        holds,
        f"after event.input was mutated the tool counted {end.get('details')} (model sent 2 words); "
        f"block: {blocked.evidence}",
    )


def _tool_result(params: Params) -> dict[str, dict[str, Any]]:
    return {
        "replace": sc.app(
            "ch16-replace-result",
            "Go.",
            [sc.calls(sc.call("bash", {"command": "ls"})), sc.text("ok")],
            tools=[sc.bash_tool(stdout="secret.txt")],
            extensions=[
                sc.extension(
                    "redactor",
                    sc.handler(
                        "tool_result", "redact", "replace_result", text="[1 file]", isError=True, details={"n": 1}
                    ),
                )
            ],
        )
    }


def judge_tool_result(traces: dict[str, Trace]) -> Finding:
    trace = traces["replace"]
    end = next(iter(tq.events(trace, "tool_execution_end", "session")), {})
    requests = tq.requests(trace)
    seen = [m for m in (requests[1].get("messages", ()) if len(requests) > 1 else ()) if m.get("role") == "toolResult"]
    holds = end.get("text") == "[1 file]" and end.get("isError") is True and end.get("details") == {"n": 1}
    holds = holds and bool(seen) and seen[0].get("text") == "[1 file]"
    return Finding(
        holds,
        f"tool_execution_end text {end.get('text')!r} isError {end.get('isError')} details {end.get('details')}; "
        f"the model saw {[(m.get('text'), m.get('isError')) for m in seen]}",
    )


def _message_end(params: Params) -> dict[str, dict[str, Any]]:
    def one(name: str, **fields: Any) -> dict[str, Any]:
        edit = sc.handler("message_end", "edit", "replace_message", text="[{text}]", **fields)
        return sc.app(
            f"ch16-replace-message{name}",
            "Go.",
            [sc.calls(sc.call("bash", {"command": "ls"}), preface="draft"), sc.text("final")],
            tools=[sc.bash_tool()],
            extensions=[sc.extension("editor", edit)],
        )

    # The second tries to turn the assistant's reply into a user message: "keeping its role" says it cannot.
    return {"replace": one(""), "role-change": one("-role-change", as_role="user")}


def judge_message_end(traces: dict[str, Trace]) -> Finding:
    def observed(trace: Trace) -> tuple[Any, Any, list[Any]]:
        ends = tq.assistant_ends(trace)
        requests = tq.requests(trace)
        seen = [
            m.get("text")
            for m in (requests[1].get("messages", ()) if len(requests) > 1 else ())
            if m.get("role") == "assistant"
        ]
        first = ends[0] if ends else {}
        return first.get("role"), first.get("text"), seen

    replaced, refused = observed(traces["replace"]), observed(traces["role-change"])
    errors = [ln.get("event") for ln in traces["role-change"] if ln.get("source") == "error"]
    holds = replaced == ("assistant", "[draft]", ["[draft]"]) and refused == ("assistant", "draft", ["draft"])
    holds = holds and "message_end" in errors
    return Finding(
        holds,
        f"a same-role replacement: finalized {replaced[0]} {replaced[1]!r}, next request carries {replaced[2]}; a "
        f"replacement claiming role user: finalized {refused[0]} {refused[1]!r}, next request carries {refused[2]}, "
        f"extension errors reported for {errors}",
    )


def __getattr__(name: str) -> Any:
    # EXPERIMENTS is built on first use: the property modules import this module's scenario builders.
    if name == "EXPERIMENTS":
        from pinb.chapters.ch16.properties import PROPERTIES
        from pinb.chapters.properties import PropertyExperiment

        globals()["EXPERIMENTS"] = {key: PropertyExperiment(prop) for key, prop in PROPERTIES.items()}
        return globals()["EXPERIMENTS"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
