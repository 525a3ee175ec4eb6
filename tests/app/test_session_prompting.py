"""AgentSession prompting: busy rules, steering and follow-up queues, custom messages, lifecycle events."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from app_harness import Recorder, make_session, traced

from pinb.agent import AgentTool, text_result
from pinb.ai import message_text
from pinb.ai.faux import faux_assistant_message, faux_tool_call
from pinb.ai.transcript import get_current_tools
from pinb.app.extensions import ExtensionAPI
from pinb.errors import AgentBusyError, ExtensionError, UsageError

BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."


def slow_tool(gate: asyncio.Event) -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        await gate.wait()
        return text_result("slept", {})

    return AgentTool(name="wait", parameters={"type": "object", "properties": {}}, execute=execute)


def waiting_turn() -> list[Any]:
    return [faux_assistant_message(faux_tool_call("wait", {}), stop_reason="toolUse")]


async def test_prompt_while_busy_raises_pis_error_and_queues_with_a_streaming_behavior() -> None:
    gate = asyncio.Event()
    responses = [*waiting_turn(), faux_assistant_message("after steer"), faux_assistant_message("after follow-up")]
    session, faux = await make_session(responses, tools=[slow_tool(gate)])
    recorder = Recorder()
    session.subscribe(recorder.session)
    errors: list[str] = []

    async def meddle() -> None:
        try:
            await session.prompt("now!")
        except AgentBusyError as error:
            errors.append(str(error))
        await session.prompt("steer me", streaming_behavior="steer")
        await session.prompt("and then", streaming_behavior="followUp")
        gate.set()

    tasks: list[asyncio.Task[None]] = []

    def on_event(event: Any) -> None:
        if event.type == "tool_execution_start":
            tasks.append(asyncio.ensure_future(meddle()))

    session.subscribe(on_event)
    await session.prompt("start")
    assert errors == [BUSY]
    lines = [line for line in recorder.lines if "queue_update" in line or ":user:" in line or "settled" in line]
    assert lines == [
        "session message_start:user:start",
        "session message_end:user:start",
        "session queue_update:['steer me']|[]",
        "session queue_update:['steer me']|['and then']",
        "session queue_update:[]|['and then']",
        "session message_start:user:steer me",
        "session message_end:user:steer me",
        "session queue_update:[]|[]",
        "session message_start:user:and then",
        "session message_end:user:and then",
        "session agent_settled:False",
    ]
    faux.assert_complete()


async def test_steer_and_follow_up_run_input_handlers_with_the_streaming_behavior() -> None:
    seen: list[tuple[str, str, str | None]] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, c: seen.append((e.text, e.source, e.streaming_behavior)))

    gate = asyncio.Event()
    session, _ = await make_session(
        [*waiting_turn(), faux_assistant_message("ok")], ("x", ext), tools=[slow_tool(gate)]
    )

    async def meddle() -> None:
        assert await session.steer("s", source="rpc") == "queued"
        gate.set()

    session.subscribe(lambda e: asyncio.ensure_future(meddle()) if e.type == "tool_execution_start" else None)
    await session.prompt("p")
    assert seen == [("p", "interactive", None), ("s", "rpc", "steer")]


async def test_bind_emits_session_start_and_shutdown_emits_session_shutdown() -> None:
    recorder = Recorder()

    captured: list[ExtensionAPI] = []

    def ext(pi: ExtensionAPI) -> None:
        captured.append(pi)
        pi.on("session_start", traced(recorder, "start", lambda e, c: recorder.lines.append(e.reason)))
        pi.on("session_shutdown", traced(recorder, "stop", lambda e, c: recorder.lines.append(e.reason)))

    session, _ = await make_session([], ("x", ext))
    await session.shutdown()
    assert recorder.lines == ["startup", "ext start session_start", "quit", "ext stop session_shutdown"]
    with pytest.raises(ExtensionError, match="stale"):
        assert session.extension_runner.create_context().has_ui
    with pytest.raises(ExtensionError, match="stale"):
        captured[0].on("agent_start", lambda e, c: None)


async def test_a_prompt_sent_while_agent_settled_is_emitted_runs_after_it() -> None:
    recorder = Recorder()
    prompted: list[bool] = []

    def ext(pi: ExtensionAPI) -> None:
        def again(event: Any, ctx: Any) -> None:
            if not prompted:
                prompted.append(True)
                pi.send_user_message("second")

        pi.on("agent_settled", again)

    session, faux = await make_session([faux_assistant_message("one"), faux_assistant_message("two")], ("x", ext))
    session.subscribe(recorder.session)
    await session.prompt("first")
    # As in Pi, the deferred prompt runs inside the first prompt's settlement: both settled before it returns.
    settled = [i for i, line in enumerate(recorder.lines) if "agent_settled" in line]
    second = recorder.lines.index("session message_start:user:second")
    assert len(settled) == 2 and settled[0] < second < settled[1]
    faux.assert_complete()


async def test_custom_message_while_idle_is_appended_with_message_events_and_no_run() -> None:
    session, faux = await make_session([])
    recorder = Recorder()
    session.subscribe(recorder.session)
    await session.send_custom_message({"customType": "note", "content": "FYI", "display": True})
    assert recorder.lines == ["session message_start:custom:FYI", "session message_end:custom:FYI"]
    assert faux.requests == [] and session.messages[-1].custom_type == "note"


async def test_custom_message_with_trigger_turn_starts_a_custom_run() -> None:
    seen: list[tuple[str, Any]] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("before_agent_start", lambda e, c: seen.append((e.message_type, e.message.custom_type)))

    session, faux = await make_session([faux_assistant_message("ok")], ("x", ext))
    await session.send_custom_message({"customType": "ping", "content": "wake up"}, trigger_turn=True)
    assert seen == [("custom", "ping")]
    assert [m.role for m in faux.requests[0].context.messages] == ["system", "user"]
    assert message_text(faux.requests[0].context.messages[-1]) == "wake up"


async def test_next_turn_custom_message_goes_with_the_next_prompt() -> None:
    session, faux = await make_session([faux_assistant_message("ok")])
    await session.send_custom_message({"customType": "aside", "content": "context"}, deliver_as="nextTurn")
    assert faux.requests == []
    await session.prompt("hi")
    assert [m.role for m in session.messages] == ["system", "user", "custom", "assistant"]


async def test_append_entry_emits_entry_appended_and_never_reaches_the_model() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("agent_start", lambda e, c: pi.append_entry("state", {"n": 1}))

    session, faux = await make_session([faux_assistant_message("ok")], ("x", ext))
    recorder = Recorder()
    session.subscribe(recorder.session)
    await session.prompt("hi")
    assert recorder.lines[0] == "session entry_appended:custom"
    assert [m.role for m in faux.requests[0].context.messages] == ["system", "user"]


async def test_set_active_tools_changes_what_the_next_request_declares() -> None:
    def ext(pi: ExtensionAPI) -> None:
        async def echo(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any) -> Any:
            return text_result(params["text"], {})

        pi.register_tool(
            name="echo",
            description="Echo text.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            execute=echo,
        )
        pi.on("agent_end", lambda e, c: pi.set_active_tools(["echo"]))

    responses = [faux_assistant_message(faux_tool_call("echo", {"text": "hey"}), stop_reason="toolUse")]
    session, faux = await make_session(
        [*responses, faux_assistant_message("a"), faux_assistant_message("b")], ("x", ext)
    )
    assert session.get_active_tool_names() == ["bash", "echo"]
    await session.prompt("one")
    assert message_text(next(m for m in session.messages if m.role == "toolResult")) == "hey"
    assert session.get_active_tool_names() == ["echo"]
    await session.prompt("two")
    declared = [t.name for t in get_current_tools(faux.requests[-1].context.messages)]
    assert declared == ["echo"]
    assert [t.name for t in get_current_tools(faux.requests[0].context.messages)] == ["bash", "echo"]


async def test_wrong_result_shapes_are_reported_never_silent() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("before_agent_start", lambda e, c: {"prompt": "rewritten"})
        pi.on("turn_end", lambda e, c: {"continue": "yes please"})

    session, _ = await make_session([faux_assistant_message("ok")], ("x", ext))
    await session.prompt("hi")
    events = [(e.event, e.error.split(":")[0]) for e in session.extension_errors]
    assert events == [
        ("before_agent_start", "Invalid before_agent_start handler result"),
        ("turn_end", "Invalid turn_end handler result"),
    ]


async def test_extension_failing_to_load_is_reported_and_the_rest_load() -> None:
    log: list[str] = []

    def broken(pi: ExtensionAPI) -> None:
        pi.on("agent_start", lambda e, c: log.append("broken"))
        raise RuntimeError("cannot start")

    def fine(pi: ExtensionAPI) -> None:
        pi.on("agent_start", lambda e, c: log.append("fine"))

    session, _ = await make_session([faux_assistant_message("ok")], ("broken", broken), ("fine", fine))
    await session.prompt("hi")
    assert log == ["fine"]
    assert [(e.path, e.error) for e in session.extension_load_errors] == [
        ("broken", "Failed to load extension: cannot start")
    ]


async def test_commands_run_at_once_and_cannot_be_queued() -> None:
    ran: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.register_command("deploy", handler=lambda args, ctx: ran.append(args))
        pi.register_command("boom", handler=lambda args, ctx: 1 / 0)

    session, faux = await make_session([], ("x", ext))
    await session.prompt("/deploy staging now")
    await session.prompt("/boom")
    assert ran == ["staging now"] and faux.requests == []
    assert [(e.extension_path, e.event, e.error) for e in session.extension_errors] == [
        ("command:boom", "command", "division by zero")
    ]
    with pytest.raises(UsageError, match='Extension command "/deploy" cannot be queued'):
        await session.steer("/deploy later")


async def test_thinking_level_and_session_name_changes_are_recorded_and_announced() -> None:
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("thinking_level_select", lambda e, c: seen.append((e.previous_level, e.level)))
        pi.on("session_info_changed", lambda e, c: seen.append(e.name))
        pi.on("agent_start", lambda e, c: (pi.set_thinking_level("high"), pi.set_session_name("  demo\nrun ")))

    from pinb.ai.faux import FauxProvider
    from pinb.app.session import create_agent_session

    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("ok")])
    reasoner = faux.model.model_copy(update={"reasoning": True})
    session = await create_agent_session(stream_fn=faux.stream, model=reasoner, extensions=[("x", ext)])
    events: list[str] = []
    session.subscribe(lambda e: events.append(e.type))
    await session.prompt("hi")
    assert seen == [("off", "high"), "demo run"]
    assert "thinking_level_changed" in events and "session_info_changed" in events
    assert session.session_manager.get_session_name() == "demo run"
    assert [e.type for e in session.session_manager.get_entries()][:3] == [
        "model_change",
        "thinking_level_change",
        "thinking_level_change",
    ]


async def test_a_thinking_level_the_model_lacks_is_clamped_and_changes_nothing() -> None:
    """Pi 1.6.0's setThinkingLevel clamps first: on a model without reasoning every level is "off", so asking for
    "high" records and announces nothing (``app-extension-set-thinking-level`` shows the reasoning case on Pi)."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("thinking_level_select", lambda e, c: seen.append((e.previous_level, e.level)))
        pi.on("agent_start", lambda e, c: pi.set_thinking_level("high"))

    session, _ = await make_session([faux_assistant_message("ok")], ("x", ext))
    await session.prompt("hi")
    assert seen == [] and session.agent.state.thinking_level == "off"
    assert [e.type for e in session.session_manager.get_entries()].count("thinking_level_change") == 1


