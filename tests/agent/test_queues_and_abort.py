"""Steering and follow-up queues (both modes) and abort, as Pi 1.6.0 delivers them.

Expected sequences were observed on real Pi 1.6.0 with the same scripts and triggers.
"""

from __future__ import annotations

from pinb.agent.harness import AgentHarness, sleep_tool
from pinb.ai import faux_assistant_message, faux_tool_call


def steer(text: str):
    return lambda h: (h.note(f"steer {text}"), h.agent.steer(text))


def follow_up(text: str):
    return lambda h: (h.note(f"follow_up {text}"), h.agent.follow_up(text))


def abort(h: AgentHarness) -> None:
    h.note("abort")
    h.agent.abort()


def slow_turn(*answers: str) -> list:
    return [
        faux_assistant_message([faux_tool_call("slow", {}, id="a")], stop_reason="toolUse"),
        *(faux_assistant_message(a) for a in answers),
    ]


async def test_steering_one_at_a_time_is_delivered_after_the_tool_batch() -> None:
    h = AgentHarness(slow_turn("r1", "r2", "r3"), tools=[sleep_tool("slow", 20, "S")])
    h.on("tool_execution_start", 1, steer("s1")).on("tool_execution_start", 1, steer("s2"))
    await h.prompt("go")
    assert h.log[6:] == [
        "tool_execution_start slow {}",
        "# steer s1",
        "# steer s2",
        'tool_execution_end slow error=false "S" {}',
        'message_start toolResult slow "S"',
        'message_end toolResult slow "S"',
        "turn_end assistant/toolUse calls=[slow] results=1",
        "turn_start",
        'message_start user "s1"',
        'message_end user "s1"',
        "message_start assistant/pending",
        'message_end assistant/stop "r1"',
        'turn_end assistant/stop "r1" results=0',
        "turn_start",
        'message_start user "s2"',
        'message_end user "s2"',
        "message_start assistant/pending",
        'message_end assistant/stop "r2"',
        'turn_end assistant/stop "r2" results=0',
        "agent_end [user,assistant,toolResult,user,assistant,user,assistant]",
    ]


async def test_steering_all_delivers_every_queued_message_at_once() -> None:
    h = AgentHarness(slow_turn("r1", "r2"), tools=[sleep_tool("slow", 20, "S")], steering_mode="all")
    h.on("tool_execution_start", 1, steer("s1")).on("tool_execution_start", 1, steer("s2"))
    await h.prompt("go")
    assert h.log[13:] == [
        "turn_start",
        'message_start user "s1"',
        'message_end user "s1"',
        'message_start user "s2"',
        'message_end user "s2"',
        "message_start assistant/pending",
        'message_end assistant/stop "r1"',
        'turn_end assistant/stop "r1" results=0',
        "agent_end [user,assistant,toolResult,user,user,assistant]",
    ]
    assert h.faux.pending_response_count == 1


async def test_follow_ups_wait_until_the_agent_would_stop_steering_goes_first() -> None:
    h = AgentHarness(slow_turn("r1", "r2", "r3"), tools=[sleep_tool("slow", 20, "S")])
    h.on("tool_execution_start", 1, follow_up("f1")).on("tool_execution_start", 1, follow_up("f2"))
    h.on("tool_execution_start", 1, steer("s1"))
    await h.prompt("go")
    users = [line for line in h.log if line.startswith("message_end user")]
    assert users == ['message_end user "go"', 'message_end user "s1"', 'message_end user "f1"', 'message_end user "f2"']
    assert h.log[-1] == "agent_end [user,assistant,toolResult,user,assistant,user,assistant,user,assistant]"
    assert h.types().count("turn_start") == 4


async def test_follow_ups_all_mode() -> None:
    h = AgentHarness([faux_assistant_message("r1"), faux_assistant_message("r2")], follow_up_mode="all")
    h.on("message_start", 2, follow_up("f1")).on("message_start", 2, follow_up("f2"))
    await h.prompt("go")
    assert h.log[4:] == [
        "message_start assistant/pending",
        "# follow_up f1",
        "# follow_up f2",
        'message_end assistant/stop "r1"',
        'turn_end assistant/stop "r1" results=0',
        "turn_start",
        'message_start user "f1"',
        'message_end user "f1"',
        'message_start user "f2"',
        'message_end user "f2"',
        "message_start assistant/pending",
        'message_end assistant/stop "r2"',
        'turn_end assistant/stop "r2" results=0',
        "agent_end [user,assistant,user,user,assistant]",
    ]


async def test_abort_during_streaming_ends_the_run_with_the_partial_message() -> None:
    h = AgentHarness(
        [faux_assistant_message("a fairly long answer that streams in many chunks"), faux_assistant_message("unused")],
        token_size=1,
        tokens_per_second=400,
    )
    h.on("message_update", 3, abort)
    await h.prompt("go")
    assert h.log[4:] == [
        "message_start assistant/pending",
        "# abort",
        'message_end assistant/aborted "a fairly" err=Request was aborted',
        'turn_end assistant/aborted "a fairly" err=Request was aborted results=0',
        "agent_end [user,assistant]",
    ]
    assert h.agent.state.error_message == "Request was aborted"
    assert h.faux.pending_response_count == 1


