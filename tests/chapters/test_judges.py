"""Each claim's property reads the traces and can fail: its hand witness, run on the stand-in, agrees with the book,
and the same traces with one realistic bug in them (a swapped event, a dropped request, a result the guard let
through) do not."""

from __future__ import annotations

import copy
import functools
from typing import Any

from pinb.chapters import registry
from pinb.chapters.backends import run_standin_sync
from pinb.chapters.ch01 import assembly
from pinb.chapters.ch01 import experiments as exp01
from pinb.chapters.ch01.program import printed_output
from pinb.chapters.ch16 import experiments as exp16
from pinb.chapters.ch16.experiments import diagram_violations
from pinb.chapters.properties import Property, Witness, WitnessVerdict, judge_witness

from .traces import parallel_tools_trace, word_count_trace

Traces = dict[str, list[dict[str, Any]]]


def _property(chapter: str, experiment: str) -> Property:
    ran = registry.experiments(chapter)[experiment].on("standin")
    assert ran is not None
    return ran.property


@functools.cache
def _hand_traces(chapter: str, experiment: str) -> Traces:
    return {name: run_standin_sync(s) for name, s in _property(chapter, experiment).hand({}).items()}


def _hand(chapter: str, experiment: str) -> Traces:
    return copy.deepcopy(_hand_traces(chapter, experiment))


def _verdict(chapter: str, experiment: str, traces: Traces) -> WitnessVerdict:
    prop = _property(chapter, experiment)
    return judge_witness(prop, Witness("hand", prop.hand({}), traces))


def _ch01(experiment: str, traces: Traces) -> WitnessVerdict:
    return _verdict("pi-01-chapter", experiment, traces)


def _ch16(experiment: str, traces: Traces) -> WitnessVerdict:
    return _verdict("pi-16-chapter", experiment, traces)


def test_three_lines_holds_on_the_books_output_and_fails_otherwise() -> None:
    trace = word_count_trace()
    assert printed_output() == ["stop: toolUse", 'tool: word_count {"words":4}', "stop: stop"]  # the quote
    assert exp01.example_lines(trace) == printed_output()
    assert _ch01("example.three-lines", {"word-count": trace}).status == "OBSERVED"
    changed = copy.deepcopy(trace)
    next(line for line in changed if line["type"] == "tool_execution_end")["details"] = {"words": 5}
    verdict = _ch01("example.three-lines", {"word-count": changed})
    assert verdict.status == "CONTRADICTED" and '{"words":5}' in verdict.observed


def test_records_executes_records_needs_the_results_recorded_in_the_turn() -> None:
    traces = _hand("pi-01-chapter", "loop.records-executes-records")
    assert _ch01("loop.records-executes-records", traces).status == "OBSERVED"
    # The turn ends before the tool's result is recorded (the fault turn-end-before-tool-results, in the trace).
    early = copy.deepcopy(traces)
    lines = early["word-count"]
    end = lines.pop(next(i for i, line in enumerate(lines) if line["type"] == "turn_end"))
    lines.insert(next(i for i, line in enumerate(lines) if line["type"] == "tool_execution_end"), end)
    assert _ch01("loop.records-executes-records", early).status == "CONTRADICTED"
    # The next request does not carry the result (tool-results-not-in-context).
    for line in traces["word-count"]:
        if line["type"] == "request" and line["source"] == "model":
            line["messages"] = [m for m in line.get("messages", ()) if m.get("role") != "toolResult"]
    assert _ch01("loop.records-executes-records", traces).status == "CONTRADICTED"


def test_turn_shape_counts_requests_per_turn() -> None:
    traces = _hand("pi-01-chapter", "loop.turn-shape")
    assert _ch01("loop.turn-shape", traces).status == "OBSERVED"
    # without turn_end lines the first "turn" swallows both requests
    traces["word-count"] = [line for line in traces["word-count"] if line["type"] != "turn_end"]
    assert _ch01("loop.turn-shape", traces).status != "OBSERVED"


def test_turn_shape_needs_turns_that_close() -> None:
    traces = _hand("pi-01-chapter", "loop.turn-shape")
    unclosed = traces["word-count"]
    del unclosed[max(i for i, line in enumerate(unclosed) if line["type"] == "turn_end")]
    assert _ch01("loop.turn-shape", traces).status != "OBSERVED"


def test_turn_versus_run() -> None:
    traces = _hand("pi-01-chapter", "run.turn-versus-run")
    assert _ch01("run.turn-versus-run", traces).status == "OBSERVED"
    end = next(line for line in traces["word-count"] if line["type"] == "agent_end")
    traces["word-count"].append({**end, "seq": 999})
    assert _ch01("run.turn-versus-run", traces).status == "CONTRADICTED"


def test_guard_properties_read_the_tool_result() -> None:
    for experiment in ("guard.blocks-force-push", "guard.blocks-before-body"):
        traces = _hand("pi-16-chapter", experiment)
        assert _ch16(experiment, traces).status == "OBSERVED"
        for line in traces["no-ui"]:
            if line["type"] == "tool_execution_end":
                line.update(isError=False, text=exp16.BASH_OUTPUT)
        assert _ch16(experiment, traces).status == "CONTRADICTED", experiment


def test_concurrency_needs_overlap() -> None:
    traces = _hand("pi-16-chapter", "run.tool-calls-concurrent")
    assert _ch16("run.tool-calls-concurrent", traces).status == "OBSERVED"

    def session(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**line, "source": "session"} if line["source"] == "agent" else line for line in trace]

    # Run one call after the other: "stream and tool events can interleave" is then unseen.
    sequential = {**traces, "parallel": session(parallel_tools_trace(parallel=False))}
    assert _ch16("run.tool-calls-concurrent", sequential).status != "OBSERVED"


