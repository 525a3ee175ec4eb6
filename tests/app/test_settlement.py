"""Settlement: turn_end and agent_before_settle boundaries, continuations, agent_settled once at the true end."""

from __future__ import annotations

import asyncio
from typing import Any

from app_harness import Recorder, bash_tool, make_session, traced

from pinb.agent import AgentTool, text_result
from pinb.ai import message_text, sleep_or_abort
from pinb.ai.faux import faux_assistant_message, faux_tool_call
from pinb.app.extensions import ExtensionAPI

NO_CONTEXT = "requested continuation without runnable model context"
NOTE = {"type": "custom_message", "customType": "nudge", "content": "Keep going.", "display": True}


def once(result: Any, at: int = 1):
    """A handler returning ``result`` on its ``at``-th invocation and nothing otherwise."""
    count = 0

    def handler(event: Any, ctx: Any) -> Any:
        nonlocal count
        count += 1
        if count != at:
            return None
        return result(event) if callable(result) else result

    return handler


def with_entry(event: Any) -> dict[str, Any]:
    return {"entries": [*event.entries, NOTE], "continue": True}


async def recorded(responses: list[Any], *handlers: tuple[str, str, Any], **options: Any) -> tuple[Any, Any, Recorder]:
    recorder = Recorder()

    def ext(pi: ExtensionAPI) -> None:
        for event, label, handler in handlers:
            pi.on(event, traced(recorder, label, handler))

    session, faux = await make_session(responses, ("x", ext), **options)
    session.subscribe(recorder.session)
    return session, faux, recorder


async def test_turn_end_continuation_continues_the_same_low_level_run() -> None:
    responses = [faux_assistant_message("first"), faux_assistant_message("second")]
    session, faux, recorder = await recorded(responses, ("turn_end", "boundary", once(with_entry)))
    await session.prompt("go")
    assert recorder.lines == [
        "session agent_start",
        "session turn_start",
        "session message_start:system",
        "session message_end:system",
        "session message_start:user:go",
        "session message_end:user:go",
        "session message_start:assistant:pending",
        "session message_end:assistant:stop",
        "ext boundary turn_end",
        "session entry_appended:custom_message",
        "session turn_end",
        "session turn_start",
        "session message_start:assistant:pending",
        "session message_end:assistant:stop",
        "ext boundary turn_end",
        "session turn_end",
        "session agent_end:['system', 'user', 'assistant', 'assistant']",
        "session agent_settled:False",
    ]
    second = faux.requests[1].context.messages
    assert [m.role for m in second] == ["system", "user", "assistant", "user"]
    assert message_text(second[-1]) == "Keep going."
    assert [(c.boundary, c.settlement, c.turn_index, c.entry_types) for c in session.continuations] == [
        ("turn_end", 1, 0, ("custom_message",))
    ]


async def test_agent_before_settle_continuation_starts_a_new_run_and_settles_once() -> None:
    responses = [faux_assistant_message("first"), faux_assistant_message("second")]
    seen: list[tuple[str, bool]] = []

    def observe(event: Any, ctx: Any) -> Any:
        seen.append((event.outcome, event.continue_))
        return None

    session, faux, recorder = await recorded(
        responses,
        ("agent_before_settle", "settle", once(with_entry)),
        ("agent_before_settle", "observe", observe),
    )
    await session.prompt("go")
    assert recorder.lines[7:] == [
        "session message_end:assistant:stop",
        "session turn_end",
        "session agent_end:['system', 'user', 'assistant']",
        "ext settle agent_before_settle",
        "ext observe agent_before_settle",
        "session entry_appended:custom_message",
        "session agent_start",
        "session turn_start",
        "session message_start:assistant:pending",
        "session message_end:assistant:stop",
        "session turn_end",
        "session agent_end:['assistant']",
        "ext settle agent_before_settle",
        "ext observe agent_before_settle",
        "session agent_settled:False",
    ]
    assert seen == [("completed", True), ("completed", False)]
    assert [m.role for m in faux.requests[1].context.messages] == ["system", "user", "assistant", "user"]
    assert [c.boundary for c in session.continuations] == ["agent_before_settle"]


