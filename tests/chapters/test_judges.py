"""The judges read traces and can fail: each is run on a trace that agrees with the book and on one that does not."""

from __future__ import annotations

import copy
from typing import Any

from pinb.chapters import common
from pinb.chapters.ch01 import experiments as exp01
from pinb.chapters.ch16 import experiments as exp16
from pinb.chapters.ch16.experiments import diagram_violations

from .traces import guard_trace, parallel_tools_trace, word_count_trace


def test_three_lines_holds_on_the_books_output_and_fails_otherwise() -> None:
    trace = word_count_trace()
    assert exp01.printed_output() == ["stop: toolUse", 'tool: word_count {"words":4}', "stop: stop"]  # the quote
    assert exp01.example_lines(trace) == exp01.printed_output()
    assert exp01.judge_three_lines({"word-count": trace}).holds
    changed = copy.deepcopy(trace)
    next(line for line in changed if line["type"] == "tool_execution_end")["details"] = {"words": 5}
    finding = exp01.judge_three_lines({"word-count": changed})
    assert not finding.holds and '{"words":5}' in finding.evidence


def test_records_executes_records_needs_the_order() -> None:
    trace = word_count_trace()
    assert exp01.judge_records_executes_records({"word-count": trace}).holds
    swapped = copy.deepcopy(trace)
    start = next(i for i, line in enumerate(swapped) if line["type"] == "tool_execution_start")
    end = next(i for i, line in enumerate(swapped) if line["type"] == "tool_execution_end")
    swapped[start], swapped[end] = swapped[end], swapped[start]
    assert not exp01.judge_records_executes_records({"word-count": swapped}).holds


def test_turn_shape_counts_requests_per_turn() -> None:
    traces = {"word-count": word_count_trace(), "two-tools": parallel_tools_trace()}
    assert exp01.judge_turn_shape(traces).holds
    broken = copy.deepcopy(traces)
    broken["word-count"] = [line for line in broken["word-count"] if line["type"] != "turn_end"][:]
    # without turn_end lines the first "turn" swallows both requests
    assert not exp01.judge_turn_shape(broken).holds


def test_turn_versus_run() -> None:
    assert exp01.judge_turn_versus_run({"word-count": word_count_trace()}).holds
    doubled = [*word_count_trace(), {"seq": 99, "source": "agent", "type": "agent_end", "messages": []}]
    assert not exp01.judge_turn_versus_run({"word-count": doubled}).holds


def test_guard_judges_read_the_tool_result() -> None:
    trace = guard_trace()
    assert exp16.judge_blocks_force_push({"no-ui": trace}).holds
    assert exp16.judge_blocks_before_body({"no-ui": trace}).holds
    ran = copy.deepcopy(trace)
    for line in ran:
        if line["type"] == "tool_execution_end":
            line.update(isError=False, text=exp16.BASH_OUTPUT)
    assert not exp16.judge_blocks_before_body({"no-ui": ran}).holds
    assert not exp16.judge_blocks_force_push({"no-ui": ran}).holds


