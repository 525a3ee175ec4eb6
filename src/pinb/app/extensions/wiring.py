"""How a session feeds its Agent's events and hooks to extensions, the way Pi 1.6.0's ``AgentSession`` does.

``AgentWiringMixin`` is half of ``pinb.app.session.AgentSession``: it installs the Agent hooks (``before_tool_call``
→ ``tool_call``, ``after_tool_call`` → ``tool_result``, ``transform_context`` → ``context``/``context_with_system``
plus a forced system prompt, ``prepare_request`` and ``prepare_next_turn`` → the session projection and prompt
patches, ``finish_turn`` → the ``turn_end`` boundary) and handles every agent event: extension handlers first, then
the session's public listeners, then persistence of finalised messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pinb.agent import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentLoopTurnUpdate,
    AgentRequestUpdate,
    AgentTurnContext,
    AgentTurnDecision,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from pinb.ai import MESSAGE_ADAPTER, PiRecord, SystemMessage, now_ms
from pinb.ai.transcript import content_text, get_current_system_message
from pinb.app.extensions import events as ev
from pinb.app.extensions.runner import role_of
from pinb.app.session_messages import convert_to_llm
from pinb.app.settlement import AutoRetryEndEvent
from pinb.app.system_prompt import SystemPromptOptions, diff_system_prompt_sections
from pinb.app.system_prompt import build_system_prompt_sections as build_sections


def _replace_message_in_place(target: Any, replacement: Any) -> None:
    # Pi mutates the finalised message object so the Agent's state, later turn/agent events and persistence all see
    # the replacement. pinb's messages are frozen models; same role means same class, so rewrite its fields.
    if target is replacement:
        return
    if type(replacement) is not type(target):
        replacement = type(target).model_validate(
            replacement.model_dump() if hasattr(replacement, "model_dump") else replacement
        )
    for name in type(target).model_fields:
        object.__setattr__(target, name, getattr(replacement, name))
    object.__setattr__(target, "__pydantic_fields_set__", set(replacement.model_fields_set))


def _normalize_message(value: Any) -> Any:
    """A handler's replacement message as a pinb.ai model (dicts are validated with Pi's JSON shape)."""
    if isinstance(value, PiRecord):
        return value
    if isinstance(value, dict) and value.get("content", ...) is None and value.get("role") != "system":
        value = {**value, "content": []}  # Pi normalises null content of untyped handlers
    return MESSAGE_ADAPTER.validate_python(value)


class AgentWiringMixin:
    """Agent hooks and the agent event handler of ``AgentSession`` (whose ``__init__`` creates the state used here)."""

    if TYPE_CHECKING:
        agent: Any
        session_manager: Any
        extension_runner: Any
        _run_prompt_options: SystemPromptOptions | None
        _base_prompt_options: SystemPromptOptions
        _steering_messages: list[str]
        _follow_up_messages: list[str]
        _turn_index: int
        _entry_ids: dict[int, tuple[Any, str]]
        _boundary_dispatched: list[Any]
        _last_assistant_message: Any
        _agent_run_abort_requested: bool
        _retry_attempt: int
        _overflow_recovery_attempted: bool

        async def _compact_before_next_response(self) -> None: ...

        def get_active_tool_names(self) -> list[str]: ...
        def _emit(self, event: Any) -> None: ...
        def _emit_queue_update(self) -> None: ...
        def _flush_pending_custom_messages(self) -> None: ...
        async def _dispatch_turn_end_boundary(self, message: Any, tool_results: list[Any]) -> bool: ...
        def _session_agent_end(self, event: Any) -> Any: ...

    def _install_agent_hooks(self) -> None:
        agent = self.agent
        agent.before_tool_call = self._before_tool_call
        agent.after_tool_call = self._after_tool_call
        agent.prepare_request = self._prepare_request
        agent.finish_turn = self._finish_turn
        agent.prepare_next_turn_with_context = self._prepare_next_turn
        agent.transform_context = self._transform_context
        agent.convert_to_llm = convert_to_llm

    async def _before_tool_call(self, context: BeforeToolCallContext, signal: Any = None) -> Any:
        runner = self.extension_runner
        if not runner.has_handlers("tool_call"):
            return None
        # A raise propagates: the agent loop turns it into an error result with the message (fails closed).
        result = await runner.emit_tool_call(
            ev.ToolCallEvent(tool_name=context.tool_call.name, tool_call_id=context.tool_call.id, input=context.args)
        )
        if result is None:
            return None
        return BeforeToolCallResult(block=bool(result.block), reason=result.reason, terminate=result.terminate)

    async def _after_tool_call(self, context: AfterToolCallContext, signal: Any = None) -> Any:
        runner = self.extension_runner
        if not runner.has_handlers("tool_result"):
            return None
        result = context.result
        hook = await runner.emit_tool_result(
            ev.ToolResultEvent(
                tool_name=context.tool_call.name,
                tool_call_id=context.tool_call.id,
                input=context.args if isinstance(context.args, dict) else {},
                content=tuple(result.content),
                details=result.details,
                structured_content=result.structured_content,
                is_error=context.is_error,
                usage=result.usage,
            )
        )
        if hook is None:
            return None
        return AfterToolCallResult(
            content=tuple(hook.content) if hook.content is not None else tuple(result.content),
            details=hook.details,
            structured_content=hook.structured_content,
            is_error=hook.is_error if hook.is_error is not None else context.is_error,
            usage=hook.usage,
        )

    async def _transform_context(self, messages: Sequence[Any], signal: Any = None) -> list[Any]:
        transformed = await self.extension_runner.emit_context(messages)
        forced = self._run_prompt_options.force_system_prompt if self._run_prompt_options else None
        if forced is None:
            return transformed
        # A forced prompt is projected onto the request, never recorded: one leading system message with it.
        current = get_current_system_message(transformed)
        head = SystemMessage(
            content=forced,
            tools_added=current.tools_added if current else None,
            timestamp=current.timestamp if current else now_ms(),
        )
        return [head, *(m for m in transformed if role_of(m) != "system")]

    async def _prepare_request(self, request: Any, signal: Any = None) -> Any:
        # The session tree is canonical: requests see its projection of the active branch.
        context = request.context
        context.messages = list(self.session_manager.build_session_projection().messages)
        context.tools = list(self.agent.state.tools)
        return AgentRequestUpdate(context=context, model=self.agent.state.model)

    async def _prepare_next_turn(self, turn: AgentTurnContext, signal: Any = None) -> Any:
        await self._compact_before_next_response()
        context = turn.context
        context.messages = list(self.session_manager.build_session_projection().messages)
        context.tools = list(self.agent.state.tools)
        update = self._prompt_update(self._run_prompt_options or self._base_prompt_options, context.messages)
        return AgentLoopTurnUpdate(context=context, messages=[update] if update else None)

    def _prompt_update(self, options: SystemPromptOptions, messages: Sequence[Any]) -> SystemMessage | None:
        """A system message patching the prompt sections the transcript has, or ``None`` when unchanged.

        A forced prompt does not change the transcript: the structured sections are still diffed and recorded.
        """
        options.selected_tools = self.get_active_tool_names()
        current = get_current_system_message(messages)
        patch = diff_system_prompt_sections((current.sections if current else None) or {}, build_sections(options))
        return SystemMessage(content="", sections=patch) if patch else None

    async def _finish_turn(self, turn: AgentTurnContext, signal: Any = None) -> Any:
        self._boundary_dispatched.append(turn.message)
        if await self._dispatch_turn_end_boundary(turn.message, list(turn.tool_results)):
            return AgentTurnDecision(action="continue")
        return None

    # --- the agent event handler ------------------------------------------------------------------------------

    async def _handle_agent_event(self, event: Any, signal: Any = None) -> None:
        if event.type == "agent_start" and self._agent_run_abort_requested:
            self.agent.abort()
        if event.type == "message_start" and role_of(event.message) == "user":
            self._overflow_recovery_attempted = False  # a user turn allows another compact-and-retry
            text = content_text(event.message.content, "")
            if text in self._steering_messages:
                self._steering_messages.remove(text)
                self._emit_queue_update()
            elif text in self._follow_up_messages:
                self._follow_up_messages.remove(text)
                self._emit_queue_update()
        await self._emit_extension_event(event)
        if event.type == "agent_end":
            self._emit(self._session_agent_end(event))
        else:
            self._emit(event)
        if event.type == "message_end":
            self._persist(event.message)
        if event.type == "turn_end":
            self._flush_pending_custom_messages()

    def _persist(self, message: Any) -> None:
        role = role_of(message)
        entry_id = None
        if role == "custom":
            entry_id = self.session_manager.append_custom_message_entry(
                message.custom_type, message.content, message.display, message.details
            )
        elif role in ("system", "user", "assistant", "toolResult"):
            entry_id = self.session_manager.append_message(message)
        if entry_id is not None:
            self._entry_ids[id(message)] = (message, entry_id)
        if role == "assistant":
            self._last_assistant_message = message
            if message.stop_reason not in ("error", "length"):
                self._overflow_recovery_attempted = False
            # A successful response ends a retry sequence at once, even mid-run.
            if message.stop_reason != "error" and self._retry_attempt > 0:
                self._emit(AutoRetryEndEvent(success=True, attempt=self._retry_attempt))
                self._retry_attempt = 0

    async def _emit_extension_event(self, event: Any) -> None:
        runner = self.extension_runner
        match event.type:
            case "agent_start":
                self._turn_index = 0
                await runner.emit(ev.AgentStartEvent())
            case "agent_end":
                await runner.emit(ev.AgentEndEvent(messages=tuple(event.messages)))
            case "turn_start":
                await runner.emit(ev.TurnStartEvent(turn_index=self._turn_index, timestamp=now_ms()))
            case "turn_end":
                message = event.message
                dispatched = any(m is message for m in self._boundary_dispatched)
                self._boundary_dispatched = [m for m in self._boundary_dispatched if m is not message]
                if role_of(message) == "assistant" and not dispatched:
                    await self._dispatch_turn_end_boundary(message, list(event.tool_results))
                self._turn_index += 1
            case "message_start":
                await runner.emit(ev.MessageStartEvent(message=event.message))
            case "message_update":
                await runner.emit(
                    ev.MessageUpdateEvent(message=event.message, assistant_message_event=event.assistant_message_event)
                )
            case "message_end":
                replacement = await runner.emit_message_end(
                    ev.MessageEndEvent(message=event.message), validate_message=_normalize_message
                )
                if replacement is not None:
                    _replace_message_in_place(event.message, replacement)
            case "tool_execution_start":
                await runner.emit(
                    ev.ToolExecutionStartEvent(
                        tool_call_id=event.tool_call_id, tool_name=event.tool_name, args=event.args
                    )
                )
            case "tool_execution_update":
                await runner.emit(
                    ev.ToolExecutionUpdateEvent(
                        tool_call_id=event.tool_call_id,
                        tool_name=event.tool_name,
                        args=event.args,
                        partial_result=event.partial_result,
                    )
                )
            case "tool_execution_end":
                await runner.emit(
                    ev.ToolExecutionEndEvent(
                        tool_call_id=event.tool_call_id,
                        tool_name=event.tool_name,
                        result=event.result,
                        is_error=event.is_error,
                        duration_ms=event.duration_ms,
                    )
                )
