"""AgentSession wires extension events into the Agent's hooks as Pi 1.6.0 does: exact sequences, no network."""

from __future__ import annotations

from typing import Any

from app_harness import Recorder, bash_tool, make_session, traced

from pinb.ai import CustomMessage, TextContent, message_text
from pinb.ai.faux import faux_assistant_message, faux_tool_call
from pinb.app.extensions import ExtensionAPI


def push(command: str = "git status") -> list[Any]:
    return [
        faux_assistant_message(faux_tool_call("bash", {"command": command}), stop_reason="toolUse"),
        faux_assistant_message("Done."),
    ]


def tool_result(session: Any) -> Any:
    return next(m for m in session.messages if m.role == "toolResult")


async def test_throwing_tool_call_handler_fails_closed_with_its_message_and_is_not_reported() -> None:
    calls: list[str] = []
    seen_later: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def boom(event: Any, ctx: Any) -> None:
            raise RuntimeError("policy service unreachable")

        pi.on("tool_call", boom)
        pi.on("tool_call", lambda e, c: seen_later.append("ran"))

    session, faux = await make_session(push(), ("x", ext), tools=[bash_tool(calls=calls)])
    await session.prompt("go")
    result = tool_result(session)
    assert calls == [] and seen_later == []
    assert (result.is_error, message_text(result)) == (True, "policy service unreachable")
    assert session.extension_errors == []
    faux.assert_complete()


async def test_tool_call_mutation_reaches_the_tool_and_first_block_wins() -> None:
    calls: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def rewrite(event: Any, ctx: Any) -> None:
            event.input["command"] = event.input["command"] + " --dry-run"

        pi.on("tool_call", rewrite)

    session, _ = await make_session(push("git clean -fd"), ("x", ext), tools=[bash_tool(calls=calls)])
    await session.prompt("go")
    assert calls == ["git clean -fd --dry-run"]


async def test_tool_result_patches_reach_the_event_and_the_transcript() -> None:
    recorder = Recorder()
    ends: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("tool_result", traced(recorder, "a", lambda e, c: {"details": {"patched": True}}))
        pi.on(
            "tool_result",
            traced(recorder, "b", lambda e, c: {"content": [TextContent(text="[redacted]")], "isError": True}),
        )

    session, _ = await make_session(push(), ("x", ext))
    session.subscribe(recorder.session)
    session.subscribe(lambda e: ends.append(e) if e.type == "tool_execution_end" else None)
    await session.prompt("go")
    result = tool_result(session)
    assert (message_text(result), result.is_error, result.details) == ("[redacted]", True, {"patched": True})
    assert ends[0].is_error is True and ends[0].result.details == {"patched": True}
    i = recorder.lines.index("session tool_execution_start:bash")
    assert recorder.lines[i : i + 4] == [
        "session tool_execution_start:bash",
        "ext a tool_result",
        "ext b tool_result",
        "session tool_execution_end:bash",
    ]


async def test_tool_result_handler_error_is_reported_and_skipped() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("tool_result", lambda e, c: 1 / 0)
        pi.on("tool_result", lambda e, c: {"content": [TextContent(text="second ran")]})

    session, _ = await make_session(push(), ("x", ext))
    await session.prompt("go")
    assert message_text(tool_result(session)) == "second ran"
    assert [(e.extension_path, e.event, e.error) for e in session.extension_errors] == [
        ("x", "tool_result", "division by zero")
    ]


async def test_message_end_replacement_is_what_listeners_state_and_the_session_keep() -> None:
    seen: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def shout(event: Any, ctx: Any) -> Any:
            if event.message.role != "assistant" or event.message.stop_reason != "stop":
                return None
            return {"message": event.message.model_copy(update={"content": (TextContent(text="DONE!"),)})}

        pi.on("message_end", shout)
        pi.on("message_end", lambda e, c: {"message": CustomMessage(custom_type="x", content="no")})

    session, _ = await make_session(push(), ("x", ext))
    session.subscribe(lambda e: seen.append(message_text(e.message)) if e.type == "message_end" else None)
    await session.prompt("go")
    assert seen[-1] == "DONE!"
    assert message_text(session.messages[-1]) == "DONE!"
    branch_texts = [message_text(e.message) for e in session.session_manager.get_branch() if e.type == "message"]
    assert branch_texts[-1] == "DONE!"
    role_errors = {e.error for e in session.extension_errors}
    assert role_errors == {"message_end handlers must return a message with the same role"}


