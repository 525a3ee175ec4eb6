"""Hooks of the loop: before/after tool call, finish_turn, prepare_request, prepare_next_turn.

Expected sequences were observed on real Pi 1.6.0 with equivalent hooks.
"""

from __future__ import annotations

from typing import Any

from pinb.agent import (
    AfterToolCallResult,
    AgentLoopTurnUpdate,
    AgentRequestUpdate,
    AgentTurnDecision,
    BeforeToolCallResult,
)
from pinb.agent.harness import AgentHarness, return_tool, word_count_tool
from pinb.ai import TextContent, UserMessage, faux_assistant_message, faux_tool_call


def user(text: str) -> UserMessage:
    return UserMessage(content=(TextContent(text=text),), timestamp=0)


async def before(ctx: Any, signal: Any) -> Any:
    if ctx.args.get("text") == "block me":
        return BeforeToolCallResult(block=True, reason="no way")
    if ctx.args.get("text") == "default block":
        return {"block": True}  # a dict with Pi's keys works too
    if ctx.args.get("text") == "mutate":
        ctx.args["text"] = "now it is five words"  # not validated again
        ctx.args["extra"] = 123
    return None


def after(ctx: Any, signal: Any) -> Any:
    if ctx.args.get("extra"):
        return AfterToolCallResult(details={"patched": True, "was": ctx.result.details}, is_error=True)
    if ctx.tool_call.name == "fin":
        raise RuntimeError("after hook failed")
    return None


async def test_before_and_after_tool_call() -> None:
    calls = [
        faux_tool_call("word_count", {"text": "block me"}, id="a"),
        faux_tool_call("word_count", {"text": "default block"}, id="b"),
        faux_tool_call("word_count", {"text": "mutate"}, id="c"),
        faux_tool_call("fin", {}, id="d"),
    ]
    h = AgentHarness(
        [faux_assistant_message(calls, stop_reason="toolUse"), faux_assistant_message("done")],
        tools=[word_count_tool(), return_tool("fin", "ok", parameters={"type": "object", "properties": {}})],
        before_tool_call=before,
        after_tool_call=after,
    )
    await h.prompt("go")
    assert h.summary()[6:23] == [
        'tool_execution_start word_count {"text":"block me"}',
        'tool_execution_end word_count error=true "no way" {}',
        'tool_execution_start word_count {"text":"default block"}',
        'tool_execution_end word_count error=true "Tool execution was blocked" {}',
        'tool_execution_start word_count {"text":"mutate"}',
        "tool_execution_start fin {}",
        'tool_execution_end word_count error=true "5" {"patched":true,"was":{"words":5}}',
        'tool_execution_end fin error=true "after hook failed" {}',
        'message_start toolResult word_count error "no way"',
        'message_end toolResult word_count error "no way"',
        'message_start toolResult word_count error "Tool execution was blocked"',
        'message_end toolResult word_count error "Tool execution was blocked"',
        'message_start toolResult word_count error "5"',
        'message_end toolResult word_count error "5"',
        'message_start toolResult fin error "after hook failed"',
        'message_end toolResult fin error "after hook failed"',
        "turn_end assistant/toolUse calls=[word_count,word_count,word_count,fin] results=4",
    ]
    # The transcript keeps the call as the model sent it.
    assert calls[2].arguments == {"text": "mutate"}


async def test_hook_contexts_carry_pi_fields() -> None:
    seen: dict[str, Any] = {}

    def spy_before(ctx: Any, signal: Any) -> None:
        seen["before"] = (ctx.assistant_message.stop_reason, ctx.tool_call.id, ctx.args, len(ctx.context.messages))
        seen["signal"] = signal

    def spy_after(ctx: Any, signal: Any) -> AfterToolCallResult:
        seen["after"] = (ctx.tool_call.id, ctx.result.details, ctx.is_error)
        return AfterToolCallResult(content=[TextContent(text="replaced")], terminate=True)

    h = AgentHarness(
        [faux_assistant_message([faux_tool_call("word_count", {"text": "a b"}, id="x")], stop_reason="toolUse")],
        tools=[word_count_tool()],
        before_tool_call=spy_before,
        after_tool_call=spy_after,
    )
    await h.prompt("go")
    assert seen["before"] == ("toolUse", "x", {"text": "a b"}, 3)  # user + the streamed assistant (+ no system)
    assert seen["after"] == ("x", {"words": 2}, False)
    assert seen["signal"] is not None and not seen["signal"].aborted
    # content replaced in full, details kept, terminate honoured (the only result of the batch asks for it)
    assert h.summary()[-3:] == [
        'message_end toolResult word_count "replaced"',
        "turn_end assistant/toolUse calls=[word_count] results=1",
        "agent_end [user,assistant,toolResult]",
    ]
    assert h.events_of_type("tool_execution_end")[0].result.details == {"words": 2}


async def test_blocked_call_can_terminate() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([faux_tool_call("word_count", {"text": "x"}, id="a")], stop_reason="toolUse"),
            faux_assistant_message("unused"),
        ],
        tools=[word_count_tool()],
        before_tool_call=lambda ctx, signal: BeforeToolCallResult(block=True, terminate=True),
    )
    await h.prompt("go")
    end = h.events_of_type("tool_execution_end")[0]
    assert (end.is_error, end.result.terminate) == (True, True)
    assert h.summary()[-1] == "agent_end [user,assistant,toolResult]"


