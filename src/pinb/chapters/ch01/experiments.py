"""Chapter 01's experiments: the hand-written scenarios its properties run (the same data on the stand-in and on
real Pi), what the book's program prints, and `EXPERIMENTS`, every claim's experiment by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pinb.chapters import common, tq
from pinb.chapters import scenarios as sc
from pinb.chapters.ch01 import packages
from pinb.chapters.ch01.program import NAME, program
from pinb.chapters.properties import BookExampleExperiment, Params, PropertyExperiment, Trace

# --- one turn ---------------------------------------------------------------------------------------------------


def _hello(params: Params) -> dict[str, dict[str, Any]]:
    prompt = str(params.get("prompt", "Hello there."))
    return {"hello": sc.app("ch01-hello", prompt, [sc.text("Hi.")])}


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


def _model_settings(params: Params) -> dict[str, dict[str, Any]]:
    level = str(params.get("thinking_level", "high"))
    return {
        "off": _observed({"reasoning": True, "thinking_level": "off"}, "model-settings-off"),
        "thinking": _observed({"reasoning": True, "thinking_level": level}, f"model-settings-{level}"),
        "other-model": _observed({"id": "faux-2", "reasoning": True}, "model-settings-other-model"),
    }


def _word_count_agent(params: Params) -> dict[str, dict[str, Any]]:
    return {"word-count": sc.word_count("agent")}


def _text_and_call(params: Params) -> dict[str, dict[str, Any]]:
    scenario = sc.word_count("agent")
    scenario["id"] = "ch01-text-and-call"
    scenario["responses"][0] = sc.calls(sc.call("word_count", {"text": "a b"}), preface="Let me count.")
    return {"text-and-call": scenario}


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


# --- four inputs ------------------------------------------------------------------------------------------------


# --- the turn is not the run ------------------------------------------------------------------------------------


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


def _follow_up(params: Params) -> dict[str, dict[str, Any]]:
    # Queued while a tool runs: pending work (the tool result's request) comes first, then the follow-up.
    with_tool = sc.word_count("app")
    with_tool["id"] = "ch01-app-follow-up-during-tool"
    with_tool["responses"].append(sc.text("Following up."))
    with_tool["queue"] = [{"when": "tool_execution_start#1", "do": "follow_up", "text": "And one more thing."}]
    return {"follow-up-app": _continuation_app(params)["follow-up-app"], "during-tool": with_tool}


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


def _node_at_least(version: str, minimum: tuple[int, int]) -> bool:
    parts = version.lstrip("v").split(".")
    try:
        return (int(parts[0]), int(parts[1])) >= minimum
    except (IndexError, ValueError):
        return False


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


MUTATED_TEXT = "one two three four five"


def _before_tool_call(params: Params) -> dict[str, dict[str, Any]]:
    mutated = str(params.get("mutated_text", MUTATED_TEXT))
    hooks = {"before_tool_call": {"kind": "mutate_args", "set": {"text": mutated}}}
    return {
        "hook-mutates": _hooked("ch01-seam-before-tool-call-mutates", "two words", hooks),
        "no-hook": _hooked("ch01-seam-before-tool-call-none", "two words", None),
    }


def record_facts(version: str) -> Path:
    """`pinb claims facts`: read the package facts of Pi `version` live and write their snapshot (committed)."""
    from pinb.chapters.ch01 import package_facts

    package_facts.record_package_facts(version)
    return package_facts.facts_path(version)


def _experiments() -> dict[str, Any]:
    """Every claim's experiment: its property (package claims with the facts loader), and for the claims about the
    book's program the program's run on the pi backend (`props_packages.PROGRAM_PROPERTIES`) with, where there is
    one, the stand-in port's property (`props_loop.THREE_LINES_PORT`)."""
    from pinb.chapters.ch01.properties import FACT_PROPERTIES, PROGRAM_PROPERTIES, SCENARIO_PROPERTIES

    found: dict[str, Any] = {name: PropertyExperiment(prop) for name, prop in SCENARIO_PROPERTIES.items()}
    found.update({name: PropertyExperiment(prop, packages.load_facts) for name, prop in FACT_PROPERTIES.items()})
    found.update(
        {name: BookExampleExperiment(NAME, program, prop, found.get(name)) for name, prop in PROGRAM_PROPERTIES.items()}
    )
    return found


def __getattr__(name: str) -> Any:
    # EXPERIMENTS is built on first use: the property modules import this module's scenario builders.
    if name == "EXPERIMENTS":
        globals()["EXPERIMENTS"] = _experiments()
        return globals()["EXPERIMENTS"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
