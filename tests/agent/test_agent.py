"""The Agent shell: re-entrancy, listeners, the failure path, continue_, reset, state, tool declarations.

Sequences and error texts were observed on real Pi 1.6.0.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from pinb.agent import (
    BUSY_CONTINUE,
    BUSY_PROMPT,
    BUSY_RESET,
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    default_convert_to_llm,
    run_agent_loop,
    run_agent_loop_continue,
)
from pinb.agent.harness import AgentHarness, return_tool, sleep_tool, word_count_tool
from pinb.ai import (
    FauxProvider,
    ImageContent,
    Model,
    SystemMessage,
    TextContent,
    UserMessage,
    faux_assistant_message,
    faux_tool_call,
)
from pinb.errors import AgentBusyError, PinbError, ToolDefinitionError, UsageError


async def test_reentrant_calls_raise_pi_wording() -> None:
    h = AgentHarness([faux_assistant_message("r1")])
    errors: list[BaseException] = []

    async def reenter(harness: AgentHarness) -> None:
        for attempt in (lambda: harness.agent.prompt("again"), harness.agent.continue_):
            try:
                await attempt()
            except AgentBusyError as error:
                errors.append(error)
        try:
            harness.agent.reset()
        except AgentBusyError as error:
            errors.append(error)

    h.on("turn_start", 1, reenter)
    await h.prompt("go")
    assert [str(e) for e in errors] == [BUSY_PROMPT, BUSY_CONTINUE, BUSY_RESET]
    assert BUSY_PROMPT == (
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    )
    assert all(isinstance(e, PinbError) for e in errors)
    assert h.log[-1] == "agent_end [user,assistant]"  # the run itself was not disturbed


async def test_listener_that_raises_takes_the_failure_path() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([faux_tool_call("word_count", {"text": "a b"}, id="a")], stop_reason="toolUse"),
            faux_assistant_message("second"),
        ],
        tools=[word_count_tool()],
    )

    def explode(harness: AgentHarness) -> None:
        raise RuntimeError("listener exploded")

    h.on("tool_execution_end", 1, explode)
    await h.prompt("go")  # no exception escapes: the failure is data
    assert h.log[6:] == [
        'tool_execution_start word_count {"text":"a b"}',
        'tool_execution_end word_count error=false "2" {"words":2}',
        "message_start assistant/error",
        "message_end assistant/error err=listener exploded",
        "turn_end assistant/error err=listener exploded results=0",
        "agent_end [assistant]",
    ]
    failure = h.events_of_type("agent_end")[0].messages[0]
    assert (failure.content, failure.api, failure.model) == ((TextContent(text=""),), "faux", "faux-1")
    assert h.agent.state.error_message == "listener exploded"
    assert not h.agent.state.is_streaming
    # The agent is usable again, and the transcript kept what was committed before the failure.
    await h.prompt("again")
    assert [m.role for m in h.agent.state.messages] == ["system", "user", "assistant", "assistant", "user", "assistant"]


async def test_unsubscribe_during_dispatch_takes_effect_at_once() -> None:
    h = AgentHarness([faux_assistant_message("r1")], token_size=1000)
    seen: list[str] = []
    unsubscribe_b: Any = None

    def first(event: Any, signal: Any) -> None:
        seen.append(f"first {event.type}")
        if event.type == "message_end" and "unsubscribed B" not in seen:
            assert unsubscribe_b() is True
            seen.append("unsubscribed B")

    def b(event: Any, signal: Any) -> None:
        seen.append(f"B {event.type}")

    def install(harness: AgentHarness) -> None:
        nonlocal unsubscribe_b
        harness.agent.subscribe(first)
        unsubscribe_b = harness.agent.subscribe(b)

    h.on("message_start", 1, install)
    await h.prompt("go")
    # Listeners added during a dispatch see that same event; B removed by `first` misses the message_end at once.
    assert seen[:5] == [
        "first message_start",
        "B message_start",
        "first message_end",
        "unsubscribed B",
        "first message_start",
    ]
    assert not any(s.startswith("B ") for s in seen[2:])
    assert unsubscribe_b() is False


async def test_async_listeners_are_awaited_one_at_a_time_in_order() -> None:
    h = AgentHarness([faux_assistant_message("r1")])
    order: list[str] = []

    async def slow(event: Any, signal: Any) -> None:
        order.append(f"slow>{event.type}")
        await asyncio.sleep(0.001)
        order.append(f"slow<{event.type}")

    def fast(event: Any, signal: Any) -> None:
        order.append(f"fast {event.type}")

    h.agent.subscribe(slow)
    h.agent.subscribe(fast)
    h.agent.subscribe(fast)  # the same listener twice is one listener, as in a Set
    await h.prompt("go")
    assert order[:6] == [
        "slow>agent_start",
        "slow<agent_start",
        "fast agent_start",
        "slow>turn_start",
        "slow<turn_start",
        "fast turn_start",
    ]
    assert order[-1] == "fast agent_end"


async def test_continue_after_error_and_from_assistant() -> None:
    h = AgentHarness(
        [faux_assistant_message("x", stop_reason="error", error_message="boom"), faux_assistant_message("recovered")]
    )
    await h.prompt("go")
    # The last message is an assistant error: continuing needs a queued message.
    with pytest.raises(UsageError, match=r"^Cannot continue from message role: assistant$"):
        await h.agent.continue_()
    h.agent.steer("please retry")
    await h.agent.continue_()
    assert h.log[-8:] == [
        "agent_start",
        "turn_start",
        'message_start user "please retry"',
        'message_end user "please retry"',
        "message_start assistant/pending",
        'message_end assistant/stop "recovered"',
        'turn_end assistant/stop "recovered" results=0',
        "agent_end [user,assistant]",
    ]
    # A queued follow-up alone also lets a run continue from an assistant message.
    h.set_responses([faux_assistant_message("followed")])
    h.agent.follow_up("and then this")
    await h.agent.continue_()
    assert h.log[-6:-4] == ['message_start user "and then this"', 'message_end user "and then this"']
    h.faux.assert_complete()


async def test_continue_from_a_tool_result_reruns_the_request() -> None:
    faux = FauxProvider(token_size=1000)
    faux.set_responses([faux_assistant_message("answer")])
    agent = Agent(stream_fn=faux.stream, initial_state={"model": faux.get_model()})
    agent.state.messages = [UserMessage(content="hi"), faux_assistant_message("x", stop_reason="error")]
    with pytest.raises(UsageError):
        await agent.continue_()
    agent.state.messages = [UserMessage(content="hi")]
    seen: list[str] = []
    agent.subscribe(lambda e, s: seen.append(e.type))
    await agent.continue_()
    assert seen == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_update",
        "message_update",
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    with pytest.raises(UsageError, match=r"^No messages to continue from$"):
        agent.state.messages = [SystemMessage(content="sys")]
        await agent.continue_()


async def test_reset_keeps_the_replayed_prompt_and_tools() -> None:
    h = AgentHarness([faux_assistant_message("a")], system_prompt="You count words.", tools=[word_count_tool()])
    h.agent.follow_up("later")
    await h.prompt("go")
    h.agent.steer("x")
    h.agent.reset()
    assert [m.role for m in h.agent.state.messages] == ["system"]
    baseline = h.agent.state.messages[0]
    assert baseline.content == "You count words." and [t.name for t in baseline.tools_added] == ["word_count"]
    assert not h.agent.has_queued_messages()


async def test_state_while_running() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([faux_tool_call("slow", {}, id="a")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ],
        tools=[sleep_tool("slow", 5, "S")],
    )
    snapshots: list[tuple[Any, ...]] = []

    def look(harness: AgentHarness) -> None:
        state = harness.agent.state
        snapshots.append((state.is_streaming, set(state.pending_tool_calls), state.streaming_message is not None))

    h.on("tool_execution_start", 1, look).on("message_update", 1, look).on("agent_end", 1, look)
    await h.prompt("go")
    assert snapshots == [(True, set(), True), (True, {"a"}, False), (True, set(), False)]
    assert not h.agent.state.is_streaming and h.agent.signal is None
    await h.agent.wait_for_idle()


async def test_wait_for_idle_covers_agent_end_listeners() -> None:
    h = AgentHarness([faux_assistant_message("a")])
    finished: list[str] = []

    async def slow_end(event: Any, signal: Any) -> None:
        if event.type == "agent_end":
            await asyncio.sleep(0.005)
            finished.append("agent_end listener")

    h.agent.subscribe(slow_end)
    task = asyncio.ensure_future(h.prompt("go"))
    await asyncio.sleep(0)
    assert h.agent.state.is_streaming
    await h.agent.wait_for_idle()
    assert finished == ["agent_end listener"]
    await task


async def test_prompt_inputs() -> None:
    h = AgentHarness([faux_assistant_message("a"), faux_assistant_message("b"), faux_assistant_message("c")])
    image = ImageContent(data="AAAA", mime_type="image/png")
    await h.agent.prompt("look", images=[image])
    first = h.events_of_type("message_end")[0].message
    assert [b.type for b in first.content] == ["text", "image"]
    await h.agent.prompt([UserMessage(content="one"), UserMessage(content="two")])
    await h.agent.prompt({"role": "user", "content": [{"type": "text", "text": "as json"}], "timestamp": 5})
    users = [m for m in h.agent.state.messages if m.role == "user"]
    assert [u.content if isinstance(u.content, str) else u.content[0].text for u in users] == [
        "look",
        "one",
        "two",
        "as json",
    ]


async def test_tool_set_changes_are_declared_with_system_messages() -> None:
    wc, fin = word_count_tool(), return_tool("fin", "ok")
    h = AgentHarness([faux_assistant_message(t) for t in "abcd"], system_prompt="sys", tools=[wc, fin])
    await h.prompt("a")
    h.agent.state.tools = [fin]
    await h.prompt("b")
    h.agent.state.tools = [dataclasses.replace(wc, description="changed"), fin]
    await h.prompt("c")
    h.agent.state.tools = []
    await h.prompt("d")
    systems = [line for line in h.log if line.startswith("message_end system")]
    assert systems == [
        "message_end system -[word_count]",
        "message_end system +[word_count]",
        "message_end system -[fin,word_count]",
    ]
    assert [m.role for m in h.events_of_type("agent_end")[1].messages] == ["system", "user", "assistant"]
    # What the model was told, folded in order.
    request = h.faux.requests[2]
    declared = [t.name for m in request.context.messages if m.role == "system" for t in (m.tools_added or ())]
    assert declared == ["word_count", "fin", "word_count"]
    assert h.agent.state.system_prompt == "sys"


async def test_pending_system_message_carries_the_tool_delta() -> None:
    h = AgentHarness([faux_assistant_message("a")])
    h.agent.state.tools = [word_count_tool()]
    await h.prompt([SystemMessage(content="extra rules"), UserMessage(content="go")])
    system = h.events_of_type("message_end")[0].message
    assert (system.content, [t.name for t in system.tools_added]) == ("extra rules", ["word_count"])
    assert [m.role for m in h.agent.state.messages] == ["system", "user", "assistant"]
    assert h.agent.state.system_prompt == "extra rules"


async def test_run_agent_loop_is_stateless_and_emits_to_a_sink() -> None:
    faux = FauxProvider(token_size=1000)
    faux.set_responses([faux_assistant_message("hello")])
    events: list[str] = []
    context = AgentContext(messages=[], tools=[])
    config = AgentLoopConfig(model=faux.get_model(), convert_to_llm=default_convert_to_llm())
    new = await run_agent_loop(
        [UserMessage(content="hi")], context, config, lambda e: events.append(e.type), None, faux.stream
    )
    assert [m.role for m in new] == ["user", "assistant"]
    assert context.messages == []  # the loop works on its own copy
    assert events == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update",
        "message_update",
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    with pytest.raises(UsageError, match="Cannot continue: no messages in context"):
        await run_agent_loop_continue(context, config, lambda e: None, None, faux.stream)
    with pytest.raises(UsageError, match="Cannot continue from message role: assistant"):
        await run_agent_loop_continue(AgentContext(messages=new), config, lambda e: None, None, faux.stream)


def test_misuse_raises_at_once() -> None:
    with pytest.raises(ToolDefinitionError, match="name"):
        AgentTool(name="", parameters={}, execute=lambda *a: None)
    with pytest.raises(ToolDefinitionError, match="parameters"):
        AgentTool(name="x", parameters=None, execute=lambda *a: None)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="execute"):
        AgentTool(name="x", parameters={}, execute=None)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="stream_fn"):
        Agent(stream_fn=None)  # type: ignore[arg-type]
    assert word_count_tool().label == "Word Count"
    assert return_tool("fin").label == "fin"


async def test_hooks_failing_inside_the_loop_are_data() -> None:
    def broken(request: Any, signal: Any) -> None:
        raise ValueError("prepare_request broke")

    h = AgentHarness([faux_assistant_message("unused")], prepare_request=broken)
    await h.prompt("go")
    assert h.log[-3:] == [
        "message_end assistant/error err=prepare_request broke",
        "turn_end assistant/error err=prepare_request broke results=0",
        "agent_end [assistant]",
    ]


def test_default_model_and_custom_model() -> None:
    agent = Agent(stream_fn=FauxProvider().stream)
    assert agent.state.model.id == "unknown"
    model = Model(id="m", name="m", api="faux", provider="faux")
    assert Agent(stream_fn=FauxProvider().stream, initial_state={"model": model}).state.model is model


async def test_a_listener_may_take_just_the_event() -> None:
    h = AgentHarness([faux_assistant_message("a")])
    types: list[str] = []
    h.agent.subscribe(lambda event: types.append(event.type))
    await h.prompt("go")
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert h.log[-1] == "agent_end [user,assistant]"


async def test_a_listener_failing_on_agent_end_still_gets_the_failure_events() -> None:
    h = AgentHarness([faux_assistant_message("r1"), faux_assistant_message("r2")])
    failed = False

    def fail_once(harness: AgentHarness) -> None:
        nonlocal failed
        if not failed:
            failed = True
            raise RuntimeError("end listener failed")

    h.on("agent_end", 1, fail_once)
    await h.prompt("go")
    assert h.log[-5:] == [
        "agent_end [user,assistant]",
        "message_start assistant/error",
        "message_end assistant/error err=end listener failed",
        "turn_end assistant/error err=end listener failed results=0",
        "agent_end [assistant]",
    ]
    await h.prompt("again")
    assert [m.role for m in h.agent.state.messages] == ["user", "assistant", "assistant", "user", "assistant"]


async def test_agent_loop_as_an_event_stream() -> None:
    from pinb.agent import agent_loop, agent_loop_continue

    faux = FauxProvider(token_size=1000)
    faux.set_responses([faux_assistant_message("hello")])
    config = AgentLoopConfig(model=faux.get_model(), convert_to_llm=default_convert_to_llm())
    stream = agent_loop([UserMessage(content="hi")], AgentContext(), config, None, faux.stream)
    types = [event.type async for event in stream]
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert [m.role for m in await stream.result()] == ["user", "assistant"]
    with pytest.raises(UsageError):
        agent_loop_continue(AgentContext(), config, None, faux.stream)

    def broken(request: Any, signal: Any) -> None:
        raise ValueError("hook broke")

    broken_config = dataclasses.replace(config, prepare_request=broken)
    failing = agent_loop([UserMessage(content="hi")], AgentContext(), broken_config, None, faux.stream)
    with pytest.raises(ValueError, match="hook broke"):
        [event async for event in failing]
