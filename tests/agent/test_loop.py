"""The agent loop's event sequences, asserted exactly.

Every expected sequence below was observed on real Pi 1.6.0 (pi-agent-core + pi-ai's faux provider through
``Models.streamSimple``) with the same script, and is written here in the harness's one-line-per-event form.
"""

from __future__ import annotations

from pinb.agent.harness import AgentHarness, return_tool, sleep_tool, throw_tool, word_count_tool
from pinb.ai import faux_assistant_message, faux_text, faux_thinking, faux_tool_call


def ask(name: str, args: dict, id: str) -> object:
    return faux_tool_call(name, args, id=id)


async def test_chapter_01_word_count() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([ask("word_count", {"text": "the quick brown fox"}, "wc-1")], stop_reason="toolUse"),
            faux_assistant_message([faux_text("Four words.")]),
        ],
        tools=[word_count_tool()],
        system_prompt="You count words.",
    )
    await h.prompt("How many words in 'the quick brown fox'?")
    assert h.summary() == [
        "agent_start",
        "turn_start",
        "message_start user \"How many words in 'the quick brown fox'?\"",
        "message_end user \"How many words in 'the quick brown fox'?\"",
        "message_start assistant/pending",
        "message_end assistant/toolUse calls=[word_count]",
        'tool_execution_start word_count {"text":"the quick brown fox"}',
        'tool_execution_end word_count error=false "4" {"words":4}',
        'message_start toolResult word_count "4"',
        'message_end toolResult word_count "4"',
        "turn_end assistant/toolUse calls=[word_count] results=1",
        "turn_start",
        "message_start assistant/pending",
        'message_end assistant/stop "Four words."',
        'turn_end assistant/stop "Four words." results=0',
        "agent_end [user,assistant,toolResult,assistant]",
    ]
    # The initial system message is in the transcript but gets no events.
    assert [m.role for m in h.agent.state.messages] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert h.agent.state.system_prompt == "You count words."
    h.faux.assert_complete()


async def test_events_carry_pi_fields() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([ask("word_count", {"text": "a b"}, "c1")], stop_reason="toolUse"),
            faux_assistant_message("ok"),
        ],
        tools=[word_count_tool()],
    )
    await h.prompt("go")
    start, end = h.events_of_type("tool_execution_start")[0], h.events_of_type("tool_execution_end")[0]
    assert (start.tool_call_id, start.tool_name, start.args) == ("c1", "word_count", {"text": "a b"})
    assert (end.tool_call_id, end.tool_name, end.is_error) == ("c1", "word_count", False)
    assert end.result.details == {"words": 2}
    assert isinstance(end.duration_ms, int)
    turn_end = h.events_of_type("turn_end")[0]
    assert [r.tool_call_id for r in turn_end.tool_results] == ["c1"]
    assert turn_end.message.stop_reason == "toolUse"
    # Pi's JSON shape, camelCase and without undefined fields.
    assert end.model_dump(mode="json", by_alias=True, exclude_none=True)["toolCallId"] == "c1"
    final = h.events_of_type("message_end")[-1].message
    assert final.thinking_level == "off"  # the loop records the requested level on the final message
    agent_end = h.events_of_type("agent_end")[0]
    assert [m.role for m in agent_end.messages] == ["user", "assistant", "toolResult", "assistant"]


async def test_stream_updates_follow_pi_event_order() -> None:
    h = AgentHarness(
        [faux_assistant_message([faux_thinking("hmm"), faux_text("answer")])],
        token_size=1,
    )
    await h.prompt("go")
    kinds = [e.assistant_message_event.type for e in h.events_of_type("message_update")]
    assert kinds == [
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
    ]
    partials = [message.content for message in (e.message for e in h.events_of_type("message_update"))]
    assert partials[-1][1].text == "answer"
    assert h.summary()[4:6] == ["message_start assistant/pending", 'message_end assistant/stop "answer"']


async def test_parallel_tools_end_in_completion_order_results_in_source_order() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([ask("slow", {}, "a"), ask("fast", {}, "b")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ],
        tools=[sleep_tool("slow", 40, "S", updates=["s1"]), sleep_tool("fast", 5, "F", updates=["f1", "f2"])],
    )
    await h.prompt("go")
    assert h.summary()[6:18] == [
        "tool_execution_start slow {}",
        "tool_execution_start fast {}",
        'tool_execution_update slow "s1"',
        'tool_execution_update fast "f1"',
        'tool_execution_update fast "f2"',
        'tool_execution_end fast error=false "F" {}',
        'tool_execution_end slow error=false "S" {}',
        'message_start toolResult slow "S"',
        'message_end toolResult slow "S"',
        'message_start toolResult fast "F"',
        'message_end toolResult fast "F"',
        "turn_end assistant/toolUse calls=[slow,fast] results=2",
    ]