async def test_continuation_without_runnable_context_is_reported_and_makes_no_request() -> None:
    session, faux, recorder = await recorded(
        [faux_assistant_message("done")], ("agent_before_settle", "settle", lambda e, c: {"continue": True})
    )
    await session.prompt("go")
    assert len(faux.requests) == 1
    assert recorder.lines[-2:] == ["ext settle agent_before_settle", "session agent_settled:False"]
    assert [(e.extension_path, e.event, e.error) for e in session.extension_errors] == [
        (
            "<boundary>",
            "agent_before_settle",
            "agent_before_settle requested continuation without runnable model context",
        )
    ]
    assert session.continuations == []


async def test_turn_end_continuation_without_runnable_context_is_reported() -> None:
    session, faux, _ = await recorded(
        [faux_assistant_message("done")], ("turn_end", "t", lambda e, c: {"continue": True})
    )
    await session.prompt("go")
    assert len(faux.requests) == 1
    assert [(e.extension_path, e.error) for e in session.extension_errors] == [
        ("<boundary>", "turn_end requested continuation without runnable model context")
    ]


async def test_an_invalid_draft_discards_the_whole_proposal() -> None:
    bad = {"type": "context_edit", "targetId": "ffffffff", "replacement": None}
    session, faux, recorder = await recorded(
        [faux_assistant_message("done")],
        ("agent_before_settle", "a", lambda e, c: {"entries": [NOTE], "continue": True}),
        ("agent_before_settle", "b", lambda e, c: {"entries": [*e.entries, bad]}),
    )
    await session.prompt("go")
    assert len(faux.requests) == 1
    assert not any("entry_appended" in line for line in recorder.lines)
    assert [(e.extension_path, e.event, e.error) for e in session.extension_errors] == [
        ("x", "agent_before_settle", "Invalid boundary entries: Entry ffffffff not found")
    ]
    assert not any(entry.type == "custom_message" for entry in session.session_manager.get_entries())


async def test_error_outcome_gets_agent_before_settle() -> None:
    outcomes: list[str] = []
    session, _, recorder = await recorded([], ("agent_before_settle", "s", lambda e, c: outcomes.append(e.outcome)))
    await session.prompt("go")
    assert outcomes == ["error"]
    assert session.messages[-1].error_message == "No more faux responses queued"
    assert recorder.lines[-1] == "session agent_settled:False"


