"""Chapter 01's loop sentences as properties: one turn, the run, the continuation test, the example's tool.

Each expected value is read from the witness's own script (`turns.script`: which replies call which tools), never
from pinb's loop; each observed value from the traces (`turns.observed_turns`). The family is the loop family:
0–3 tool calls per reply, up to three tool turns, one or two prompts, sequential and parallel tools.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import tq
from pinb.chapters.ch01 import assembly
from pinb.chapters.ch01 import experiments as ex
from pinb.chapters.ch01 import families as fam
from pinb.chapters.ch01.program import printed_output
from pinb.chapters.ch01.turns import observed_turns, runs_of, script, sorted_calls, tool_details
from pinb.chapters.properties import Params, Premise, Property, Witness, st


def only(w: Witness) -> tuple[str, dict[str, Any]]:
    """The witness's one scenario (the loop claims run one)."""
    name, scenario = next(iter(w.scenarios.items()))
    return name, dict(scenario)


def all_turns(scenario: dict[str, Any]) -> list[Any]:
    return [turn for run in script(scenario) for turn in run]


def shape(scenario: dict[str, Any]) -> str:
    """The witness's script in words: tool calls per turn, per run, and how tools run."""
    runs = "; ".join(" + ".join(str(len(t.calls)) for t in run) for run in script(scenario))
    mode = (scenario.get("settings") or {}).get("tool_execution", "parallel")
    return f"tool calls per turn {runs} ({mode} tools, layer {scenario.get('layer')})"


def tool_premise(layer: str | None = None, min_turns: int = 1) -> Any:
    def premise(w: Witness) -> Premise:
        _, scenario = only(w)
        tool_turns = sum(1 for t in all_turns(scenario) if t.calls)
        if layer is not None and scenario.get("layer") != layer:
            return Premise(False, f"layer {scenario.get('layer')}, not {layer}")
        return Premise(tool_turns >= min_turns, shape(scenario) if tool_turns >= min_turns else "no reply calls a tool")

    return premise


def loop_family(layer: str = "agent", min_tool_turns: int = 1, **kw: Any) -> Any:
    def family(params: Params) -> st.SearchStrategy[dict[str, dict[str, Any]]]:
        return fam.loop_scenario(layer=layer, min_tool_turns=min_tool_turns, **kw).map(lambda s: {"loop": s})

    return family


# --- the response can contain text and tool calls ---------------------------------------------------------------


def _text_and_calls_premise(w: Witness) -> Premise:
    _, scenario = only(w)
    both = [n + 1 for n, t in enumerate(all_turns(scenario)) if t.text and t.calls]
    if both:
        return Premise(True, f"replies {both} carry text beside their tool calls")
    return Premise(False, "no reply carries text beside tool calls")


def _replies_expected(w: Witness) -> list[tuple[str, list[str]]]:
    return [(t.text, sorted_calls(t.calls)) for t in all_turns(only(w)[1])]


def _replies_observed(w: Witness) -> list[tuple[str, list[str]]]:
    trace = w.traces[only(w)[0]]
    return [(s.text, sorted_calls(s.asked)) for s in observed_turns(trace)]


