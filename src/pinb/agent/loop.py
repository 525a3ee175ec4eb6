"""The stateless agent loop, like pi-agent-core's ``agent-loop.ts``.

Plain async functions that build events and hand them to ``emit``. A turn is one provider request plus the tool
execution that follows. The loop knows nothing of ``Agent``: it works on its own copy of the context, and returns
the messages the run added.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from pinb import _faults
from pinb.agent.tool_execution import execute_tool_calls, fail_truncated_tool_calls
from pinb.agent.transcript_state import ToolLedger
from pinb.agent.types import (
    AgentContext,
    AgentEndEvent,
    AgentLoopConfig,
    AgentLoopTurnUpdate,
    AgentRequestUpdate,
    AgentStartEvent,
    AgentTurnContext,
    AgentTurnDecision,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    PrepareRequestContext,
    StreamFn,
    ToolResultMessage,
    TurnEndEvent,
    TurnStartEvent,
    hook_result,
    resolve,
)
from pinb.ai.abort import AbortSignal
from pinb.ai.types import AssistantMessage, Context, ToolCall, replace_fields
from pinb.errors import UsageError

_DELTA_TYPES = frozenset(
    {
        "text_start",
        "text_delta",
        "text_end",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
    }
)


def _async_sink(emit: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if inspect.iscoroutinefunction(emit):
        return emit

    async def sink(event: Any) -> None:
        await resolve(emit(event))

    return sink


async def run_agent_loop(
    prompts: Sequence[Any],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Callable[[Any], Any],
    signal: AbortSignal | None,
    stream_fn: StreamFn,
) -> list[Any]:
    """Run from new prompt messages: they are appended (with their events) before the first request."""
    emit = _async_sink(emit)
    ledger = ToolLedger()
    initial = ledger.declare_tool_changes(context, list(prompts))
    new_messages = list(initial)
    current = AgentContext(messages=[*context.messages, *initial], tools=context.tools)
    await emit(AgentStartEvent())
    await emit(TurnStartEvent())
    for message in initial:
        await emit(MessageStartEvent(message=message))
        await emit(MessageEndEvent(message=message))
    await _run_loop(current, new_messages, config, signal, emit, stream_fn, ledger)
    return new_messages


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Callable[[Any], Any],
    signal: AbortSignal | None,
    stream_fn: StreamFn,
) -> list[Any]:
    """Continue from the current context without a new message (the last message must not be an assistant's)."""
    if not context.messages:
        raise UsageError("Cannot continue: no messages in context")
    if getattr(context.messages[-1], "role", None) == "assistant":
        raise UsageError("Cannot continue from message role: assistant")
    emit = _async_sink(emit)
    new_messages: list[Any] = []
    current = AgentContext(messages=context.messages, tools=context.tools)
    await emit(AgentStartEvent())
    await emit(TurnStartEvent())
    await _run_loop(current, new_messages, config, signal, emit, stream_fn, ToolLedger())
    return new_messages


def _with_thinking(config: AgentLoopConfig, update: Any) -> AgentLoopConfig:
    level = update.thinking_level
    reasoning = config.reasoning if level is None else (None if level == "off" else level)
    return dataclasses.replace(config, model=update.model or config.model, reasoning=reasoning)


async def _poll(getter: Callable[[], Any] | None) -> list[Any]:
    if getter is None:
        return []
    return list(await resolve(getter()) or [])


async def _run_loop(
    current: AgentContext,
    new_messages: list[Any],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Callable[[Any], Any],
    stream_fn: StreamFn,
    ledger: ToolLedger,
) -> None:
    last_completed: AgentTurnContext | None = None
    explicit_continuation = False
    # Steering typed while the run was starting.
    pending = await _poll(config.get_steering_messages)
    while True:
        has_more_tool_calls = True
        while has_more_tool_calls or pending:
            prepared: list[Any] = []
            if last_completed is not None:
                if config.prepare_next_turn is not None:
                    update = await hook_result(config.prepare_next_turn(last_completed), AgentLoopTurnUpdate)
                    if update is not None:
                        current = update.context or current
                        prepared = list(update.messages or [])
                        config = _with_thinking(config, update)
                # Preparation can be long (compaction): pick up steering queued meanwhile, unless a poll already
                # returned some (one-at-a-time mode would otherwise deliver two in this turn).
                if not pending:
                    pending = await _poll(config.get_steering_messages)
                await emit(TurnStartEvent())
            for message in ledger.declare_tool_changes(current, [*prepared, *pending]):
                await emit(MessageStartEvent(message=message))
                await emit(MessageEndEvent(message=message))
                current.messages.append(message)
                new_messages.append(message)
            pending = []
            if config.prepare_request is not None:
                request = PrepareRequestContext(
                    context=current, model=config.model, thinking_level=config.reasoning or "off"
                )
                request_update = await hook_result(config.prepare_request(request, signal), AgentRequestUpdate)
                if request_update is not None:
                    current = request_update.context or current
                    config = _with_thinking(config, request_update)

            message = await _stream_assistant_response(current, config, signal, emit, stream_fn)
            new_messages.append(message)
            if message.stop_reason in ("error", "aborted"):
                last_completed = AgentTurnContext(message, [], current, new_messages)
                if config.finish_turn is not None:
                    await resolve(config.finish_turn(last_completed, signal))
                await emit(TurnEndEvent(message=message, tool_results=()))
                await emit(AgentEndEvent(messages=tuple(new_messages)))
                return

            tool_results: list[ToolResultMessage] = []
            has_more_tool_calls = False
            early_turn_end = "turn-end-before-tool-results" in _faults.ACTIVE  # a test-only fault, off in use
            if early_turn_end:
                await emit(TurnEndEvent(message=message, tool_results=()))
            if any(isinstance(block, ToolCall) for block in message.content):
                # A "length" stop may have truncated every call's arguments: fail them all instead of running them.
                if message.stop_reason == "length":
                    batch = await fail_truncated_tool_calls(message, emit)
                else:
                    batch = await execute_tool_calls(current, message, config, signal, emit)
                tool_results.extend(batch.messages)
                has_more_tool_calls = not batch.terminate
                for result in tool_results:
                    current.messages.append(result)
                    new_messages.append(result)

            last_completed = AgentTurnContext(message, tool_results, current, new_messages)
            decision = None
            if config.finish_turn is not None:
                decision = await hook_result(config.finish_turn(last_completed, signal), AgentTurnDecision)
            if not early_turn_end:
                await emit(TurnEndEvent(message=message, tool_results=tuple(tool_results)))
            if decision is not None and decision.action == "end":
                await emit(AgentEndEvent(messages=tuple(new_messages)))
                return
            explicit_continuation = decision is not None and decision.action == "continue"
            pending = await _poll(config.get_steering_messages)
            if has_more_tool_calls or pending:
                explicit_continuation = False

        # The agent would stop here: follow-ups start another round.
        follow_ups = await _poll(config.get_follow_up_messages)
        if follow_ups:
            explicit_continuation = False
            pending = follow_ups
            continue
        # No natural request was selected: fulfil the continuation decision with one context-only turn.
        if explicit_continuation:
            explicit_continuation = False
            continue
        break
    await emit(AgentEndEvent(messages=tuple(new_messages)))


async def _stream_assistant_response(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Callable[[Any], Any],
    stream_fn: StreamFn,
) -> AssistantMessage:
    messages: Sequence[Any] = context.messages
    if config.transform_context is not None:
        messages = await resolve(config.transform_context(messages, signal))
    llm_messages = await resolve(config.convert_to_llm(messages))
    api_key = None
    if config.get_api_key is not None:
        api_key = await resolve(config.get_api_key(config.model.provider))
    options = {
        **config.stream_options,
        "api_key": api_key or config.stream_options.get("api_key"),
        "reasoning": config.reasoning,
        "signal": signal,
    }
    response = await resolve(stream_fn(config.model, Context(messages=llm_messages), options))
    thinking_level = config.reasoning or "off"

    async def final_message() -> AssistantMessage:
        result = await response.result()
        return replace_fields(result, thinking_level=thinking_level)

    partial: AssistantMessage | None = None
    added_partial = False
    events = response.__aiter__()
    async for event in events:
        kind = event.type
        if kind == "start":
            partial = event.partial
            context.messages.append(partial)
            added_partial = True
            await emit(MessageStartEvent(message=partial))
        elif kind in _DELTA_TYPES:
            if partial is not None:
                partial = event.partial
                context.messages[-1] = partial
                await emit(MessageUpdateEvent(message=partial, assistant_message_event=event))
        elif kind in ("done", "error"):
            break
    # Close the iteration now rather than leaving it to the garbage collector (one task per response).
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
    final = await final_message()
    if added_partial:
        context.messages[-1] = final
    else:
        context.messages.append(final)
        await emit(MessageStartEvent(message=final))
    await emit(MessageEndEvent(message=final))
    return final


class AgentEventStream:
    """Events of one loop run as an async iterator (Pi's ``agentLoop`` stream); ``result()`` gives the new messages.

    The run goes on in its own task and its events queue up until read. An exception raised inside the run (a hook
    that raises) is raised to the reader instead of being lost.
    """

    def __init__(self, run: Callable[[Callable[[Any], Any]], Any]) -> None:
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = asyncio.ensure_future(run(self._queue.put_nowait))
        self._task.add_done_callback(lambda _: self._queue.put_nowait(_END))

    def __aiter__(self) -> AgentEventStream:
        return self

    async def __anext__(self) -> Any:
        event = await self._queue.get()
        if event is _END:
            self._queue.put_nowait(_END)
            if self._task.exception() is not None:
                raise self._task.exception()  # type: ignore[misc]
            raise StopAsyncIteration
        return event

    async def result(self) -> list[Any]:
        """The messages the run added (waits for the run to finish)."""
        return await self._task


_END = object()


def agent_loop(
    prompts: Sequence[Any],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    stream_fn: StreamFn,
) -> AgentEventStream:
    """``run_agent_loop`` as a stream of events (must be called inside a running event loop)."""
    return AgentEventStream(lambda emit: run_agent_loop(prompts, context, config, emit, signal, stream_fn))


def agent_loop_continue(
    context: AgentContext, config: AgentLoopConfig, signal: AbortSignal | None, stream_fn: StreamFn
) -> AgentEventStream:
    """``run_agent_loop_continue`` as a stream of events; refuses at once when there is nothing to continue from."""
    if not context.messages:
        raise UsageError("Cannot continue: no messages in context")
    if getattr(context.messages[-1], "role", None) == "assistant":
        raise UsageError("Cannot continue from message role: assistant")
    return AgentEventStream(lambda emit: run_agent_loop_continue(context, config, emit, signal, stream_fn))
