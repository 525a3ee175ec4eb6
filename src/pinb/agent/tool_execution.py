"""Tool execution for one assistant message, like the tool half of pi-agent-core's ``agent-loop.ts``.

Parallel (default): each call is prepared in source order (``tool_execution_start``, validation,
``before_tool_call``); calls that may run then execute concurrently; ``tool_execution_end`` follows each call's
completion; the tool-result messages come after the whole batch, in source order. Sequential: each call is
prepared, executed and finished before the next starts.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from pinb.agent.eager import run_eagerly
from pinb.agent.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    hook_result,
    resolve,
)
from pinb.ai.abort import AbortSignal
from pinb.ai.types import AssistantMessage, Model, TextContent, ToolCall, ToolResultMessage, tool_calls_of
from pinb.ai.validation import validate_tool_arguments

Emit = Callable[[Any], Awaitable[None]]

OPERATION_ABORTED = "Operation aborted"


@dataclass(frozen=True)
class Finalized:
    """A tool call's final outcome after hooks (Pi's ``AgentToolCallOutcome``)."""

    tool_call: ToolCall
    result: AgentToolResult
    is_error: bool
    duration_ms: int | None = None


#: Pi's name for it.
AgentToolCallOutcome = Finalized


@dataclass(frozen=True)
class _Prepared:
    tool_call: ToolCall
    tool: AgentTool
    args: Any


@dataclass(frozen=True)
class ToolBatch:
    messages: list[ToolResultMessage]
    terminate: bool


def error_result(message: str) -> AgentToolResult:
    """Pi's ``createErrorToolResult``: one text block, details ``{}``."""
    return AgentToolResult(content=(TextContent(text=message),), details={})


def error_text(error: BaseException) -> str:
    """``error.message`` for an exception (its ``str``)."""
    return str(error)


def _as_tool_result(value: Any) -> AgentToolResult:
    if isinstance(value, AgentToolResult):
        return value
    if isinstance(value, dict):
        try:
            return AgentToolResult.model_validate(value)
        except ValidationError as error:
            raise TypeError(f"tool returned an invalid result: {error.errors()[0]['msg']}") from error
    raise TypeError(f"tool returned {type(value).__name__}, not an AgentToolResult")


async def execute_tool_calls(
    context: AgentContext, assistant: AssistantMessage, config: AgentLoopConfig, signal: AbortSignal | None, emit: Emit
) -> ToolBatch:
    calls = tool_calls_of(assistant)
    tools = {}
    for tool in context.tools:
        tools.setdefault(tool.name, tool)
    sequential = config.tool_execution == "sequential" or any(
        (tool := tools.get(call.name)) is not None and tool.execution_mode == "sequential" for call in calls
    )
    if sequential:
        return await _sequential(context, assistant, calls, config, signal, emit)
    return await _parallel(context, assistant, calls, config, signal, emit)


async def fail_truncated_tool_calls(assistant: AssistantMessage, emit: Emit) -> ToolBatch:
    """A ``length`` stop may have cut the arguments: fail every call so the model re-issues it."""
    messages = []
    for call in tool_calls_of(assistant):
        await emit(ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments))
        finalized = Finalized(
            call,
            error_result(
                f'Tool call "{call.name}" was not executed: the response hit the output token limit, so its arguments '
                "may be truncated. Re-issue the tool call with complete arguments."
            ),
            True,
        )
        await _emit_end(finalized, emit)
        message = _result_message(finalized)
        await _emit_result_message(message, emit)
        messages.append(message)
    return ToolBatch(messages, terminate=False)


async def _sequential(
    context: AgentContext,
    assistant: AssistantMessage,
    calls: list[ToolCall],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> ToolBatch:
    finalized_calls = []
    messages = []
    for call in calls:
        await emit(ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments))
        preparation = await _prepare(context, assistant, call, config, signal)
        if isinstance(preparation, Finalized):
            finalized = preparation
        else:
            executed = await _execute(preparation, signal, _update_sink(call, emit))
            finalized = await _finalize(context, assistant, preparation, executed, config, signal)
        await _emit_end(finalized, emit)
        message = _result_message(finalized)
        await _emit_result_message(message, emit)
        finalized_calls.append(finalized)
        messages.append(message)
    return ToolBatch(messages, _should_terminate(finalized_calls))