SEQUENTIAL_TAIL = [
    "tool_execution_start slow {}",
    'tool_execution_end slow error=false "S" {}',
    'message_start toolResult slow "S"',
    'message_end toolResult slow "S"',
    "tool_execution_start fast {}",
    'tool_execution_end fast error=false "F" {}',
    'message_start toolResult fast "F"',
    'message_end toolResult fast "F"',
    "turn_end assistant/toolUse calls=[slow,fast] results=2",
]


async def test_sequential_mode_runs_each_call_to_completion() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([ask("slow", {}, "a"), ask("fast", {}, "b")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ],
        tools=[sleep_tool("slow", 20, "S"), sleep_tool("fast", 1, "F")],
        tool_execution="sequential",
    )
    await h.prompt("go")
    assert h.summary()[6:15] == SEQUENTIAL_TAIL


async def test_one_sequential_tool_makes_its_batch_sequential() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([ask("slow", {}, "a"), ask("fast", {}, "b")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ],
        tools=[sleep_tool("slow", 20, "S"), sleep_tool("fast", 1, "F", execution_mode="sequential")],
    )
    await h.prompt("go")
    assert h.summary()[6:15] == SEQUENTIAL_TAIL


async def test_validation_errors_use_pi_text() -> None:
    h = AgentHarness(
        [
            faux_assistant_message(
                [ask("word_count", {"txt": "a b"}, "a"), ask("word_count", {"text": 42}, "b")], stop_reason="toolUse"
            ),
            faux_assistant_message("done"),
        ],
        tools=[word_count_tool()],
    )
    await h.prompt("go")
    ends = h.events_of_type("tool_execution_end")
    assert ends[0].is_error is True
    assert ends[0].result.content[0].text == (
        'Validation failed for tool "word_count":\n  - text: missing\n\nReceived arguments:\n{\n  "txt": "a b"\n}'
    )
    assert ends[0].result.details == {}
    # Pi coerces loosely typed arguments before checking them: 42 becomes "42".
    assert (ends[1].is_error, ends[1].result.details) == (False, {"words": 1})
    assert h.events_of_type("tool_execution_start")[1].args == {"text": 42}  # the raw call is untouched


async def test_unknown_tool_is_an_error_result() -> None:
    h = AgentHarness(
        [faux_assistant_message([ask("nope", {"x": 1}, "a")], stop_reason="toolUse"), faux_assistant_message("done")],
        tools=[word_count_tool()],
    )
    await h.prompt("go")
    assert h.summary()[6:10] == [
        'tool_execution_start nope {"x":1}',
        'tool_execution_end nope error=true "Tool nope not found" {}',
        'message_start toolResult nope error "Tool nope not found"',
        'message_end toolResult nope error "Tool nope not found"',
    ]


async def test_throwing_tool_is_an_error_result() -> None:
    h = AgentHarness(
        [faux_assistant_message([ask("boom", {}, "a")], stop_reason="toolUse"), faux_assistant_message("done")],
        tools=[throw_tool("boom", "kaput")],
    )
    await h.prompt("go")
    assert h.summary()[6:8] == ["tool_execution_start boom {}", 'tool_execution_end boom error=true "kaput" {}']
    assert h.events_of_type("turn_end")[-1].message.stop_reason == "stop"


async def test_tool_reporting_is_error_without_raising() -> None:
    h = AgentHarness(
        [faux_assistant_message([ask("bad", {}, "a")], stop_reason="toolUse"), faux_assistant_message("done")],
        tools=[return_tool("bad", "nope", {"kept": True}, is_error=True)],
    )
    await h.prompt("go")
    result = h.events_of_type("message_end")[2].message
    assert (result.role, result.is_error, result.details) == ("toolResult", True, {"kept": True})