async def test_abort_on_a_progress_update_leaves_unstarted_calls_with_operation_aborted() -> None:
    """Queued messages survive the abort; the next request is refused before it reaches the model."""
    h = AgentHarness(
        slow_turn("unused"),
        tools=[sleep_tool("slow", 200, "S", updates=["tick"]), sleep_tool("other", 200, "O")],
    )
    h.faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("slow", {}, id="a"), faux_tool_call("other", {}, id="b")], stop_reason="toolUse"
            ),
            faux_assistant_message("unused"),
        ]
    )
    h.on("tool_execution_start", 2, steer("later"))
    h.on("tool_execution_update", 1, abort)
    await h.prompt("go")
    assert h.log[6:] == [
        "tool_execution_start slow {}",
        "tool_execution_start other {}",
        "# steer later",
        'tool_execution_update slow "tick"',
        "# abort",
        'tool_execution_end other error=true "Operation aborted" {}',
        'tool_execution_end slow error=true "slow aborted" {}',
        'message_start toolResult slow error "slow aborted"',
        'message_end toolResult slow error "slow aborted"',
        'message_start toolResult other error "Operation aborted"',
        'message_end toolResult other error "Operation aborted"',
        "turn_end assistant/toolUse calls=[slow,other] results=2",
        "turn_start",
        'message_start user "later"',
        'message_end user "later"',
        "message_start assistant/aborted",
        "message_end assistant/aborted err=This operation was aborted",
        "turn_end assistant/aborted err=This operation was aborted results=0",
        "agent_end [user,assistant,toolResult,toolResult,user,assistant]",
    ]
    assert h.faux.pending_response_count == 1  # the refused request never reached the script
    assert len(h.faux.requests) == 1


async def test_abort_during_preflight_skips_hooks_and_keeps_follow_ups_queued() -> None:
    h = AgentHarness(
        [
            faux_assistant_message(
                [faux_tool_call("slow", {}, id="a"), faux_tool_call("other", {}, id="b")], stop_reason="toolUse"
            ),
            faux_assistant_message("unused"),
        ],
        tools=[sleep_tool("slow", 50, "S"), sleep_tool("other", 50, "O")],
        before_tool_call=lambda ctx, signal: (_ for _ in ()).throw(AssertionError("hook must not run")),
    )
    h.on("tool_execution_start", 1, abort).on("tool_execution_start", 1, follow_up("later"))
    await h.prompt("go")
    assert h.log[6:13] == [
        "tool_execution_start slow {}",
        "# abort",
        "# follow_up later",
        'tool_execution_end slow error=true "Operation aborted" {}',
        "tool_execution_start other {}",
        'tool_execution_end other error=true "Operation aborted" {}',
        'message_start toolResult slow error "Operation aborted"',
    ]
    assert h.log[-1] == "agent_end [user,assistant,toolResult,toolResult,assistant]"
    assert h.agent.has_queued_messages()
    assert [m.role for m in h.agent.peek_queued_messages()] == ["user"]


async def test_abort_when_idle_does_nothing_and_signal_is_per_run() -> None:
    h = AgentHarness([faux_assistant_message("a"), faux_assistant_message("b")])
    h.agent.abort()
    assert h.agent.signal is None
    signals = []
    h.agent.subscribe(lambda event, signal: signals.append(signal))
    await h.prompt("one")
    await h.prompt("two")
    assert len({id(s) for s in signals}) == 2
    assert not any(s.aborted for s in signals)
    assert h.log[-1] == "agent_end [user,assistant]"


def user_lines(h: AgentHarness) -> list[str]:
    return [line.split(" ", 2)[2] for line in h.log if line.startswith("message_end user")]


async def test_steering_queued_while_idle_joins_the_first_request() -> None:
    h = AgentHarness([faux_assistant_message(f"r{i}") for i in range(1, 5)])
    h.agent.steer("early1")
    h.agent.steer("early2")
    h.agent.follow_up("f")
    await h.prompt("go")
    assert h.log[:7] == [
        "agent_start",
        "turn_start",
        'message_start user "go"',
        'message_end user "go"',
        'message_start user "early1"',
        'message_end user "early1"',
        "message_start assistant/pending",
    ]
    assert user_lines(h) == ['"go"', '"early1"', '"early2"', '"f"']
    assert h.types().count("turn_start") == 3


async def test_continue_from_an_assistant_message_drains_steering_first() -> None:
    h = AgentHarness([faux_assistant_message(f"r{i}") for i in range(1, 6)])
    await h.prompt("go")
    h.agent.steer("s1")
    h.agent.steer("s2")
    h.agent.follow_up("f1")
    await h.agent.continue_()
    # The first steering message starts the run; the initial poll is skipped so s2 waits for the next turn.
    assert user_lines(h) == ['"go"', '"s1"', '"s2"', '"f1"']
    assert h.log[-1] == "agent_end [user,assistant,user,assistant,user,assistant]"
    assert h.types().count("turn_start") == 4


async def test_continue_with_steering_all_takes_every_queued_message() -> None:
    h = AgentHarness([faux_assistant_message(f"r{i}") for i in range(1, 4)], steering_mode="all")
    await h.prompt("go")
    h.agent.steer("s1")
    h.agent.steer("s2")
    await h.agent.continue_()
    assert h.log[-8:-4] == [
        'message_start user "s1"',
        'message_end user "s1"',
        'message_start user "s2"',
        'message_end user "s2"',
    ]
    assert h.faux.pending_response_count == 1