async def _parallel(
    context: AgentContext,
    assistant: AssistantMessage,
    calls: list[ToolCall],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> ToolBatch:
    entries: list[Finalized | Callable[[], Awaitable[Finalized]]] = []
    for call in calls:
        await emit(ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments))
        preparation = await _prepare(context, assistant, call, config, signal)
        if isinstance(preparation, Finalized):
            await _emit_end(preparation, emit)
            entries.append(preparation)
            continue

        async def run(call: ToolCall = call, preparation: _Prepared = preparation) -> Finalized:
            if signal is not None and signal.aborted:
                finalized = Finalized(call, error_result(OPERATION_ABORTED), True)
                await _emit_end(finalized, emit)
                return finalized
            executed = await _execute(preparation, signal, _update_sink(call, emit))
            finalized = await _finalize(context, assistant, preparation, executed, config, signal)
            await _emit_end(finalized, emit)
            return finalized

        entries.append(run)

    async def settled(value: Finalized) -> Finalized:
        return value

    if len(entries) == 1:
        only = entries[0]
        ordered = [await only() if callable(only) else only]
    else:
        # Every call starts now, in source order (like the entries of Promise.all).
        started = [run_eagerly(entry()) if callable(entry) else settled(entry) for entry in entries]
        ordered = list(await asyncio.gather(*started))
    messages = []
    for finalized in ordered:
        message = _result_message(finalized)
        await _emit_result_message(message, emit)
        messages.append(message)
    return ToolBatch(messages, _should_terminate(ordered))


def _should_terminate(finalized: list[Finalized]) -> bool:
    return bool(finalized) and all(f.result.terminate is True for f in finalized)


async def _prepare(
    context: AgentContext,
    assistant: AssistantMessage,
    call: ToolCall,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    tools: Sequence[AgentTool] | None = None,
) -> Finalized | _Prepared:
    # Once aborted, skip preparation and the hooks; the call still gets a result.
    if signal is not None and signal.aborted:
        return Finalized(call, error_result(OPERATION_ABORTED), True)
    tool = next((t for t in (context.tools if tools is None else tools) if t.name == call.name), None)
    if tool is None:
        return Finalized(call, error_result(f"Tool {call.name} not found"), True)
    try:
        prepared_call = call
        if tool.prepare_arguments is not None:
            prepared_args = tool.prepare_arguments(call.arguments)
            if prepared_args is not call.arguments:
                prepared_call = call.model_copy(update={"arguments": prepared_args})
        args = validate_tool_arguments(tool, prepared_call)
        if config.before_tool_call is not None:
            hook_context = BeforeToolCallContext(
                assistant_message=assistant, tool_call=call, args=args, context=context
            )
            before = await hook_result(config.before_tool_call(hook_context, signal), BeforeToolCallResult)
            if signal is not None and signal.aborted:
                return Finalized(call, error_result(OPERATION_ABORTED), True)
            if before is not None and before.block:
                result = error_result(before.reason or "Tool execution was blocked")
                if before.terminate is True:
                    result = result.model_copy(update={"terminate": True})
                return Finalized(call, result, True)
        return _Prepared(call, tool, args)
    except Exception as error:
        return Finalized(call, error_result(error_text(error)), True)


async def run_tool_call(
    tool_call: ToolCall,
    *,
    tools: Sequence[AgentTool],
    assistant_message: AssistantMessage,
    context: AgentContext,
    signal: AbortSignal | None = None,
    on_update: Callable[[Any], Any] | None = None,
    before_tool_call: Any = None,
    after_tool_call: Any = None,
) -> Finalized:
    """Run one call through the model-issued steps (prepare, validate, hooks, execute), emitting nothing.

    Pi's ``runToolCall``, for tools that call other tools so the same hooks apply. Never raises for tool
    failures: an aborted signal, an unknown tool, invalid arguments, a block or an exception come back as
    ``is_error``.
    """
    hooks = AgentLoopConfig(
        model=assistant_message_model(assistant_message),
        convert_to_llm=list,
        before_tool_call=before_tool_call,
        after_tool_call=after_tool_call,
    )
    preparation = await _prepare(context, assistant_message, tool_call, hooks, signal, tools)
    if isinstance(preparation, Finalized):
        return preparation

    async def sink(partial: Any) -> None:
        if on_update is not None:
            await resolve(on_update(partial))

    executed = await _execute(preparation, signal, sink)
    return await _finalize(context, assistant_message, preparation, executed, hooks, signal)