def test_continuation_and_settlement_read_the_settle_trace() -> None:
    for experiment in ("run.continuation-branch", "run.settle-after-continuation-exhausted"):
        traces = _hand("pi-16-chapter", experiment)
        assert _ch16(experiment, traces).status == "OBSERVED"
        # Pi settles at the first agent_end: no second run, no agent_before_settle after it.
        trace = traces["settle-continue"]
        first_end = next(i for i, ln in enumerate(trace) if ln["type"] == "agent_end")
        settled = next(ln for ln in trace if ln["type"] == "agent_settled")
        traces["settle-continue"] = [*trace[: first_end + 1], settled]
        assert _ch16(experiment, traces).status != "OBSERVED", experiment
    traces = _hand("pi-01-chapter", "settle.settled-final")
    assert _ch01("settle.settled-final", traces).status == "OBSERVED"
    name = next(iter(traces))
    traces[name].append({"seq": 10_000, "source": "model", "type": "request", "n": 99})
    assert _ch01("settle.settled-final", traces).status == "CONTRADICTED"


def test_sequence_diagram_violations() -> None:
    good = ["input", "before_agent_start", "agent_start", "turn_start", "message_start", "message_end", "tool_call",
            "tool_result", "turn_end", "agent_end", "agent_before_settle", "agent_settled"]  # fmt: skip
    assert diagram_violations(good) == []
    assert diagram_violations([good[1], good[0], *good[2:]])
    outside = [*good[:3], "tool_call", "turn_start", "tool_result", "turn_end", *good[-3:]]
    assert any("outside a turn" in p for p in diagram_violations(outside))
    unmatched = [*good[:6], "tool_call", "turn_end", *good[-3:]]
    assert any("not followed" in p for p in diagram_violations(unmatched))


def test_continuation_explicit_needs_the_model_to_have_said_stop() -> None:
    traces = _hand("pi-01-chapter", "loop.continuation-explicit")
    assert _ch01("loop.continuation-explicit", traces).status == "OBSERVED"
    first = next(
        ln for ln in traces["settle-continue"] if ln.get("role") == "assistant" and ln["type"] == "message_end"
    )
    first["stopReason"] = "toolUse"
    assert _ch01("loop.continuation-explicit", traces).status == "CONTRADICTED"


def test_unsubscribe_needs_the_registration_to_have_run_first() -> None:
    traces = _hand("pi-16-chapter", "dispatch.on-returns-unsubscribe")
    assert _ch16("dispatch.on-returns-unsubscribe", traces).status == "OBSERVED"
    never = {"unsubscribe": [ln for ln in traces["unsubscribe"] if ln.get("handler") != "target"]}
    assert _ch16("dispatch.on-returns-unsubscribe", never).status == "NOT EXERCISED"


def test_follow_up_must_reach_the_model_before_settling() -> None:
    traces = _hand("pi-01-chapter", "queue.follow-up-after-pending-work")
    assert _ch01("queue.follow-up-after-pending-work", traces).status == "OBSERVED"
    unasked = [ln for ln in traces["follow-up-app"] if not (ln["source"] == "model" and ln["type"] == "request")]
    assert _ch01("queue.follow-up-after-pending-work", {**traces, "follow-up-app": unasked}).status != "OBSERVED"


def test_core_runs_alone_needs_the_core_alone() -> None:
    traces = _hand("pi-01-chapter", "packages.core-runs-alone")
    assert _ch01("packages.core-runs-alone", traces).status == "OBSERVED"
    # The same run had it needed a session around the core: its events come from the application layer.
    session = {
        "word-count": [{**ln, "source": "session"} if ln["source"] == "agent" else ln for ln in traces["word-count"]]
    }
    assert _ch01("packages.core-runs-alone", session).status == "CONTRADICTED"


def test_turn_end_actionable_is_about_agent_before_settle_too() -> None:
    traces = _hand("pi-16-chapter", "settle.turn-end-actionable")
    assert set(traces) == {"turn-end", "settle-continue"}
    assert _ch16("settle.turn-end-actionable", traces).status == "OBSERVED"
    second = [ln for ln in traces["settle-continue"] if ln["source"] == "model" and ln["type"] == "request"][1]
    traces["settle-continue"].remove(second)
    verdict = _ch16("settle.turn-end-actionable", traces)
    assert verdict.status == "CONTRADICTED" and "settle-continue: (requests: 1" in verdict.observed


def test_prompt_template_reads_the_user_message_that_reached_the_model() -> None:
    traces = _hand("pi-01-chapter", "context.prompt-template-at-input")
    verdict = _ch01("context.prompt-template-at-input", traces)
    assert verdict.status == "OBSERVED", verdict.evidence
    assert "TEMPLATE: answer in one line about caching." in verdict.observed
    # The template's file is laid out but its text never reaches the model: the property says so.
    for line in traces["template"]:
        for message in line.get("messages", ()) if line.get("type") == "request" else ():
            if message.get("role") == "user":
                message["text"] = "/brief caching"
    assert _ch01("context.prompt-template-at-input", traces).status == "CONTRADICTED"


def test_core_alone_in_a_project_carries_no_agents_md_where_the_session_does() -> None:
    traces = _hand("pi-01-chapter", "packages.core-loads-no-configuration")
    assert _ch01("packages.core-loads-no-configuration", traces).status == "OBSERVED"
    assert traces["core"][0]["layer"] == "agent" and traces["app"][0]["layer"] == "app"
    # Had the core put the folder's AGENTS.md into its system prompt, the property says so.
    next(line for line in traces["core"] if line.get("source") == "request")["systemPrompt"] = assembly.CORE_RULE
    assert _ch01("packages.core-loads-no-configuration", traces).status == "CONTRADICTED"