async def test_finish_turn_prepare_request_and_prepare_next_turn() -> None:
    finished: list[str] = []

    def finish(turn: Any, signal: Any) -> Any:
        finished.append(turn.message.stop_reason)
        if len(finished) == 1:
            return AgentTurnDecision("continue")
        if len(finished) == 3:
            return {"action": "end"}
        return None

    requests: list[int] = []

    async def prepare(request: Any, signal: Any) -> None:
        requests.append(len(request.context.messages))
        # Appending to the live context reaches the model but emits no event.
        request.context.messages.append(user(f"req {len(request.context.messages)}"))

    def next_turn(turn: Any, signal: Any) -> AgentLoopTurnUpdate:
        return AgentLoopTurnUpdate(messages=[user(f"next after {turn.message.stop_reason}")])

    h = AgentHarness(
        [faux_assistant_message(t) for t in ("r1", "r2", "r3", "r4")],
        finish_turn=finish,
        prepare_request=prepare,
        prepare_next_turn_with_context=next_turn,
    )
    await h.prompt("go")
    assert h.summary() == [
        "agent_start",
        "turn_start",
        'message_start user "go"',
        'message_end user "go"',
        "message_start assistant/pending",
        'message_end assistant/stop "r1"',
        'turn_end assistant/stop "r1" results=0',
        "turn_start",
        'message_start user "next after stop"',
        'message_end user "next after stop"',
        "message_start assistant/pending",
        'message_end assistant/stop "r2"',
        'turn_end assistant/stop "r2" results=0',
        "agent_end [user,assistant,user,assistant]",
    ]
    assert finished == ["stop", "stop"]
    assert requests == [1, 4]
    assert [m.role for m in h.faux.requests[1].context.messages] == ["user", "user", "assistant", "user", "user"]
    assert h.faux.pending_response_count == 2


async def test_finish_turn_end_stops_before_tool_results_are_followed_up() -> None:
    h = AgentHarness(
        [
            faux_assistant_message([faux_tool_call("word_count", {"text": "x"}, id="a")], stop_reason="toolUse"),
            faux_assistant_message("unused"),
        ],
        tools=[word_count_tool()],
        finish_turn=lambda turn, signal: AgentTurnDecision("end"),
    )
    h.agent.follow_up("queued")
    await h.prompt("go")
    assert h.summary()[-2:] == [
        "turn_end assistant/toolUse calls=[word_count] results=1",
        "agent_end [user,assistant,toolResult]",
    ]
    assert h.agent.has_queued_messages()  # nothing polled the queues


async def test_prepare_request_can_switch_model_and_thinking_level() -> None:
    h = AgentHarness([faux_assistant_message("a")])
    other = h.faux.model.model_copy(update={"id": "faux-2"})
    h.agent.prepare_request = lambda req, signal: AgentRequestUpdate(model=other, thinking_level="high")
    await h.prompt("go")
    request = h.faux.requests[0]
    assert (request.model.id, request.options["reasoning"]) == ("faux-2", "high")
    final = h.events_of_type("message_end")[-1].message
    assert (final.model, final.thinking_level) == ("faux-2", "high")


async def test_transform_context_and_convert_to_llm_shape_the_request() -> None:
    seen: list[list[str]] = []

    async def transform(messages: Any, signal: Any) -> list[Any]:
        return [*messages, user("injected")]

    def convert(messages: Any) -> list[Any]:
        seen.append([m.role for m in messages])
        return [m for m in messages if m.role != "system"]

    h = AgentHarness(
        [faux_assistant_message("a")],
        system_prompt="sys",
        transform_context=transform,
        convert_to_llm=convert,
    )
    await h.prompt("go")
    assert seen == [["system", "user", "user"]]
    assert [m.role for m in h.faux.requests[0].context.messages] == ["user", "user"]
    assert [m.role for m in h.agent.state.messages] == ["system", "user", "assistant"]


async def test_run_tool_call_applies_the_same_steps_without_events() -> None:
    from pinb.agent import AgentContext, run_tool_call

    call = faux_tool_call("word_count", {"text": "a b c"}, id="n1")
    assistant = faux_assistant_message([call], stop_reason="toolUse")
    context = AgentContext(messages=[], tools=[])
    updates: list[Any] = []
    ok = await run_tool_call(
        assistant.content[0],
        tools=[word_count_tool()],
        assistant_message=assistant,
        context=context,
        on_update=updates.append,
    )
    assert (ok.is_error, ok.result.details) == (False, {"words": 3})
    blocked = await run_tool_call(
        assistant.content[0],
        tools=[word_count_tool()],
        assistant_message=assistant,
        context=context,
        before_tool_call=lambda ctx, signal: {"block": True, "reason": "nested call blocked"},
    )
    assert (blocked.is_error, blocked.result.content[0].text) == (True, "nested call blocked")
    missing = await run_tool_call(assistant.content[0], tools=[], assistant_message=assistant, context=context)
    assert missing.result.content[0].text == "Tool word_count not found"


async def test_prepare_next_turn_without_context_and_get_api_key() -> None:
    from pinb.agent import AgentContext

    signals: list[Any] = []
    replacement = AgentContext(messages=[user("only this")], tools=[])

    def next_turn(signal: Any) -> AgentLoopTurnUpdate:
        signals.append(signal)
        return AgentLoopTurnUpdate(context=replacement, thinking_level="low")

    h = AgentHarness(
        [
            faux_assistant_message([faux_tool_call("word_count", {"text": "x"}, id="a")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ],
        tools=[word_count_tool()],
        prepare_next_turn=next_turn,
        get_api_key=lambda provider: f"key-for-{provider}",
    )
    await h.prompt("go")
    assert len(signals) == 1 and signals[0] is not None
    second = h.faux.requests[1]
    # The replacement context is all the second request saw (it declares no tools and has none to run).
    assert [m.role for m in second.context.messages] == ["user"]
    assert (second.options["reasoning"], second.options["api_key"]) == ("low", "key-for-faux")