def _with_preface(scenario: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Most witnesses get text beside their first tool calls; one in five keeps none (the premise then fails)."""
    first = next(r for r in scenario["responses"] if r.get("stopReason") == "toolUse")
    if not any(b.get("type") == "text" for b in first["content"]) and len(scenario["prompt"]) % 5:
        first["content"].insert(0, {"type": "text", "text": "Let me look."})
    return {"text-and-call": scenario}


TEXT_AND_CALLS = Property(
    ex._text_and_call,
    _text_and_calls_premise,
    _replies_expected,
    _replies_observed,
    lambda params: fam.loop_scenario(min_tool_turns=1).map(_with_preface),
)

# --- records, executes, records ---------------------------------------------------------------------------------


def _recorded_expected(w: Witness) -> list[dict[str, Any]]:
    return [
        {"ran": sorted_calls(t.calls), "results before turn_end": len(t.calls), "next request ends with": _tail(t)}
        for t in all_turns(only(w)[1])
        if t.calls
    ]


def _tail(turn: Any) -> list[str]:
    return ["assistant", *["toolResult"] * len(turn.calls)]


def _recorded_observed(w: Witness) -> list[dict[str, Any]]:
    trace = w.traces[only(w)[0]]
    seen = observed_turns(trace)
    lines = _loop(trace)
    windows = tq.turn_windows(lines)
    out = []
    for n, turn in enumerate(seen):
        if not turn.asked:
            continue
        following = tq.requests(lines[windows[n + 1][0] :]) if n + 1 < len(windows) else []
        roles = [m.get("role") for m in following[0].get("messages", ())] if following else []
        out.append(
            {
                "ran": sorted_calls(turn.ran),
                "results before turn_end": turn.results if turn.closed else 0,
                "next request ends with": roles[-len(turn.asked) - 1 :],
            }
        )
    return out


def _loop(trace: Any) -> list[Any]:
    from pinb.chapters.ch01.turns import loop_lines

    return loop_lines(trace)


RECORDS = Property(
    ex._word_count_agent, tool_premise(), _recorded_expected, _recorded_observed, loop_family(), picture="word-count"
)

# --- a turn is one request plus its tool execution --------------------------------------------------------------


def _shape_expected(w: Witness) -> dict[str, Any]:
    return {
        name: [{"requests": 1, "tools": sorted_calls(t.calls)} for t in all_turns(dict(s))]
        for name, s in w.scenarios.items()
    }


def _shape_observed(w: Witness) -> dict[str, Any]:
    out = {}
    for name, trace in w.traces.items():
        turns = [{"requests": s.requests, "tools": sorted_calls(s.ran)} for s in observed_turns(trace) if s.closed]
        lines = _loop(trace)
        windows = tq.turn_windows(lines)
        stray = [
            ln.get("type")
            for i, ln in enumerate(lines)
            if ln.get("type") in ("request", "tool_execution_start", "tool_execution_end")
            and not any(s <= i <= (e if e >= 0 else len(lines)) for s, e in windows)
        ]
        out[name] = turns + ([{"outside any turn": stray}] if stray else [])
    return out


def _shape_premise(w: Witness) -> Premise:
    called = {name: sum(len(t.calls) for t in all_turns(dict(s))) for name, s in w.scenarios.items()}
    if any(called.values()):
        return Premise(True, "; ".join(f"{n}: {shape(dict(w.scenarios[n]))}" for n in called))
    return Premise(False, "no reply calls a tool: no tool execution to belong to a turn")


TURN_SHAPE = Property(
    ex._parallel, _shape_premise, _shape_expected, _shape_observed, loop_family(), picture="two-tools"
)

# --- the continuation test and the run --------------------------------------------------------------------------


def _runs_expected(w: Witness) -> dict[str, Any]:
    return {
        name: [{"requests": len(run), "agent_end": 1} for run in script(dict(s))] for name, s in w.scenarios.items()
    }


def _runs_observed(w: Witness) -> dict[str, Any]:
    return {
        name: [{"requests": len(tq.requests(run)), "agent_end": len(tq.events(run, "agent_end"))} for run in runs_of(t)]
        for name, t in w.traces.items()
    }


def _continuation_premise(w: Witness) -> Premise:
    yes = [n for n, s in w.scenarios.items() if any(t.calls for t in all_turns(dict(s))) or s.get("queue")]
    no = [n for n, s in w.scenarios.items() if script(dict(s))]
    if yes and no:
        return Premise(True, f"tool results or a queued follow-up ask again in {yes}; every run ends on a plain reply")
    return Premise(False, "no tool results and no queued follow-up: only the 'no' branch is taken")


CONTINUATION_TEST = Property(
    ex._continuation,
    _continuation_premise,
    _runs_expected,
    _runs_observed,
    # Without a queued follow-up the first run calls a tool at least once (else nothing asks for another request,
    # and the witness takes only the "no" branch); with one, a run of plain replies is drawn too.
    lambda params: st.booleans().flatmap(
        lambda follow: fam.loop_scenario(min_tool_turns=0 if follow else 1, follow_up=follow).map(lambda s: {"loop": s})
    ),
)


def _turn_run_expected(w: Witness) -> list[dict[str, int]]:
    return [{"turns": len(run), "requests": len(run), "agent_start": 1, "agent_end": 1} for run in script(only(w)[1])]


def _turn_run_observed(w: Witness) -> list[dict[str, int]]:
    out = []
    for run in runs_of(w.traces[only(w)[0]]):
        kinds = [ln.get("type") for ln in tq.listener(run)]
        count = kinds.count
        out.append(
            {
                "turns": count("turn_start"),
                "requests": len(tq.requests(run)),
                "agent_start": count("agent_start"),
                "agent_end": count("agent_end"),
            }
        )
    return out


def _several_turns(w: Witness) -> Premise:
    runs = script(only(w)[1])
    longest = max((len(r) for r in runs), default=0)
    if longest >= 2:
        return Premise(True, f"a run of {longest} turns ({shape(only(w)[1])})")
    return Premise(False, "every run is a single turn: no 'another turn' after tool results")


TURN_VERSUS_RUN = Property(ex._word_count_agent, _several_turns, _turn_run_expected, _turn_run_observed, loop_family())

# --- the core runs alone ----------------------------------------------------------------------------------------


def _alone_expected(w: Witness) -> dict[str, Any]:
    _, scenario = only(w)
    turns = all_turns(scenario)
    return {
        "sources": ["agent", "model"],
        "requests": len(turns),
        "tools ran": sum(len(t.calls) for t in turns),
        "last reply": turns[-1].stop if turns else None,
    }


def _alone_observed(w: Witness) -> dict[str, Any]:
    trace = w.traces[only(w)[0]]
    answers = [ln.get("stopReason") for ln in tq.assistant_ends(trace)]
    return {
        "sources": sorted({str(ln.get("source")) for ln in tq.core(trace)}),
        "requests": len(tq.requests(trace)),
        "tools ran": len(tq.events(trace, "tool_execution_end")),
        "last reply": answers[-1] if answers else None,
    }


CORE_RUNS_ALONE = Property(
    ex._word_count_agent, tool_premise(layer="agent"), _alone_expected, _alone_observed, loop_family()
)

# --- the example's tool: execute() returns content and details --------------------------------------------------


def _results_expected(w: Witness) -> list[dict[str, Any]]:
    _, scenario = only(w)
    out = []
    for turn in all_turns(scenario):
        for name, args in turn.calls:
            details = tool_details(scenario, name, args)
            text = str(details["words"]) if name == "word_count" else _returned_text(scenario, name)
            out.append({"tool": name, "text": text, "details": details})
    return sorted(out, key=repr)


def _returned_text(scenario: dict[str, Any], name: str) -> str:
    tool = next(t for t in scenario.get("tools", ()) if t.get("name") == name)
    return str(tool.get("behavior", {}).get("text", ""))


def _results_observed(w: Witness) -> list[dict[str, Any]]:
    ends = tq.events(w.traces[only(w)[0]], "tool_execution_end")
    ends = [ln for ln in ends if ln.get("source") == tq.listener(w.traces[only(w)[0]])[0].get("source")]
    return sorted(
        ({"tool": ln.get("toolName"), "text": ln.get("text"), "details": ln.get("details")} for ln in ends), key=repr
    )


TOOL_SHAPE = Property(ex._word_count_agent, tool_premise(), _results_expected, _results_observed, loop_family())

# --- this program prints … (the stand-in's port of the book's program) -------------------------------------------


def _is_program(w: Witness) -> Premise:
    _, scenario = only(w)
    runs = script(scenario)
    calls = [t.calls for run in runs for t in run]
    if len(runs) == 1 and len(calls) == 2 and [c[0] for c in calls[0]] == ["word_count"] and not calls[1]:
        return Premise(True, "the chapter's program: one word_count call, then an answer")
    return Premise(False, f"not the chapter's program's shape ({shape(scenario)})")


#: What printed the lines: on the stand-in, never the book's program itself (the evidence says so).
PORT_PRINTED = (
    "printed by the stand-in's port of the program (not the book's TypeScript program, which the pi backend runs)"
)


def _printed_expected(w: Witness) -> dict[str, list[str]]:
    """The book's lines, with the count of this witness's sentence in the tool line (the book counts four)."""
    import json

    _, scenario = only(w)
    name, args = all_turns(scenario)[0].calls[0]
    details = json.dumps(tool_details(scenario, name, args), separators=(",", ":"))
    book = printed_output()
    return {PORT_PRINTED: [line if not line.startswith("tool:") else f"tool: {name} {details}" for line in book]}


def _printed_observed(w: Witness) -> dict[str, list[str]]:
    return {PORT_PRINTED: ex.example_lines(w.traces[only(w)[0]])}


@st.composite
def _program(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    from pinb.chapters import scenarios as sc

    sentence = draw(fam.phrase(1, 7))
    scenario = sc.word_count("agent", sentence)
    scenario["responses"][1] = sc.text(draw(fam.sentence("Answer")))
    return {"word-count": scenario}


THREE_LINES_PORT = Property(
    ex._word_count_agent, _is_program, _printed_expected, _printed_observed, lambda params: _program()
)

# --- the provider is one argument -------------------------------------------------------------------------------


def _providers_premise(w: Witness) -> Premise:
    a, b = (dict(s) for s in w.scenarios.values())
    rest = lambda s: {k: v for k, v in s.items() if k not in ("id", "responses")}  # noqa: E731
    if rest(a) == rest(b) and a.get("responses") != b.get("responses"):
        return Premise(True, "two runs that differ only in the provider's script")
    return Premise(False, "the two runs differ in more than their provider (or not at all)")


def _providers_expected(w: Witness) -> dict[str, Any]:
    return {
        name: {"answer": all_turns(dict(s))[-1].text, "tool results": _results_expected(Witness(name, {name: s}))}
        for name, s in w.scenarios.items()
    }


def _providers_observed(w: Witness) -> dict[str, Any]:
    out = {}
    for name, trace in w.traces.items():
        ends = tq.assistant_ends(trace)
        out[name] = {
            "answer": ends[-1].get("text") if ends else None,
            "tool results": _results_observed(Witness(name, {name: w.scenarios[name]}, {name: trace})),
        }
    return out


@st.composite
def _two_providers(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    from pinb.chapters import scenarios as sc

    base = draw(fam.loop_scenario(min_tool_turns=1, prompts=(1, 1)))
    answers = draw(st.lists(fam.sentence("Answer"), min_size=2, max_size=2, unique=True))
    first, second = dict(base), dict(base)
    first["id"], second["id"] = "ch01-provider-a", "ch01-provider-b"
    first["responses"] = [*base["responses"][:-1], sc.text(answers[0])]
    second["responses"] = [*base["responses"][:-1], sc.text(answers[1])]
    return {"provider-a": first, "provider-b": second}


PROVIDER_ONE_ARGUMENT = Property(
    assembly.two_providers,
    _providers_premise,
    _providers_expected,
    _providers_observed,
    lambda params: _two_providers(),
)

PROPERTIES: dict[str, Property] = {
    "loop.response-text-and-tool-calls": TEXT_AND_CALLS,
    "loop.records-executes-records": RECORDS,
    "loop.turn-shape": TURN_SHAPE,
    "loop.continuation-test": CONTINUATION_TEST,
    "run.turn-versus-run": TURN_VERSUS_RUN,
    "packages.core-runs-alone": CORE_RUNS_ALONE,
    "example.tool-shape": TOOL_SHAPE,
    "example.three-lines": THREE_LINES_PORT,
    "example.provider-is-one-argument": PROVIDER_ONE_ARGUMENT,
}

__all__ = ["PROPERTIES"]
