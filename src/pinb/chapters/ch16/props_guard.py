"""Chapter 16's review guard as properties: what it blocks, when it asks, which tools it inspects.

Every expected verdict comes from the book's own patterns and code as the ledger quotes them (checked against the
chapter text), evaluated with JavaScript's semantics by `jsguard` — never by the stand-in's guard port or its
JavaScript helpers. Witness families draw commands from the book's patterns and their evasions (`commands`).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable
from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.ch16 import experiments as ex
from pinb.chapters.ch16 import guard as book_guard
from pinb.chapters.ch16 import jsguard
from pinb.chapters.ch16 import props_common as wt
from pinb.chapters.ch16.guard import EVASION_CORPUS
from pinb.chapters.properties import Params, Premise, Property, Witness, st, to_words

# --- the book's code, read from the quotes ---------------------------------------------------------------------------

#: The chapter's `BLOCKED` patterns (read once: the ledger and the chapter text do not change during a run).
book_patterns = functools.cache(book_guard.book_patterns)
_extension = functools.cache(book_guard.guard_extension)


def guard_extension() -> dict[str, Any]:
    """The book's guard as a scenario extension (a fresh copy each time)."""
    return copy.deepcopy(_extension())


def hand_copy(build: Callable[[Params], dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """A fresh copy of a hand witness's scenarios, built once (a family varies it)."""
    return copy.deepcopy(_hand(build))


@functools.cache
def _hand(build: Callable[[Params], dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return build({})


@functools.cache
def _quote(claim_id: str) -> str:
    from pinb.chapters.registry import claim

    return " ".join(claim(claim_id).quotes)


def inspected_tools() -> set[str]:
    """The tool names the handler's first line lets through to the check (`event.toolName !== "…"`)."""
    return set(re.findall(r'event\.toolName !== "([^"]+)"', _quote("pi-16.guard.only-bash-and-powershell")))


def dialog_code() -> tuple[str, int] | None:
    """The confirm dialog's title and the length `raw.slice(0, N)` keeps, as the chapter's code writes them."""
    quote = _quote("pi-16.guard.confirm-with-ui")
    found = re.search(r'ui\.confirm\(\s*"([^"]*)",\s*raw\.slice\(0,\s*(\d+)\)', quote)
    if "const raw = JSON.stringify(event.input);" not in quote or found is None:
        return None
    return found.group(1), int(found.group(2))


def denied_reason() -> str:
    found = re.search(r'return \{ block: true, reason: "([^"]+)" \}', _quote("pi-16.guard.confirm-with-ui"))
    return found.group(1) if found else ""


def no_ui_reason(source: str) -> str | None:
    """The no-UI branch's reason for a hit, from its template literal (`Guard blocked: ${hit.source}`)."""
    found = re.search(r"reason: `([^`]*)\$\{hit\.source\}`", _quote("pi-16.guard.blocks-force-push"))
    return None if found is None else found.group(1) + source


def hit(tool: str, tool_input: Any) -> str | None:
    """The book's handler: the source of the pattern that matches this call, or None (let through)."""
    if tool not in inspected_tools():
        return None
    return jsguard.guard_hit(book_patterns(), tool_input)


# --- commands from the book's patterns and their evasions -------------------------------------------------------------

_ACTIONS = (
    "push --force",
    "push -f origin main",
    "push origin main --force",
    "push --force-with-lease",
    "push --force-if-includes",
    "push --forc origin main",
    "push -uf origin main",
    "push origin +main",
    "push origin main",
    "push --mirror",
    "reset --hard",
    "reset --hard HEAD~2",
    "reset --har",
    "reset --soft HEAD~1",
    "clean -fdx",
    "clean -xdf",
    "clean -d -x -f",
    "clean --force -d",
    "clean -n",
    "status",
)
_PREFIXES = ("", "", "", "cd repo && ", 'sh -c "', "echo ok; ", "é", "日本 ", "x", "\u00e4", "🚀", "-")
_GITS = ("git", "git", "git", "GIT", "Git")
_SPACES = (" ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u0085", "\u2003", "\ufeff")
_SUFFIXES = ("", "", "", " 🚀", "ö", "; rm -f build.log", '"', "_x", "\u00e9")


@st.composite
def commands(draw: st.DrawFn) -> str:
    """A shell command built from the book's patterns: a git action the patterns name (or a near miss), spelled
    with the evasions the chapter's corpus lists (case, tabs, newlines, other whitespace, words glued on)."""
    action = draw(st.sampled_from(_ACTIONS))
    verb, _, rest = action.partition(" ")
    inner = draw(st.sampled_from(_SPACES)) if draw(st.integers(0, 3)) == 0 else " "
    return (
        draw(st.sampled_from(_PREFIXES))
        + draw(st.sampled_from(_GITS))
        + draw(st.sampled_from(_SPACES))
        + verb
        + inner
        + rest
        + draw(st.sampled_from(_SUFFIXES))
    )


def hits() -> st.SearchStrategy[str]:
    """A command the book's patterns match: a drawn one, or one that also force-pushes when it missed."""
    return commands().map(lambda c: c if hit("bash", {"command": c}) is not None else f"{c} && git push --force")


# --- reading the witness ---------------------------------------------------------------------------------------------


def calls(s: Any) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) of every tool call the scenario scripts, in order."""
    return [
        (b["name"], b.get("arguments", {}))
        for r in s.get("responses", ())
        for b in r.get("content", ())
        if b.get("type") == "toolCall"
    ]


def tool_output(s: Any, tool: str) -> str | None:
    for spec in s.get("tools", ()):
        if spec["name"] == tool:
            behavior = spec["behavior"]
            return behavior.get("stdout", "done") if behavior["kind"] == "simulated_bash" else behavior.get("text")
    return None


def results(lines: list[dict[str, Any]]) -> list[list[Any]]:
    """[tool, text, isError] per tool call, in call order (the session listener's tool_execution_end)."""
    ends = {ln.get("toolCallId"): ln for ln in tq.events(lines, "tool_execution_end", "session")}
    starts = tq.events(lines, "tool_execution_start", "session")
    return [
        [
            ln.get("toolName"),
            ends.get(ln.get("toolCallId"), {}).get("text"),
            ends.get(ln.get("toolCallId"), {}).get("isError"),
        ]
        for ln in starts
    ]


def _has_ui(s: Any) -> bool:
    return bool((s.get("ui") or {}).get("has_ui"))


def expected_result(s: Any, tool: str, args: dict[str, Any]) -> list[Any]:
    """What the call ends with under the book's guard: its own output, or the book's refusal."""
    source = hit(tool, args)
    if source is None:
        return [tool, tool_output(s, tool), False]
    if _has_ui(s):
        if (s.get("ui") or {}).get("confirm"):
            return [tool, tool_output(s, tool), False]
        return [tool, denied_reason(), True]
    return [tool, no_ui_reason(source), True]


def _guarded(s: Any) -> bool:
    return any(ext.get("name") == "review-guard" for ext in s.get("extensions", ()))


def expected_results(w: Witness) -> dict[str, list[list[Any]]]:
    return {
        name: [expected_result(s, tool, args) for tool, args in calls(s)]
        for name, s in w.scenarios.items()
        if _guarded(s)
    }


def observed_results(w: Witness) -> dict[str, list[list[Any]]]:
    return {name: results(list(w.traces.get(name, []))) for name, s in w.scenarios.items() if _guarded(s)}


def _hits_premise(w: Witness, *, ui: bool | None = None, other_tool: bool = False) -> Premise:
    found = [
        f"{name}: {tool} {str(args.get('command', ''))[:40]!r}"
        for name, s in w.scenarios.items()
        if _guarded(s) and (ui is None or _has_ui(s) == ui)
        for tool, args in calls(s)
        if jsguard.guard_hit(book_patterns(), args) is not None and (hit(tool, args) is not None or other_tool)
    ]
    what = {None: "", True: " with a UI", False: " without a UI"}[ui]
    return wt.premise(
        bool(found),
        f"calls the book's patterns match{what}: " + "; ".join(found[:4]) + (" …" if len(found) > 4 else ""),
        f"no call{what} that the book's patterns match",
    )


def _shuffled(items: list[Any], rng: Any) -> list[Any]:
    unique = list(dict.fromkeys(items))
    rng.shuffle(unique)
    return unique


def _batch(id_: str, commands_: list[str], ui: dict[str, Any] | None = None) -> dict[str, Any]:
    scenario = sc.app(
        id_,
        "Tidy up.",
        [sc.calls(*(sc.call("bash", {"command": c}) for c in commands_)), sc.text("Done.")],
        tools=[sc.bash_tool(stdout=ex.BASH_OUTPUT)],
        extensions=[guard_extension()],
    )
    if ui is not None:
        scenario["ui"] = ui
    return scenario


# --- the BLOCKED patterns ---------------------------------------------------------------------------------------------

PATTERNS = Property(
    hand=ex._patterns,
    premise=lambda w: _hits_premise(w),
    expected=expected_results,
    observed=observed_results,
    family=lambda params: st.tuples(hits(), st.lists(commands(), max_size=5), st.randoms()).map(
        lambda t: {"patterns": _batch("ch16-guard-patterns-gen", _shuffled([t[0], *t[1]], t[2]))}
    ),
)

# --- no UI: the block and its reason; before the body ----------------------------------------------------------------


def _no_ui_family(params: Params) -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    return st.lists(hits(), min_size=1, max_size=3, unique=True).map(
        lambda cs: {"no-ui": _batch("ch16-guard-no-ui-gen", cs, {"has_ui": False, "confirm": False})}
    )


def _no_ui(w: Witness) -> Any:
    return {n: s for n, s in w.scenarios.items() if not _has_ui(s)}


def guard_returns(w: Witness) -> dict[str, Any]:
    """What the guard's handler returned per call (its ext lines), and what each call ended with."""
    out: dict[str, Any] = {}
    for name in _no_ui(w):
        lines = list(w.traces.get(name, []))
        out[name] = {
            "handler returned": [
                ln.get("result") for ln in tq.ext_lines(lines, "tool_call") if ln.get("handler") == "guard"
            ],
            "results": results(lines),
        }
    return out


def guard_expects(w: Witness) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, s in _no_ui(w).items():
        hits_ = [hit(tool, args) for tool, args in calls(s) if tool in inspected_tools()]
        out[name] = {
            "handler returned": [None if h is None else {"block": True, "reason": no_ui_reason(h)} for h in hits_],
            "results": [expected_result(s, tool, args) for tool, args in calls(s)],
        }
    return out


BLOCKS_FORCE_PUSH = Property(
    hand=ex._guard,
    premise=lambda w: _hits_premise(Witness(w.name, _no_ui(w), w.traces), ui=False),
    expected=guard_expects,
    observed=guard_returns,
    family=_no_ui_family,
    picture="no-ui",
)


def _body_ran(w: Witness) -> dict[str, list[bool]]:
    return {
        name: [text == tool_output(s, tool) and not err for tool, text, err in results(list(w.traces.get(name, [])))]
        for name, s in _no_ui(w).items()
    }


BLOCKS_BEFORE_BODY = Property(
    hand=ex._guard,
    premise=lambda w: _hits_premise(Witness(w.name, _no_ui(w), w.traces), ui=False),
    expected=lambda w: {name: [hit(tool, args) is None for tool, args in calls(s)] for name, s in _no_ui(w).items()},
    observed=_body_ran,
    family=_no_ui_family,
    picture="no-ui",
)

# --- with a UI: the dialog ------------------------------------------------------------------------------------------


def expected_dialogs(w: Witness) -> dict[str, Any]:
    """Per scenario: the dialogs the chapter's code opens (kind, title, raw.slice(0, N) of JSON.stringify(input)),
    and what each call ends with."""
    code = dialog_code()
    out: dict[str, Any] = {}
    for name, s in w.scenarios.items():
        asked = []
        for tool, args in calls(s):
            if _has_ui(s) and hit(tool, args) is not None and code is not None:
                asked.append(["confirm", code[0], jsguard.js_slice(jsguard.json_stringify(args), 0, code[1])])
        out[name] = {"asked": asked, "results": [expected_result(s, tool, args) for tool, args in calls(s)]}
    return out


def observed_dialogs(w: Witness) -> dict[str, Any]:
    return {
        name: {
            "asked": [
                [d.get("kind"), d.get("title"), d.get("message")] for d in tq.dialogs(list(w.traces.get(name, [])))
            ],
            "results": results(list(w.traces.get(name, []))),
        }
        for name in w.scenarios
    }


def long_command(draw: st.DrawFn) -> str:
    """A matching command whose JSON runs past the dialog's cut, with an astral character at or near it."""
    base = draw(hits())
    cut = (dialog_code() or ("", 200))[1]
    room = cut - len(jsguard.units(jsguard.json_stringify({"command": base})))
    pad = max(0, room + draw(st.integers(-3, 2)))
    return base + " -o note=" + ("x" * pad) + draw(st.sampled_from(["🚀", "é", "日", "𝔸𝔹", "-"])) + "-done"


@st.composite
def _dialog_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    command = long_command(draw) if draw(st.booleans()) else draw(hits())
    ui = {"has_ui": True, "confirm": draw(st.booleans())}
    scenario = hand_copy(ex._guard)["ui-no"]
    scenario["responses"][0] = sc.calls(sc.call("bash", {"command": command}))
    scenario["ui"] = ui
    scenario["id"] = "ch16-guard-dialog-gen"
    return {"ui": scenario}


def _dialog_premise(w: Witness) -> Premise:
    return _hits_premise(w, ui=True)


def dialog_words(value: Any) -> str:
    """In words, with a lone surrogate (a UTF-16 slice through an emoji, as JavaScript makes it) written as its
    `\\uXXXX` escape, so the words print and store as UTF-8."""
    return re.sub(r"[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", to_words(value))


CONFIRM_WITH_UI = Property(
    hand=ex._guard_dialogs,
    premise=_dialog_premise,
    expected=expected_dialogs,
    observed=observed_dialogs,
    family=lambda params: _dialog_family(),
    words=dialog_words,
    picture="ui-no",
)

# --- only bash and powershell -----------------------------------------------------------------------------------------

OTHER_TOOLS = ("shell", "sh", "zsh", "Bash", "run", "terminal", "PowerShell")


@st.composite
def _filter_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    inspected = sorted(inspected_tools())
    tools = draw(st.lists(st.sampled_from([*inspected, *OTHER_TOOLS]), max_size=3, unique=True))
    tools = list(dict.fromkeys([draw(st.sampled_from(inspected)), *tools, draw(st.sampled_from(OTHER_TOOLS))]))
    draw(st.randoms()).shuffle(tools)
    command = draw(hits())
    return {
        "tools": sc.app(
            "ch16-guard-tool-filter-gen",
            "Push.",
            [sc.calls(*(sc.call(t, {"command": command}) for t in tools)), sc.text("ok")],
            tools=[sc.bash_tool(t, ex.BASH_OUTPUT) for t in tools],
            extensions=[guard_extension()],
        )
    }


def _filter_premise(w: Witness) -> Premise:
    s = wt.scenario(w)
    matching = [t for t, a in calls(s) if jsguard.guard_hit(book_patterns(), a) is not None]
    holds = bool(set(matching) & inspected_tools()) and bool(set(matching) - inspected_tools())
    return wt.premise(
        holds,
        f"a matching command through {', '.join(matching)}",
        "no matching command through both an inspected tool and another one",
    )


ONLY_BASH_AND_POWERSHELL = Property(
    hand=ex._tool_filter,
    premise=_filter_premise,
    expected=expected_results,
    observed=observed_results,
    family=lambda params: _filter_family(),
)

# --- reads event.input, does not mutate it ---------------------------------------------------------------------------


def _reads_scenarios(command: str, mutated_to: str) -> dict[str, dict[str, Any]]:
    reads = sc.app(
        "ch16-guard-reads-gen",
        "Check.",
        [sc.calls(sc.call("bash", {"command": command})), sc.text("ok")],
        tools=[sc.bash_tool(stdout=ex.BASH_OUTPUT)],
        extensions=[guard_extension(), sc.extension("after", sc.handler("tool_call", "after"))],
    )
    mutated = sc.app(
        "ch16-guard-after-mutation-gen",
        "Check.",
        [sc.calls(sc.call("bash", {"command": command})), sc.text("ok")],
        tools=[sc.bash_tool(stdout=ex.BASH_OUTPUT)],
        extensions=[
            sc.extension("rewriter", sc.handler("tool_call", "rewrite", "mutate_input", set={"command": mutated_to})),
            guard_extension(),
        ],
    )
    return {"reads": reads, "mutated": mutated}


def _mutation(s: Any) -> dict[str, Any] | None:
    return next((h["action"]["set"] for _e, h in wt.handlers(s) if h["action"].get("kind") == "mutate_input"), None)


def reads_expected(w: Witness) -> dict[str, Any]:
    """A handler after the guard sees the model's input unchanged (when the guard let it through); the guard after
    a mutating handler sees the mutated input and decides on it."""
    reads, mutated = w.scenarios.get("reads", {}), w.scenarios.get("mutated", {})
    original = calls(reads)[0][1] if calls(reads) else None
    changed = {**(calls(mutated)[0][1] if calls(mutated) else {}), **(_mutation(mutated) or {})}
    return {
        "input after the guard": original if hit("bash", original) is None else None,
        "input the guard saw after a mutation": changed,
        "the mutated call blocked": hit("bash", changed) is not None,
    }


def reads_observed(w: Witness) -> dict[str, Any]:
    after = [ln for ln in tq.ext_lines(w.traces.get("reads", []), "tool_call") if ln.get("handler") == "after"]
    guard = [ln for ln in tq.ext_lines(w.traces.get("mutated", []), "tool_call") if ln.get("handler") == "guard"]
    ended = results(list(w.traces.get("mutated", [])))
    return {
        "input after the guard": after[0].get("input") if after else None,
        "input the guard saw after a mutation": guard[0].get("input") if guard else None,
        "the mutated call blocked": bool(ended and ended[0][2]),
    }


def _reads_premise(w: Witness) -> Premise:
    reads = w.scenarios.get("reads", {})
    ok = bool(calls(reads)) and hit("bash", calls(reads)[0][1]) is None and _mutation(w.scenarios.get("mutated", {}))
    return wt.premise(
        bool(ok),
        "a handler after the guard on a call it lets through; a mutating handler before the guard",
        "no call reached a handler after the guard, or nothing mutated the input before it",
    )


READS_NOT_MUTATES = Property(
    hand=ex._reads_and_mutation,
    premise=_reads_premise,
    expected=reads_expected,
    observed=reads_observed,
    family=lambda params: st.builds(
        _reads_scenarios,
        commands().map(lambda c: c if hit("bash", {"command": c}) is None else "git status"),
        commands(),
    ),
    picture="mutated",
)

# --- not an unconditional prohibition ---------------------------------------------------------------------------------

DESTRUCTIVE = [c for c in EVASION_CORPUS if not c.destroys.startswith("nothing")]


def _corpus_scenario(cases: list[Any]) -> dict[str, dict[str, Any]]:
    return {
        "corpus": sc.app(
            "ch16-guard-evasions-gen",
            "Clean up the repository.",
            [sc.calls(*(sc.call(c.tool_name, c.input) for c in cases)), sc.text("Done.")],
            tools=[
                sc.bash_tool(stdout=ex.BASH_OUTPUT),
                {"name": "write", "behavior": {"kind": "return", "text": "ok"}},
            ],
            extensions=[guard_extension()],
        )
    }


def _destructive_through(w: Witness) -> list[str]:
    """Destructive corpus calls of the witness that the book's handler lets through (another tool, or a spelling
    its regexes miss)."""
    destructive = {(c.tool_name, c.command) for c in DESTRUCTIVE}
    return [
        f"{tool}: {args.get('command', args.get('content'))}"
        for tool, args in calls(wt.scenario(w))
        if (tool, args.get("command", args.get("content"))) in destructive and hit(tool, args) is None
    ]


NOT_UNCONDITIONAL = Property(
    hand=ex._corpus,
    premise=lambda w: wt.premise(
        bool(_destructive_through(w)) and _hits_premise(w).holds,
        f"destructive calls the handler does not match: {_destructive_through(w)[:3]}, beside calls it blocks",
        "no destructive call the handler lets through beside one it blocks",
    ),
    expected=expected_results,
    observed=observed_results,
    family=lambda params: st.tuples(
        st.sampled_from([c for c in DESTRUCTIVE if hit(c.tool_name, c.input) is None]),
        st.sampled_from([c for c in EVASION_CORPUS if hit(c.tool_name, c.input) is not None]),
        st.lists(st.sampled_from(EVASION_CORPUS), max_size=5),
        st.randoms(),
    ).map(lambda t: _corpus_scenario(_shuffled([t[0], t[1], *t[2]], t[3]))),
)

PROPERTIES: dict[str, Property] = {
    "guard.patterns": PATTERNS,
    "guard.blocks-force-push": BLOCKS_FORCE_PUSH,
    "guard.blocks-before-body": BLOCKS_BEFORE_BODY,
    "guard.confirm-with-ui": CONFIRM_WITH_UI,
    "guard.only-bash-and-powershell": ONLY_BASH_AND_POWERSHELL,
    "guard.reads-not-mutates": READS_NOT_MUTATES,
    "guard.not-unconditional": NOT_UNCONDITIONAL,
}