def test_concurrency_judge_needs_overlap() -> None:
    settle = [
        {"seq": 1, "source": "session", "type": "agent_start"},
        {"seq": 2, "source": "model", "type": "request", "n": 1},
        {"seq": 3, "source": "session", "type": "agent_end"},
        {"seq": 4, "source": "ext", "type": "agent_before_settle", "handler": "continue", "result": {"continue": True}},
        {"seq": 5, "source": "session", "type": "agent_start"},
        {"seq": 6, "source": "model", "type": "request", "n": 2},
        {"seq": 7, "source": "session", "type": "agent_end"},
        {"seq": 8, "source": "ext", "type": "agent_before_settle", "handler": "continue"},
        {"seq": 9, "source": "session", "type": "agent_settled", "aborted": False},
    ]

    def session(trace: list[dict]) -> list[dict]:
        return [{**line, "source": "session"} if line["source"] == "agent" else line for line in trace]

    parallel = session(parallel_tools_trace(parallel=True))
    sequential = session(parallel_tools_trace(parallel=False))
    # Without a stream line of one call while the other runs, "stream and tool events can interleave" is unseen.
    assert not exp16.judge_concurrent({"parallel": parallel, "settle-continue": settle}).holds
    second = next(
        i for i, ln in enumerate(parallel) if ln["type"] == "tool_execution_start" and ln["toolCallId"] == "call#2"
    )
    update = {"source": "session", "type": "tool_execution_update", "toolName": "sleep", "toolCallId": "call#1"}
    parallel.insert(second + 1, {**update, "stream": True})
    assert exp16.judge_concurrent({"parallel": parallel, "settle-continue": settle}).holds
    assert not exp16.judge_concurrent({"parallel": sequential, "settle-continue": settle}).holds
    assert exp16.judge_continuation_branch({"settle-continue": settle}).holds
    assert exp16.judge_settle_after_exhausted({"settle-continue": settle}).holds
    assert common.judge_settled_final({"settle-continue": settle}).holds
    late = [*settle, {"seq": 10, "source": "model", "type": "request", "n": 3}]
    assert not common.judge_settled_final({"settle-continue": late}).holds


def test_sequence_diagram_violations() -> None:
    good = ["input", "before_agent_start", "agent_start", "turn_start", "message_start", "message_end", "tool_call",
            "tool_result", "turn_end", "agent_end", "agent_before_settle", "agent_settled"]  # fmt: skip
    assert diagram_violations(good) == []
    assert diagram_violations([good[1], good[0], *good[2:]])
    outside = [*good[:3], "tool_call", "turn_start", "tool_result", "turn_end", *good[-3:]]
    assert any("outside a turn" in p for p in diagram_violations(outside))
    unmatched = [*good[:6], "tool_call", "turn_end", *good[-3:]]
    assert any("not followed" in p for p in diagram_violations(unmatched))


def test_turn_shape_needs_turns_that_close() -> None:
    no_turns = [line for line in word_count_trace() if line["type"] not in ("turn_start", "turn_end")]
    no_turns = [ln for ln in no_turns if ln["source"] != "model" and not ln["type"].startswith("tool_execution_")]
    finding = exp01.judge_turn_shape({"word-count": no_turns})
    assert not finding.holds and "no turn_start" in finding.evidence
    unclosed = word_count_trace()
    last_end = max(i for i, line in enumerate(unclosed) if line["type"] == "turn_end")
    del unclosed[last_end]
    finding = exp01.judge_turn_shape({"word-count": unclosed})
    assert not finding.holds and "never reached turn_end" in finding.evidence


def _standin_traces(experiment: object) -> dict[str, list[dict[str, Any]]]:
    from pinb.scenario.model import parse_scenario
    from pinb.scenario.standin import run_on_standin

    build = getattr(experiment, "scenarios", None) or experiment.hand  # type: ignore[attr-defined]
    scenarios = build({})
    return {name: run_on_standin(parse_scenario(scenario, source=name)) for name, scenario in scenarios.items()}


def test_continuation_explicit_needs_the_model_to_have_said_stop() -> None:
    traces = _standin_traces(exp01.JUDGED["loop.continuation-explicit"])
    finding = exp01.judge_continuation_explicit(traces)
    assert finding.holds, finding.evidence
    asked = copy.deepcopy(traces)
    first = next(ln for ln in asked["settle-continue"] if ln.get("role") == "assistant" and ln["type"] == "message_end")
    first["stopReason"] = "toolUse"
    finding = exp01.judge_continuation_explicit(asked)
    assert not finding.holds and "'settle-continue': 'toolUse'" in finding.evidence


def _ch16_verdict(name: str, traces: dict[str, list[dict[str, Any]]]) -> Any:
    from pinb.chapters.ch16.properties import PROPERTIES
    from pinb.chapters.properties import Witness, judge_witness

    prop = PROPERTIES[name]
    return judge_witness(prop, Witness("hand", prop.hand({}), traces))