async def test_input_handled_starts_no_run_and_transform_changes_the_prompt() -> None:
    events: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def on_input(event: Any, ctx: Any) -> Any:
            if event.text == "/local":
                return {"action": "handled"}
            return {"action": "transform", "text": event.text.upper()}

        pi.on("input", on_input)

    session, faux = await make_session([faux_assistant_message("ok")], ("x", ext))
    session.subscribe(lambda e: events.append(e.type))
    await session.prompt("/local")
    assert events == [] and faux.requests == []
    await session.prompt("hello")
    assert message_text(next(m for m in session.messages if m.role == "user")) == "HELLO"


async def test_before_agent_start_injects_a_custom_message_after_the_prompt() -> None:
    recorder = Recorder()

    def ext(pi: ExtensionAPI) -> None:
        result = {"message": {"customType": "note", "content": "Be brief.", "display": False}}
        pi.on("before_agent_start", traced(recorder, "inject", lambda e, c: result))

    session, faux = await make_session([faux_assistant_message("ok")], ("x", ext))
    session.subscribe(recorder.session)
    await session.prompt("hi")
    assert recorder.lines[:8] == [
        "ext inject before_agent_start",
        "session agent_start",
        "session turn_start",
        "session message_start:system",
        "session message_end:system",
        "session message_start:user:hi",
        "session message_end:user:hi",
        "session message_start:custom:Be brief.",
    ]
    request = faux.requests[0]
    assert [m.role for m in request.context.messages] == ["system", "user", "user"]


async def test_before_agent_start_system_prompt_replaces_the_whole_prompt_for_the_run_only() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("before_agent_start", lambda e, c: {"systemPrompt": "FORCED PROMPT"})

    session, faux = await make_session([faux_assistant_message("ok")], ("x", ext), system_prompt="Base.")
    await session.prompt("hi")
    system = faux.requests[0].context.messages[0]
    assert system.role == "system" and system.content == "FORCED PROMPT" and not system.sections
    # The transcript keeps the structured sections; the override is projected onto the request only.
    recorded = next(m for m in session.messages if m.role == "system")
    assert recorded.sections == {"preamble": "Base.", "cwd": "<cwd>\n/project\n</cwd>"}
    assert session.system_prompt == "Base.\n\n<cwd>\n/project\n</cwd>"


async def test_context_handler_edits_the_request_not_the_session() -> None:
    def ext(pi: ExtensionAPI) -> None:
        def prune(event: Any, ctx: Any) -> Any:
            assert all(m.role != "system" for m in event.messages)
            return {"messages": event.messages[-1:]}

        pi.on("context", prune)

    responses = [faux_assistant_message("one"), faux_assistant_message("two")]
    session, faux = await make_session(responses, ("x", ext))
    await session.prompt("first")
    await session.prompt("second")
    second = faux.requests[1].context.messages
    assert [m.role for m in second] == ["system", "user"]
    assert message_text(second[-1]) == "second"
    assert [m.role for m in session.messages] == ["system", "user", "assistant", "user", "assistant"]


async def test_handlers_get_ctx_with_ui_mode_and_session_manager() -> None:
    seen: dict[str, Any] = {}

    def ext(pi: ExtensionAPI) -> None:
        def look(event: Any, ctx: Any) -> None:
            seen.update(has_ui=ctx.has_ui, mode=ctx.mode, idle=ctx.is_idle(), sm=ctx.session_manager)

        pi.on("agent_start", look)

    session, _ = await make_session([faux_assistant_message("ok")], ("x", ext), mode="json")
    await session.prompt("hi")
    assert seen == {"has_ui": False, "mode": "json", "idle": False, "sm": session.session_manager}


async def test_pi_shaped_dict_results_become_pinb_models() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("tool_result", lambda e, c: {"content": [{"type": "text", "text": "from a dict"}]})

    session, _ = await make_session(push(), ("x", ext))
    await session.prompt("go")
    result = tool_result(session)
    assert isinstance(result.content[0], TextContent) and message_text(result) == "from a dict"