async def test_send_user_message_does_not_run_commands() -> None:
    ran: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.register_command("deploy", handler=lambda args, ctx: ran.append(args))

    session, faux = await make_session([faux_assistant_message("ok")], ("x", ext))
    await session.send_user_message("/deploy now")
    assert ran == [] and message_text(faux.requests[0].context.messages[-1]) == "/deploy now"


async def test_an_extension_switches_to_another_served_model_as_pi_does() -> None:
    """Pi 1.6.0's setModel (``app-set-model`` on real Pi): the switch is recorded, the thinking level is clamped to the
    new model (recorded and announced), and ``model_select`` handlers see both models; an unknown id finds nothing."""
    from pinb.ai.faux import FauxProvider
    from pinb.app.session import create_agent_session

    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("ok")])
    reasoner = faux.model.model_copy(update={"reasoning": True})
    plain = faux.model.model_copy(update={"id": "faux-plain", "name": "faux-plain"})
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        async def switch(_event: Any, ctx: Any) -> None:
            seen.append(ctx.model_registry.find("faux", "nowhere"))
            seen.append(await pi.set_model(ctx.model_registry.find("faux", "faux-plain")))

        pi.on("agent_start", switch)
        pi.on("model_select", lambda e, c: seen.append((e.previous_model.id, e.model.id, e.source)))
        pi.on("thinking_level_select", lambda e, c: seen.append((e.previous_level, e.level)))

    session = await create_agent_session(
        stream_fn=faux.stream, model=reasoner, thinking_level="high", models=[plain], extensions=[("x", ext)]
    )
    await session.prompt("hi")
    assert seen == [None, ("high", "off"), ("faux-1", "faux-plain", "set"), True]
    assert session.agent.state.model.id == "faux-plain" and session.agent.state.thinking_level == "off"
    kinds = [e.type for e in session.session_manager.get_entries()]
    assert kinds.count("model_change") == 2 and kinds.count("thinking_level_change") == 2