def test_unsubscribe_needs_the_registration_to_have_run_first() -> None:
    traces = _standin_traces(exp16.EXPERIMENTS["dispatch.on-returns-unsubscribe"].property)
    assert _ch16_verdict("dispatch.on-returns-unsubscribe", traces).status == "OBSERVED"
    never = {"unsubscribe": [ln for ln in traces["unsubscribe"] if ln.get("handler") != "target"]}
    assert _ch16_verdict("dispatch.on-returns-unsubscribe", never).status == "NOT EXERCISED"


def test_follow_up_must_reach_the_model_before_settling() -> None:
    traces = _standin_traces(exp01.JUDGED["queue.follow-up-after-pending-work"])
    finding = exp01.judge_follow_up(traces)
    assert finding.holds, finding.evidence
    unasked = [ln for ln in traces["follow-up-app"] if not (ln["source"] == "model" and ln["type"] == "request")]
    finding = exp01.judge_follow_up({**traces, "follow-up-app": unasked})
    assert not finding.holds and "the request carrying it at -1" in finding.evidence


def test_core_runs_alone_needs_the_trace_to_say_its_layer() -> None:
    trace = word_count_trace()
    assert exp01.judge_core_runs_alone({"word-count": trace}).holds
    unlabelled = [line for line in trace if line["source"] != "meta"]
    assert not exp01.judge_core_runs_alone({"word-count": unlabelled}).holds


def test_turn_end_actionable_is_about_agent_before_settle_too() -> None:
    traces = _standin_traces(exp16.EXPERIMENTS["settle.turn-end-actionable"].property)
    assert set(traces) == {"turn-end", "settle-continue"}
    assert _ch16_verdict("settle.turn-end-actionable", traces).status == "OBSERVED"
    ignored = copy.deepcopy(traces)
    second = [ln for ln in ignored["settle-continue"] if ln["source"] == "model" and ln["type"] == "request"][1]
    ignored["settle-continue"].remove(second)
    verdict = _ch16_verdict("settle.turn-end-actionable", ignored)
    assert verdict.status == "CONTRADICTED" and "settle-continue: (requests: 1" in verdict.observed


def test_prompt_template_judge_reads_the_user_message_that_reached_the_model() -> None:
    from pinb.chapters.backends import run_standin_sync
    from pinb.chapters.ch01 import assembly

    traces = {name: run_standin_sync(s) for name, s in assembly.prompt_template({}).items()}
    finding = assembly.judge_prompt_template(traces)
    assert finding.holds, finding.evidence
    assert "'TEMPLATE: answer in one line about caching.'" in finding.evidence
    # The template's file is laid out but its text never reaches the model: the judge says so.
    unexpanded = copy.deepcopy(traces)
    for line in unexpanded["template"]:
        for message in line.get("messages", ()) if line.get("type") == "request" else ():
            if message.get("role") == "user":
                message["text"] = "/brief caching"
    assert not assembly.judge_prompt_template(unexpanded).holds


def test_core_alone_in_a_project_carries_no_agents_md_where_the_session_does() -> None:
    from pinb.chapters.backends import run_standin_sync
    from pinb.chapters.ch01 import assembly

    traces = {name: run_standin_sync(s) for name, s in assembly.core_alone({}).items()}
    finding = assembly.judge_core_loads_no_configuration(traces)
    assert finding.holds, finding.evidence
    assert traces["core"][0]["layer"] == "agent" and traces["app"][0]["layer"] == "app"
    # Had the core put the folder's AGENTS.md into its system prompt, the judge says so.
    loaded = copy.deepcopy(traces)
    next(line for line in loaded["core"] if line.get("source") == "request")["systemPrompt"] = assembly.CORE_RULE
    assert not assembly.judge_core_loads_no_configuration(loaded).holds