async def test_aborted_run_skips_agent_before_settle_and_settles_aborted() -> None:
    def slow(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        async def run() -> Any:
            await sleep_or_abort(5, signal, "sleepy aborted")
            return text_result("late", {})

        return run()

    tool = AgentTool(name="sleepy", parameters={"type": "object", "properties": {}}, execute=slow)
    responses = [faux_assistant_message(faux_tool_call("sleepy", {}), stop_reason="toolUse")]
    session, _, recorder = await recorded(
        responses, ("agent_before_settle", "s", lambda e, c: {"continue": True}), tools=[tool]
    )

    def abort_on_start(event: Any) -> None:
        if event.type == "tool_execution_start":
            asyncio.get_running_loop().call_later(0.01, lambda: asyncio.ensure_future(session.abort()))

    session.subscribe(abort_on_start)
    await session.prompt("go")
    await session.wait_for_idle()
    assert "ext s agent_before_settle" not in recorder.lines
    assert recorder.lines[-1] == "session agent_settled:True"
    assert recorder.lines.count("session agent_settled:True") == 1
    assert session.messages[-1].stop_reason == "aborted"


async def test_follow_up_queued_in_agent_end_runs_before_settling() -> None:
    def queue_follow_up(pi: ExtensionAPI) -> Any:
        def handler(event: Any, ctx: Any) -> None:
            pi.send_message({"customType": "later", "content": "One more thing."}, deliver_as="followUp")

        return once(lambda e: handler(e, None))

    recorder = Recorder()

    def ext(pi: ExtensionAPI) -> None:
        pi.on("agent_end", traced(recorder, "end", queue_follow_up(pi)))
        pi.on("agent_before_settle", traced(recorder, "settle", lambda e, c: None))

    responses = [faux_assistant_message("first"), faux_assistant_message("second")]
    session, faux = await make_session(responses, ("x", ext))
    session.subscribe(recorder.session)
    await session.prompt("go")
    tail = [line for line in recorder.lines if "agent_" in line or "custom" in line]
    assert tail == [
        "session agent_start",
        "ext end agent_end",
        "session agent_end:['system', 'user', 'assistant']",
        "session agent_start",
        "session message_start:custom:One more thing.",
        "session message_end:custom:One more thing.",
        "ext end agent_end",
        "session agent_end:['custom', 'assistant']",
        "ext settle agent_before_settle",
        "session agent_settled:False",
    ]
    assert [c.boundary for c in session.continuations] == ["queued"]
    faux.assert_complete()


async def test_no_built_in_cap_every_continuation_is_recorded() -> None:
    count = 0

    def keep_going(event: Any, ctx: Any) -> Any:
        nonlocal count
        count += 1
        return {"entries": [NOTE], "continue": True} if count <= 4 else None

    responses = [faux_assistant_message(f"reply {n}") for n in range(5)]
    session, faux, recorder = await recorded(responses, ("agent_before_settle", "loop", keep_going))
    await session.prompt("go")
    assert len(faux.requests) == 5
    assert [(c.boundary, c.settlement) for c in session.continuations] == [("agent_before_settle", 1)] * 4
    assert recorder.lines.count("session agent_settled:False") == 1


async def test_handler_error_at_a_boundary_is_reported_and_settlement_goes_on() -> None:
    def boom(event: Any, ctx: Any) -> Any:
        raise ValueError("boundary handler failed")

    session, _, recorder = await recorded([faux_assistant_message("ok")], ("agent_before_settle", "b", boom))
    await session.prompt("go")
    assert recorder.lines[-1] == "session agent_settled:False"
    assert [(e.event, e.error) for e in session.extension_errors] == [
        ("agent_before_settle", "boundary handler failed")
    ]


async def test_agent_settled_reaches_extensions_before_session_listeners() -> None:
    session, _, recorder = await recorded(
        [faux_assistant_message("ok")], ("agent_settled", "settled", lambda e, c: None)
    )
    await session.prompt("go")
    assert recorder.lines[-2:] == ["ext settled agent_settled", "session agent_settled:False"]


async def test_tool_results_are_in_turn_end_entry_ids() -> None:
    seen: list[Any] = []
    responses = [
        faux_assistant_message(faux_tool_call("bash", {"command": "ls"}), stop_reason="toolUse"),
        faux_assistant_message("done"),
    ]
    session, _, _ = await recorded(responses, ("turn_end", "t", lambda e, c: seen.append(e)), tools=[bash_tool()])
    await session.prompt("go")
    first = seen[0]
    assert first.turn_index == 0 and seen[1].turn_index == 1
    assert session.session_manager.get_entry(first.message_entry_id).message is first.message
    [result_id] = first.tool_result_entry_ids
    assert session.session_manager.get_entry(result_id).message.role == "toolResult"


async def test_turn_end_continue_after_tool_results_adds_no_extra_request() -> None:
    responses = [
        faux_assistant_message(faux_tool_call("bash", {"command": "ls"}), stop_reason="toolUse"),
        faux_assistant_message("done"),
    ]
    session, faux, _ = await recorded(responses, ("turn_end", "t", once({"continue": True})), tools=[bash_tool()])
    await session.prompt("go")
    assert len(faux.requests) == 2
    faux.assert_complete()
    assert [c.boundary for c in session.continuations] == ["turn_end"]


def test_a_boundary_preview_holds_the_branch_own_records_as_pi_inmemory_does() -> None:
    """Pi's `_createBoundaryPreviewManager` gives `SessionManager.inMemory` the branch's entries themselves (1.3.0
    to 1.6.0); drafts go on the preview only. A header of an older format is read back through the text."""
    from pinb.ai import UserMessage
    from pinb.app.session_tree import SessionManager
    from pinb.app.settlement import preview_manager

    manager = SessionManager()
    manager.append_message(UserMessage(content="one", timestamp=1))
    manager.append_message(UserMessage(content="two", timestamp=2))
    preview = preview_manager(manager, [])
    assert all(a is b for a, b in zip(preview.get_branch(), manager.get_branch(), strict=True))
    assert preview.get_header() is manager.get_header()
    preview.append_message(UserMessage(content="draft", timestamp=3))
    assert len(manager.get_branch()) == 2 and len(preview.get_branch()) == 3
    manager.header = manager.header.model_copy(update={"version": 2})
    older = preview_manager(manager, [])
    assert [e.model_dump() for e in older.get_branch()] == [e.model_dump() for e in manager.get_branch()]
    assert older.get_branch()[0] is not manager.get_branch()[0]