def assistant_message_model(message: AssistantMessage) -> Model:
    """A placeholder model naming the assistant message's provider (hooks do not read it)."""
    return Model(id=message.model, name=message.model, api=message.api, provider=message.provider)


def _update_sink(call: ToolCall, emit: Emit) -> Callable[[Any], Awaitable[None]]:
    def sink(partial: Any) -> Awaitable[None]:
        return emit(
            ToolExecutionUpdateEvent(
                tool_call_id=call.id, tool_name=call.name, args=call.arguments, partial_result=partial
            )
        )

    return sink


async def _execute(
    prepared: _Prepared, signal: AbortSignal | None, on_update: Callable[[Any], Awaitable[None]]
) -> Finalized:
    updates: list[asyncio.Future[Any]] = []
    accepting = True

    def report(partial: Any) -> None:
        # An update is emitted at once (its listeners run now, as in Pi) and awaited before the call finishes;
        # updates reported after the call settled are ignored.
        if accepting:
            updates.append(run_eagerly(on_update(partial)))

    started = time.perf_counter()
    try:
        raw = prepared.tool.execute(prepared.tool_call.id, prepared.args, signal, report)
        # JavaScript runs an async execute() at once up to its first await, and awaiting it always yields at least
        # once: the batch's next call starts before this one's result is handled.
        pending = run_eagerly(raw) if inspect.iscoroutine(raw) else raw
        if not isinstance(pending, asyncio.Future) or pending.done():
            await asyncio.sleep(0)
        result = _as_tool_result(await resolve(pending))
        is_error = result.is_error is True
    except Exception as error:
        result, is_error = error_result(error_text(error)), True
    finally:
        accepting = False
    duration = round((time.perf_counter() - started) * 1000)
    if updates:
        await asyncio.gather(*updates)
    return Finalized(prepared.tool_call, result, is_error, duration)


async def _finalize(
    context: AgentContext,
    assistant: AssistantMessage,
    prepared: _Prepared,
    executed: Finalized,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
) -> Finalized:
    result = executed.result
    is_error = executed.is_error
    if config.after_tool_call is not None:
        try:
            hook_context = AfterToolCallContext(
                assistant_message=assistant,
                tool_call=prepared.tool_call,
                args=prepared.args,
                result=result,
                is_error=is_error,
                context=context,
            )
            after = await hook_result(config.after_tool_call(hook_context, signal), AfterToolCallResult)
            if after is not None:
                # Structured content not replaced along with the content may no longer match it.
                structured = after.structured_content
                if structured is None and after.content is None:
                    structured = result.structured_content
                result = AgentToolResult.model_validate(
                    {
                        "content": tuple(after.content) if after.content is not None else result.content,
                        "details": after.details if after.details is not None else result.details,
                        "structured_content": structured,
                        "usage": after.usage if after.usage is not None else result.usage,
                        "is_error": result.is_error,
                        "terminate": after.terminate if after.terminate is not None else result.terminate,
                    }
                )
                if after.is_error is not None:
                    is_error = after.is_error
        except Exception as error:
            result = error_result(error_text(error))
            is_error = True
    return Finalized(prepared.tool_call, result, is_error, executed.duration_ms)


async def _emit_end(finalized: Finalized, emit: Emit) -> None:
    await emit(
        ToolExecutionEndEvent(
            tool_call_id=finalized.tool_call.id,
            tool_name=finalized.tool_call.name,
            result=finalized.result,
            is_error=finalized.is_error,
            duration_ms=finalized.duration_ms,
        )
    )


def _result_message(finalized: Finalized) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=finalized.tool_call.id,
        tool_name=finalized.tool_call.name,
        content=finalized.result.content or (),
        details=finalized.result.details,
        usage=finalized.result.usage,
        is_error=finalized.is_error,
        duration_ms=finalized.duration_ms,
    )


async def _emit_result_message(message: ToolResultMessage, emit: Emit) -> None:
    await emit(MessageStartEvent(message=message))
    await emit(MessageEndEvent(message=message))