async def test_length_stop_fails_every_call_and_asks_again() -> None:
    h = AgentHarness(
        [
            faux_assistant_message(
                [faux_text("partial"), ask("word_count", {"text": "a b"}, "a")], stop_reason="length"
            ),
            faux_assistant_message("done"),
        ],
        tools=[word_count_tool()],
    )
    await h.prompt("go")
    text = (
        'Tool call "word_count" was not executed: the response hit the output token limit, so its arguments may be '
        "truncated. Re-issue the tool call with complete arguments."
    )
    assert h.summary()[5:] == [
        'message_end assistant/length "partial" calls=[word_count]',
        'tool_execution_start word_count {"text":"a b"}',
        f'tool_execution_end word_count error=true "{text}" {{}}',
        f'message_start toolResult word_count error "{text}"',
        f'message_end toolResult word_count error "{text}"',
        'turn_end assistant/length "partial" calls=[word_count] results=1',
        "turn_start",
        "message_start assistant/pending",
        'message_end assistant/stop "done"',
        'turn_end assistant/stop "done" results=0',
        "agent_end [user,assistant,toolResult,assistant]",
    ]


async def test_length_stop_without_tool_calls_ends_the_run() -> None:
    h = AgentHarness([faux_assistant_message("cut off", stop_reason="length"), faux_assistant_message("unused")])
    await h.prompt("go")
    assert h.summary()[-2:] == ['turn_end assistant/length "cut off" results=0', "agent_end [user,assistant]"]
    assert h.faux.pending_response_count == 1


async def test_error_stop_ends_the_run_and_sets_state_error() -> None:
    h = AgentHarness(
        [
            faux_assistant_message("oops", stop_reason="error", error_message="provider exploded"),
            faux_assistant_message("unused"),
        ],
        tools=[word_count_tool()],
    )
    await h.prompt("go")
    assert h.summary()[4:] == [
        "message_start assistant/pending",
        'message_end assistant/error "oops" err=provider exploded',
        'turn_end assistant/error "oops" err=provider exploded results=0',
        "agent_end [user,assistant]",
    ]
    assert h.agent.state.error_message == "provider exploded"
    assert h.faux.pending_response_count == 1


async def test_aborted_stop_ends_the_run() -> None:
    h = AgentHarness([faux_assistant_message("x", stop_reason="aborted", error_message="Request was aborted")])
    await h.prompt("go")
    assert h.summary()[-2:] == [
        'turn_end assistant/aborted "x" err=Request was aborted results=0',
        "agent_end [user,assistant]",
    ]


async def test_script_running_dry_is_an_error_message() -> None:
    h = AgentHarness([faux_assistant_message("only one")])
    await h.prompt("one")
    await h.prompt("two")
    # No "start" event: the message starts and ends as the finished error message.
    assert h.summary()[-4:] == [
        "message_start assistant/error",
        "message_end assistant/error err=No more faux responses queued",
        "turn_end assistant/error err=No more faux responses queued results=0",
        "agent_end [user,assistant]",
    ]
    assert h.faux.exhausted_requests == 1


async def test_terminate_stops_after_the_batch_only_when_every_result_asks() -> None:
    both = AgentHarness(
        [
            faux_assistant_message([ask("fin", {}, "a"), ask("fin", {}, "b")], stop_reason="toolUse"),
            faux_assistant_message("unused"),
        ],
        tools=[return_tool("fin", "bye", terminate=True)],
    )
    await both.prompt("go")
    assert both.summary()[-2:] == [
        "turn_end assistant/toolUse calls=[fin,fin] results=2",
        "agent_end [user,assistant,toolResult,toolResult]",
    ]
    assert both.faux.pending_response_count == 1

    one = AgentHarness(
        [
            faux_assistant_message([ask("fin", {}, "a"), ask("word_count", {"text": "x"}, "b")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ],
        tools=[return_tool("fin", "bye", terminate=True), word_count_tool()],
    )
    await one.prompt("go")
    assert one.summary()[-1] == "agent_end [user,assistant,toolResult,toolResult,assistant]"


async def test_tool_updates_are_awaited_before_the_end() -> None:
    h = AgentHarness(
        [faux_assistant_message([ask("slow", {}, "a")], stop_reason="toolUse"), faux_assistant_message("done")],
        tools=[sleep_tool("slow", 2, "S", updates=["u1", "u2", "u3"])],
    )
    await h.prompt("go")
    assert h.summary()[6:11] == [
        "tool_execution_start slow {}",
        'tool_execution_update slow "u1"',
        'tool_execution_update slow "u2"',
        'tool_execution_update slow "u3"',
        'tool_execution_end slow error=false "S" {}',
    ]


async def test_no_system_message_without_prompt_or_tools() -> None:
    h = AgentHarness([faux_assistant_message("hi")])
    await h.prompt("go")
    assert [m.role for m in h.agent.state.messages] == ["user", "assistant"]
    assert h.agent.state.system_prompt == ""
