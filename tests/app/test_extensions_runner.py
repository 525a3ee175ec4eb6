"""The extension runner on its own (no Agent): order, snapshots, awaiting, and each event's combine/error rule."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from app_harness import error_summary, make_runner

from pinb.ai import SystemMessage, TextContent, UserMessage
from pinb.app.extensions import Extension, ExtensionAPI, ExtensionRuntime, load_extensions
from pinb.app.extensions import events as ev
from pinb.app.extensions import results as rs
from pinb.app.ui import ScriptedUI
from pinb.errors import ExtensionError


def recorder(log: list[str], label: str, result: Any = None):
    def handler(event: Any, ctx: Any) -> Any:
        log.append(label)
        return result

    return handler


async def test_handlers_run_in_load_order_then_registration_order() -> None:
    log: list[str] = []

    def first(pi: ExtensionAPI) -> None:
        pi.on("agent_start", recorder(log, "a1"))
        pi.on("agent_start", recorder(log, "a2"))

    def second(pi: ExtensionAPI) -> None:
        pi.on("agent_start", recorder(log, "b1"))

    runner, _ = await make_runner(("second", second), ("first", first))
    await runner.emit(ev.AgentStartEvent())
    assert log == ["b1", "a1", "a2"]


async def test_unsubscribe_during_dispatch_does_not_affect_that_dispatch() -> None:
    log: list[str] = []
    handles: dict[str, Any] = {}

    def ext(pi: ExtensionAPI) -> None:
        def remover(event: Any, ctx: Any) -> None:
            log.append("remover")
            handles["victim"]()
            handles["late"] = pi.on("agent_start", recorder(log, "late"))

        pi.on("agent_start", remover)
        handles["victim"] = pi.on("agent_start", recorder(log, "victim"))

    runner, _ = await make_runner(("x", ext))
    await runner.emit(ev.AgentStartEvent())
    assert log == ["remover", "victim"]  # snapshot: removal and addition wait for the next dispatch
    log.clear()
    handles["late"]()  # unsubscribe the handler added during the first dispatch before it ever ran
    await runner.emit(ev.AgentStartEvent())
    assert log == ["remover"]


async def test_same_function_registered_twice_is_two_registrations() -> None:
    log: list[str] = []
    handler = recorder(log, "h")
    handles = []

    def ext(pi: ExtensionAPI) -> None:
        handles.append(pi.on("agent_end", handler))
        handles.append(pi.on("agent_end", handler))

    runner, _ = await make_runner(("x", ext))
    handles[0]()
    handles[0]()  # idempotent
    await runner.emit(ev.AgentEndEvent(messages=()))
    assert log == ["h"]


async def test_async_handlers_are_awaited_one_at_a_time() -> None:
    log: list[str] = []

    def slow(label: str, delay: float):
        async def handler(event: Any, ctx: Any) -> None:
            log.append(f"{label}:start")
            await asyncio.sleep(delay)
            log.append(f"{label}:end")

        return handler

    def ext(pi: ExtensionAPI) -> None:
        pi.on("turn_start", slow("a", 0.02))
        pi.on("turn_start", slow("b", 0.0))

    runner, _ = await make_runner(("x", ext))
    await runner.emit(ev.TurnStartEvent(turn_index=0))
    assert log == ["a:start", "a:end", "b:start", "b:end"]


async def test_unknown_event_name_is_an_error_and_the_extension_fails_to_load() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("tool_cal", recorder([], "x"))  # type: ignore[call-overload]

    with pytest.raises(ExtensionError, match='Unknown extension event "tool_cal"'):
        ExtensionAPI(Extension("x"), ExtensionRuntime()).on("tool_cal", lambda e, c: None)  # type: ignore[call-overload]
    loaded = await load_extensions([("typo", ext)])
    assert loaded.extensions == []
    assert loaded.errors[0].path == "typo"
    assert loaded.errors[0].error.startswith('Failed to load extension: Unknown extension event "tool_cal"')


async def test_action_methods_fail_while_loading_with_pis_message() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.send_user_message("hi")

    loaded = await load_extensions([("eager", ext)])
    assert loaded.errors[0].error == (
        "Failed to load extension: Extension runtime not initialized. "
        "Action methods cannot be called during extension loading."
    )


# --- errors -------------------------------------------------------------------------------------------------


async def test_notification_handler_error_is_reported_and_dispatch_goes_on() -> None:
    log: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def boom(event: Any, ctx: Any) -> None:
            raise RuntimeError("boom")

        pi.on("agent_settled", boom)
        pi.on("agent_settled", recorder(log, "after"))

    runner, errors = await make_runner(("x", ext))
    await runner.emit(ev.AgentSettledEvent(aborted=False))
    assert log == ["after"]
    assert error_summary(errors) == [("x", "agent_settled", "boom")]
    assert errors[0].stack and "RuntimeError" in errors[0].stack


async def test_on_error_returns_unsubscribe() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("agent_start", lambda e, c: 1 / 0)

    runner, errors = await make_runner(("x", ext))
    other: list[Any] = []
    unsubscribe = runner.on_error(other.append)
    unsubscribe()
    await runner.emit(ev.AgentStartEvent())
    assert len(errors) == 1 and other == []


# --- project_trust ------------------------------------------------------------------------------------------


async def test_project_trust_first_decider_owns_it_and_errors_are_collected_not_reported() -> None:
    log: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("project_trust", lambda e, c: (_ for _ in ()).throw(ValueError("nope")))
        pi.on("project_trust", recorder(log, "undecided", {"trusted": "undecided"}))
        pi.on("project_trust", recorder(log, "none", None))
        pi.on("project_trust", recorder(log, "no", rs.ProjectTrustEventResult(trusted="no")))
        pi.on("project_trust", recorder(log, "yes", {"trusted": "yes"}))

    runner, reported = await make_runner(("t", ext))
    outcome = await runner.emit_project_trust(ev.ProjectTrustEvent(cwd="/p"))
    assert log == ["undecided", "none", "no"]
    assert outcome.result == rs.ProjectTrustEventResult(trusted="no")
    assert [e.error for e in outcome.errors] == [
        "nope",
        'Invalid project_trust handler result: return { trusted: "yes" | "no" | "undecided" }',
    ]
    assert reported == []


# --- input --------------------------------------------------------------------------------------------------


async def test_input_transforms_chain_and_handled_short_circuits() -> None:
    seen: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def upper(event: ev.InputEvent, ctx: Any) -> rs.InputTransform:
            seen.append(event.text)
            return rs.InputTransform(text=event.text.upper())

        def bang(event: ev.InputEvent, ctx: Any) -> dict:
            seen.append(event.text)
            return {"action": "transform", "text": event.text + "!"}

        pi.on("input", upper)
        pi.on("input", lambda e, c: {"action": "continue"})
        pi.on("input", bang)

    runner, _ = await make_runner(("x", ext))
    result = await runner.emit_input("hi", None, "interactive", None)
    assert result == rs.InputTransform(text="HI!")
    assert seen == ["hi", "HI"]

    def stopper(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, c: rs.InputHandled())
        pi.on("input", lambda e, c: seen.append("never"))

    runner, _ = await make_runner(("s", stopper))
    assert await runner.emit_input("hi", None, "rpc", "steer") == rs.InputHandled()
    assert "never" not in seen


async def test_input_wrong_result_shape_is_reported_never_silent() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, c: {"action": "rewrite", "text": "x"})
        pi.on("input", lambda e, c: {"action": "transform"})

    runner, errors = await make_runner(("x", ext))
    assert await runner.emit_input("hi", None, "interactive", None) == rs.InputContinue()
    assert [e.event for e in errors] == ["input", "input"]
    assert all(e.error.startswith("Invalid input handler result:") for e in errors)


# --- before_agent_start -------------------------------------------------------------------------------------


async def test_before_agent_start_injects_messages_and_forces_the_prompt() -> None:
    seen_prompts: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def inject(event: ev.BeforeAgentStartEvent, ctx: Any) -> dict:
            seen_prompts.append(event.system_prompt)
            return {"message": {"customType": "note", "content": "remember", "display": True}, "systemPrompt": "FORCED"}

        def observe(event: ev.BeforeAgentStartEvent, ctx: Any) -> rs.BeforeAgentStartEventResult:
            seen_prompts.append(event.system_prompt)
            seen_prompts.append(ctx.get_system_prompt())
            return rs.BeforeAgentStartEventResult(message=rs.CustomMessageInput(custom_type="second"))

        pi.on("before_agent_start", inject)
        pi.on("before_agent_start", observe)

    def render(options: dict) -> str:
        return options.get("force_system_prompt", "BASE")

    runner, _ = await make_runner(("x", ext))
    outcome = await runner.emit_before_agent_start({"message_type": "user", "prompt": "go"}, {}, render)
    assert seen_prompts == ["BASE", "FORCED", "FORCED"]
    assert [m.custom_type for m in outcome.messages] == ["note", "second"]
    assert outcome.system_prompt_options["force_system_prompt"] == "FORCED"


# --- context ------------------------------------------------------------------------------------------------


async def test_context_handlers_see_no_system_messages_and_pi_restores_them() -> None:
    system = SystemMessage(content="prompt", timestamp=1)
    first = UserMessage(content="one", timestamp=2)
    second = UserMessage(content="two", timestamp=3)
    seen: list[list[str]] = []

    def ext(pi: ExtensionAPI) -> None:
        def drop_first(event: ev.ContextEvent, ctx: Any) -> dict:
            seen.append([m.role for m in event.messages])
            return {"messages": event.messages[1:]}

        def in_place(event: ev.ContextEvent, ctx: Any) -> None:
            seen.append([m.content for m in event.messages])
            event.messages.append(UserMessage(content="three", timestamp=4))

        pi.on("context", drop_first)
        pi.on("context", in_place)

    from pinb.ai.transcript import get_current_system_message

    runner, _ = await make_runner(("x", ext))
    runner._current_system_message = get_current_system_message
    out = await runner.emit_context([system, first, second])
    assert seen == [["user", "user"], ["two"]]
    assert [m.role for m in out] == ["system", "user", "user"]
    assert out[0].content == "prompt" and [m.content for m in out[1:]] == ["two", "three"]


async def test_context_unchanged_keeps_system_messages_in_place() -> None:
    messages = [SystemMessage(content="p", timestamp=1), UserMessage(content="u", timestamp=2)]

    def ext(pi: ExtensionAPI) -> None:
        pi.on("context", lambda e, c: {"messages": list(e.messages)})

    runner, _ = await make_runner(("x", ext))
    out = await runner.emit_context(messages)
    assert out[0] is messages[0] and out[1] is messages[1]


async def test_context_with_system_dropping_the_head_is_reported_but_honoured() -> None:
    messages = [SystemMessage(content="p", timestamp=1), UserMessage(content="u", timestamp=2)]

    def ext(pi: ExtensionAPI) -> None:
        pi.on("context_with_system", lambda e, c: {"messages": e.messages[1:]})

    runner, errors = await make_runner(("x", ext))
    out = await runner.emit_context(messages)
    assert [m.role for m in out] == ["user"]
    assert error_summary(errors) == [
        ("x", "context_with_system", runner_messages_dropped()),
    ]


def runner_messages_dropped() -> str:
    from pinb.app.extensions.runner import CONTEXT_WITH_SYSTEM_DROPPED

    return CONTEXT_WITH_SYSTEM_DROPPED


# --- tool_call ----------------------------------------------------------------------------------------------


def tool_call_event(**input: Any) -> ev.ToolCallEvent:
    return ev.ToolCallEvent(tool_name="bash", tool_call_id="c1", input=dict(input))


async def test_tool_call_mutation_is_seen_by_later_handlers_and_first_block_wins() -> None:
    log: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def mutate(event: ev.ToolCallEvent, ctx: Any) -> None:
            event.input["command"] = "git status"

        def observe(event: ev.ToolCallEvent, ctx: Any) -> dict:
            log.append(event.input["command"])
            return {"block": False, "reason": "kept"}

        pi.on("tool_call", mutate)
        pi.on("tool_call", observe)
        pi.on("tool_call", recorder(log, "blocker", {"block": True, "reason": "first"}))
        pi.on("tool_call", recorder(log, "never", {"block": True, "reason": "second"}))

    runner, errors = await make_runner(("x", ext))
    event = tool_call_event(command="git push")
    result = await runner.emit_tool_call(event)
    assert result == rs.ToolCallEventResult(block=True, reason="first")
    assert log == ["git status", "blocker"]
    assert event.input == {"command": "git status"}
    assert errors == []


async def test_tool_call_last_non_blocking_result_is_returned() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("tool_call", lambda e, c: {"reason": "a"})
        pi.on("tool_call", lambda e, c: None)

    runner, _ = await make_runner(("x", ext))
    assert await runner.emit_tool_call(tool_call_event()) == rs.ToolCallEventResult(reason="a")


async def test_tool_call_raise_propagates_unreported_and_stops_dispatch() -> None:
    log: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def boom(event: Any, ctx: Any) -> None:
            raise RuntimeError("guard crashed")

        pi.on("tool_call", boom)
        pi.on("tool_call", recorder(log, "never"))

    runner, errors = await make_runner(("x", ext))
    with pytest.raises(RuntimeError, match="guard crashed"):
        await runner.emit_tool_call(tool_call_event())
    assert log == [] and errors == []


async def test_tool_call_wrong_shape_fails_closed_too() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("tool_call", lambda e, c: {"blocked": True})

    runner, errors = await make_runner(("x", ext))
    with pytest.raises(Exception, match="Invalid tool_call handler result: blocked: Extra inputs"):
        await runner.emit_tool_call(tool_call_event())
    assert errors == []


# --- tool_result --------------------------------------------------------------------------------------------


def tool_result_event() -> ev.ToolResultEvent:
    return ev.ToolResultEvent(
        tool_name="bash",
        tool_call_id="c1",
        input={},
        content=(TextContent(text="out"),),
        details={"a": 1},
        structured_content={"s": 1},
        is_error=False,
    )


async def test_tool_result_patches_compose_and_a_raise_is_reported_and_skipped() -> None:
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        def details(event: ev.ToolResultEvent, ctx: Any) -> dict:
            return {"details": {"b": 2}}

        def boom(event: Any, ctx: Any) -> None:
            raise ValueError("bad patch")

        def content(event: ev.ToolResultEvent, ctx: Any) -> rs.ToolResultEventResult:
            seen.append(event.details)
            return rs.ToolResultEventResult(content=(TextContent(text="redacted"),), is_error=True)

        pi.on("tool_result", details)
        pi.on("tool_result", boom)
        pi.on("tool_result", content)

    runner, errors = await make_runner(("x", ext))
    result = await runner.emit_tool_result(tool_result_event())
    assert seen == [{"b": 2}]
    assert result == rs.ToolResultEventResult(
        content=(TextContent(text="redacted"),), details={"b": 2}, structured_content=None, is_error=True
    )
    assert error_summary(errors) == [("x", "tool_result", "bad patch")]


async def test_tool_result_no_patch_means_none() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("tool_result", lambda e, c: {})

    runner, _ = await make_runner(("x", ext))
    assert await runner.emit_tool_result(tool_result_event()) is None


# --- message_end --------------------------------------------------------------------------------------------


async def test_message_end_replaces_same_role_only() -> None:
    original = UserMessage(content="hi", timestamp=1)

    def ext(pi: ExtensionAPI) -> None:
        pi.on("message_end", lambda e, c: {"message": SystemMessage(content="x", timestamp=1)})
        pi.on("message_end", lambda e, c: {"message": UserMessage(content="replaced", timestamp=1)})
        pi.on(
            "message_end", lambda e, c: {"message": e.message.model_copy(update={"content": e.message.content + "!"})}
        )

    runner, errors = await make_runner(("x", ext))
    replaced = await runner.emit_message_end(ev.MessageEndEvent(message=original))
    assert replaced.content == "replaced!"
    assert error_summary(errors) == [
        ("x", "message_end", "message_end handlers must return a message with the same role")
    ]


# --- boundaries ---------------------------------------------------------------------------------------------


async def test_boundary_proposals_chain_and_each_handler_sees_the_previous_one() -> None:
    seen: list[tuple[int, bool]] = []
    previews: list[tuple[Any, ...]] = []

    def ext(pi: ExtensionAPI) -> None:
        def first(event: ev.AgentBeforeSettleEvent, ctx: Any) -> dict:
            seen.append((len(event.entries), event.continue_))
            return {"entries": [{"type": "custom", "customType": "a"}], "continue": True}

        def second(event: ev.AgentBeforeSettleEvent, ctx: Any) -> rs.BoundaryResult:
            seen.append((len(event.entries), event.continue_))
            assert event.context == ("preview", 1)
            return rs.BoundaryResult(entries=(*event.entries, rs.CustomEntryDraft(custom_type="b")))

        pi.on("agent_before_settle", first)
        pi.on("agent_before_settle", second)

    def build(entries: tuple[Any, ...]) -> Any:
        previews.append(entries)
        return ("preview", len(entries))

    runner, _ = await make_runner(("x", ext))
    outcome = await runner.emit_boundary(ev.AgentBeforeSettleEvent, {"outcome": "completed"}, build)
    assert seen == [(0, False), (1, True)]
    assert [e.custom_type for e in outcome.entries] == ["a", "b"]
    assert outcome.continue_ is True and outcome.valid
    assert [len(p) for p in previews] == [0, 1, 2]


async def test_boundary_invalid_draft_discards_the_whole_proposal() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "turn_end",
            lambda e, c: {
                "entries": [{"type": "context_edit", "targetId": "missing", "replacement": None}],
                "continue": True,
            },
        )

    def build(entries: tuple[Any, ...]) -> Any:
        for entry in entries:
            if entry.type == "context_edit":
                raise KeyError("Entry missing not found")
        return None

    runner, errors = await make_runner(("x", ext))
    base = {"turn_index": 0, "message": None, "tool_results": (), "message_entry_id": "m", "outcome": "completed"}
    outcome = await runner.emit_boundary(ev.TurnEndEvent, base, build)
    assert outcome.entries == () and outcome.continue_ is False and outcome.valid is False
    assert error_summary(errors) == [("x", "turn_end", "Invalid boundary entries: 'Entry missing not found'")]


async def test_boundary_handler_error_is_reported_and_the_proposal_so_far_stands() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("agent_before_settle", lambda e, c: {"continue": True})
        pi.on("agent_before_settle", lambda e, c: {"continue": "maybe"})

    runner, errors = await make_runner(("x", ext))
    outcome = await runner.emit_boundary(ev.AgentBeforeSettleEvent, {"outcome": "error"}, lambda entries: None)
    assert outcome.continue_ is True
    assert errors[0].event == "agent_before_settle"
    assert errors[0].error.startswith("Invalid agent_before_settle handler result: continue")


# --- user_bash, session_before_* ----------------------------------------------------------------------------


async def test_user_bash_invalid_result_is_reported_and_raised() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("user_bash", lambda e, c: {"result": {"output": "x"}})

    runner, errors = await make_runner(("x", ext))
    event = ev.UserBashEvent(command="ls", exclude_from_context=False, cwd="/")
    with pytest.raises(Exception, match="Invalid user_bash handler result"):
        await runner.emit_user_bash(event)
    assert errors[0].event == "user_bash"


async def test_user_bash_result_replaces_execution() -> None:
    result = {"result": {"output": "done", "exitCode": 0, "cancelled": False, "truncated": False}}

    def ext(pi: ExtensionAPI) -> None:
        pi.on("user_bash", lambda e, c: None)
        pi.on("user_bash", lambda e, c: result)

    runner, _ = await make_runner(("x", ext))
    out = await runner.emit_user_bash(ev.UserBashEvent(command="ls", exclude_from_context=True, cwd="/"))
    assert out is not None and out.result is not None and out.result.output == "done"


async def test_session_before_compact_first_cancel_wins() -> None:
    log: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", recorder(log, "custom", {"compaction": {"summary": "s"}}))
        pi.on("session_before_compact", recorder(log, "cancel", {"cancel": True}))
        pi.on("session_before_compact", recorder(log, "never"))

    runner, _ = await make_runner(("x", ext))
    event = ev.SessionBeforeCompactEvent(preparation=None, reason="manual")
    result = await runner.emit(event)
    assert result.cancel is True and log == ["custom", "cancel"]


# --- UI -----------------------------------------------------------------------------------------------------


async def test_no_ui_confirm_answers_false_and_emits_no_prompt_events() -> None:
    log: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        async def ask(event: Any, ctx: Any) -> None:
            log.append((ctx.has_ui, await ctx.ui.confirm("Allow?", "details")))

        pi.on("agent_start", ask)
        pi.on("ui_prompt_start", recorder(log, "prompt"))

    runner, _ = await make_runner(("x", ext))
    await runner.emit(ev.AgentStartEvent())
    await runner.drain_prompt_events()
    assert log == [(False, False)]


async def test_scripted_ui_answers_and_prompt_events_follow_pi() -> None:
    log: list[Any] = []
    ui = ScriptedUI(confirm=[True, False])

    def ext(pi: ExtensionAPI) -> None:
        async def ask(event: Any, ctx: Any) -> None:
            log.append(("answer", await ctx.ui.confirm("Allow?", "one")))
            log.append(("answer", await ctx.ui.confirm("Allow?", "two")))

        pi.on("agent_start", ask)
        pi.on("ui_prompt_start", lambda e, c: log.append((e.type, e.kind, e.title)))
        pi.on("ui_prompt_end", lambda e, c: log.append((e.type, e.kind, e.title)))

    runner, _ = await make_runner(("x", ext), ui=ui)
    await runner.emit(ev.AgentStartEvent())
    await runner.drain_prompt_events()
    assert [c.answer for c in ui.calls] == [True, False]
    assert ("answer", True) in log and ("answer", False) in log
    assert [entry for entry in log if entry[0] != "answer"] == [
        ("ui_prompt_start", "confirm", "Allow?"),
        ("ui_prompt_end", "confirm", "Allow?"),
        ("ui_prompt_start", "confirm", "Allow?"),
        ("ui_prompt_end", "confirm", "Allow?"),
    ]
