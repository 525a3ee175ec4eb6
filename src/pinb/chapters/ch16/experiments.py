"""Chapter 16's hand-written scenarios (both backends: dispatch rules, run shape, boundaries, the guard), the trace
readings its properties share, and `EXPERIMENTS`, every claim's property by name (`properties.PROPERTIES`)."""

from __future__ import annotations

from typing import Any

from pinb.app.guard import guard_verdict
from pinb.chapters import common, tq
from pinb.chapters import scenarios as sc
from pinb.chapters.ch16.guard import EVASION_CORPUS, guard_extension, pattern_sources
from pinb.chapters.properties import Params, Trace

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


# --- dispatch ---------------------------------------------------------------------------------------------------


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


def _settle(params: Params) -> dict[str, dict[str, Any]]:
    return common.settle(params)


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


def _turn_end(params: Params) -> dict[str, dict[str, Any]]:
    """A turn_end handler that appends an entry and continues on its first two turns: one ran a tool call, the
    second would have ended the run."""
    scenario = sc.settle_continue("turn_end", entry_text="Add the risks.")
    handler = scenario["extensions"][0]["handlers"][0]
    handler["action"] = {"kind": "continue_times", "times": 2, "entry": handler["action"]["entry"]}
    scenario["responses"] = [sc.calls(sc.call("bash", {"command": "ls"})), *scenario["responses"]]
    scenario["tools"] = [sc.bash_tool()]
    return {"turn-end": scenario}


def _both_boundaries(params: Params) -> dict[str, dict[str, Any]]:
    return {**_turn_end(params), **common.settle(params)}


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


def _input(params: Params) -> dict[str, dict[str, Any]]:
    def one(name: str, action: dict[str, Any]) -> dict[str, Any]:
        extension = sc.extension("gate", {"event": "input", "label": "gate", "action": action})
        return sc.app(f"ch16-input-{name}", "hello", [sc.text("Hi."), sc.text("again")], extensions=[extension])

    return {
        "continue": one("continue", {"kind": "record"}),
        "transform": _notify_transform(params)["transform"],
        "handled": one("handled", {"kind": "transform_input", "handled": True}),
    }


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


def _inject(params: Params) -> dict[str, dict[str, Any]]:
    inputs = common.four_inputs(params)
    return {"sentence": inputs["sentence"], "base": inputs["base"]}


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


def __getattr__(name: str) -> Any:
    # EXPERIMENTS is built on first use: the property modules import this module's scenario builders.
    if name == "EXPERIMENTS":
        from pinb.chapters.ch16.properties import PROPERTIES
        from pinb.chapters.properties import PropertyExperiment

        globals()["EXPERIMENTS"] = {key: PropertyExperiment(prop) for key, prop in PROPERTIES.items()}
        return globals()["EXPERIMENTS"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
