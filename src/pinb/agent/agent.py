"""The stateful ``Agent`` shell around the loop, like pi-agent-core's ``agent.ts``.

``Agent`` owns the transcript, reduces its state from the loop's events, then awaits each listener in order
(a live set: subscribing or unsubscribing during dispatch takes effect at once), and queues steering and follow-up
messages. A failure inside a run (a listener or hook that raises) becomes an error assistant message with
``turn_end`` and ``agent_end``; misuse (prompting while busy) raises ``AgentBusyError`` with Pi's wording.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pinb.agent.listeners import ListenerSet
from pinb.agent.loop import run_agent_loop, run_agent_loop_continue
from pinb.agent.transcript_state import ToolLedger, default_convert_to_llm
from pinb.agent.types import (
    AfterToolCall,
    AgentContext,
    AgentEndEvent,
    AgentListener,
    AgentLoopConfig,
    AgentMessage,
    AgentTool,
    AgentTurnContext,
    BeforeToolCall,
    ConvertToLlm,
    FinishTurn,
    MessageEndEvent,
    MessageStartEvent,
    PrepareRequest,
    QueueMode,
    StreamFn,
    ThinkingLevel,
    ToolExecutionMode,
    TransformContext,
    TurnEndEvent,
    resolve,
)
from pinb.ai.abort import AbortController, AbortSignal
from pinb.ai.transcript import create_initial_system_message, get_current_system_message, get_current_system_prompt
from pinb.ai.types import (
    DEFAULT_MODEL,
    EMPTY_USAGE,
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    UserMessage,
    parse_message,
)
from pinb.errors import AgentBusyError, UsageError

BUSY_PROMPT = (
    "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
)
BUSY_CONTINUE = "Agent is already processing. Wait for completion before continuing."
BUSY_RESET = "Agent is already processing. Wait for completion before resetting."
BUSY_RUN = "Agent is already processing."


@dataclass
class AgentInitialState:
    """Initial state: ``system_prompt`` and ``tools`` become the leading system message unless ``messages`` has one."""

    system_prompt: str | None = None
    model: Model | None = None
    thinking_level: ThinkingLevel = "off"
    tools: Sequence[AgentTool] = ()
    messages: Sequence[AgentMessage] = ()


class AgentState:
    """The agent's public state. Assigning ``tools`` or ``messages`` copies the given list."""

    def __init__(self, initial: AgentInitialState) -> None:
        self._tools: list[AgentTool] = list(initial.tools)
        self._messages: list[AgentMessage] = list(initial.messages)
        ledger = ToolLedger()
        first = create_initial_system_message(initial.system_prompt, [ledger.declaration(t) for t in self._tools])
        if (not self._messages or getattr(self._messages[0], "role", None) != "system") and first is not None:
            self._messages.insert(0, first)
        #: Model used for future turns.
        self.model: Model = initial.model or DEFAULT_MODEL
        #: Requested reasoning level for future turns.
        self.thinking_level: ThinkingLevel = initial.thinking_level
        #: True while a prompt or continuation runs (until ``agent_end`` listeners settle).
        self.is_streaming = False
        #: The partial assistant message being streamed, if any.
        self.streaming_message: AgentMessage | None = None
        #: Ids of tool calls currently executing.
        self.pending_tool_calls: frozenset[str] = frozenset()
        #: Error message of the most recent failed or aborted assistant turn.
        self.error_message: str | None = None

    @property
    def system_prompt(self) -> str:
        """The current system prompt, replayed from the transcript's system messages (read-only)."""
        return get_current_system_prompt(self._messages)

    @property
    def tools(self) -> list[AgentTool]:
        """Executable tools; differences from the declared ones are announced before the next request."""
        return self._tools

    @tools.setter
    def tools(self, tools: Sequence[AgentTool]) -> None:
        self._tools = list(tools)

    @property
    def messages(self) -> list[AgentMessage]:
        """The transcript."""
        return self._messages

    @messages.setter
    def messages(self, messages: Sequence[AgentMessage]) -> None:
        self._messages = list(messages)


class PendingMessageQueue:
    """Steering or follow-up messages waiting for a drain point."""

    def __init__(self, mode: QueueMode) -> None:
        self.mode: QueueMode = mode
        self.messages: list[AgentMessage] = []

    def enqueue(self, message: AgentMessage) -> None:
        self.messages.append(message)

    def has_items(self) -> bool:
        return bool(self.messages)

    def peek(self) -> list[AgentMessage]:
        if self.mode == "all":
            return list(self.messages)
        return self.messages[:1]

    def drain(self) -> list[AgentMessage]:
        drained = self.peek()
        self.messages = self.messages[len(drained) :]
        return drained

    def clear(self) -> None:
        self.messages = []


@dataclass
class _ActiveRun:
    done: asyncio.Future[None]
    controller: AbortController = field(default_factory=AbortController)


def _as_message(message: Any) -> AgentMessage:
    if isinstance(message, str):
        return UserMessage(content=(TextContent(text=message),))
    if isinstance(message, dict):
        return parse_message(message)
    return message


class Agent:
    """Stateful agent: transcript, lifecycle events, tool execution, steering and follow-up queues."""

    def __init__(
        self,
        *,
        initial_state: AgentInitialState | dict[str, Any] | None = None,
        stream_fn: StreamFn,
        convert_to_llm: ConvertToLlm | None = None,
        transform_context: TransformContext | None = None,
        get_api_key: Callable[[str], Any] | None = None,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        finish_turn: FinishTurn | None = None,
        prepare_request: PrepareRequest | None = None,
        prepare_next_turn: Callable[[AbortSignal | None], Any] | None = None,
        prepare_next_turn_with_context: Callable[[AgentTurnContext, AbortSignal | None], Any] | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        tool_execution: ToolExecutionMode = "parallel",
        session_id: str | None = None,
        stream_options: dict[str, Any] | None = None,
    ) -> None:
        if not callable(stream_fn):
            raise UsageError("Agent needs stream_fn, for example FauxProvider().stream")
        if isinstance(initial_state, dict):
            initial_state = AgentInitialState(**initial_state)
        self._state = AgentState(initial_state or AgentInitialState())
        self._listeners = ListenerSet()
        self._steering = PendingMessageQueue(steering_mode)
        self._follow_up = PendingMessageQueue(follow_up_mode)
        self.convert_to_llm: ConvertToLlm = convert_to_llm or default_convert_to_llm()
        self.transform_context = transform_context
        self.stream_fn = stream_fn
        self.get_api_key = get_api_key
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.finish_turn = finish_turn
        self.prepare_request = prepare_request
        self.prepare_next_turn = prepare_next_turn
        self.prepare_next_turn_with_context = prepare_next_turn_with_context
        self.tool_execution: ToolExecutionMode = tool_execution
        #: Forwarded to providers for cache-aware backends.
        self.session_id = session_id
        self.stream_options = dict(stream_options or {})
        self._active: _ActiveRun | None = None

    # --- listeners and state --------------------------------------------------------------------------------------

    def subscribe(self, listener: AgentListener) -> Callable[[], bool]:
        """Add a listener ``(event, signal)``, sync or async; awaited in subscription order. Returns unsubscribe."""
        return self._listeners.add(listener)

    @property
    def state(self) -> AgentState:
        return self._state

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up.mode = mode

    @property
    def signal(self) -> AbortSignal | None:
        """The abort signal of the current run, if any."""
        return self._active.controller.signal if self._active else None

    # --- queues ---------------------------------------------------------------------------------------------------

    def steer(self, message: AgentMessage | str) -> None:
        """Queue a message to inject after the current assistant turn finishes its tool calls."""
        self._steering.enqueue(_as_message(message))

    def follow_up(self, message: AgentMessage | str) -> None:
        """Queue a message to run only after the agent would otherwise stop."""
        self._follow_up.enqueue(_as_message(message))

    def clear_steering_queue(self) -> None:
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_up.clear()

    def clear_all_queues(self) -> None:
        self.clear_steering_queue()
        self.clear_follow_up_queue()

    def has_queued_messages(self) -> bool:
        return self._steering.has_items() or self._follow_up.has_items()

    def peek_queued_messages(self) -> list[AgentMessage]:
        """The messages the next drain would take, without taking them."""
        steering = self._steering.peek()
        return steering if steering else self._follow_up.peek()

    # --- runs -----------------------------------------------------------------------------------------------------

    def abort(self) -> None:
        """Abort the current run, if one is active (queued messages stay queued)."""
        if self._active is not None:
            self._active.controller.abort()

    async def wait_for_idle(self) -> None:
        """Return when the current run and all its listeners (``agent_end``'s included) have finished."""
        if self._active is not None:
            await asyncio.shield(self._active.done)

    def reset(self) -> None:
        """Clear the transcript (keeping the replayed prompt and tools) and the queues."""
        if self._active is not None:
            raise AgentBusyError(BUSY_RESET)
        baseline = get_current_system_message(self._state.messages)
        self._state.messages = [baseline] if baseline else []
        self._state.is_streaming = False
        self._state.streaming_message = None
        self._state.pending_tool_calls = frozenset()
        self._state.error_message = None
        self.clear_all_queues()

    async def prompt(
        self, input: str | AgentMessage | Sequence[AgentMessage], images: Sequence[ImageContent] | None = None
    ) -> None:
        """Run from a prompt: a string (becomes a user message, with ``images``), a message, or a list of them."""
        if self._active is not None:
            raise AgentBusyError(BUSY_PROMPT)
        await self._run_prompt_messages(self._normalize_prompt(input, images))

    async def continue_(self) -> None:
        """Continue from the transcript. Its last message must not be an assistant's, unless messages are queued."""
        if self._active is not None:
            raise AgentBusyError(BUSY_CONTINUE)
        messages = self._state.messages
        if not messages or all(getattr(m, "role", None) == "system" for m in messages):
            raise UsageError("No messages to continue from")
        if getattr(messages[-1], "role", None) == "assistant":
            queued_steering = self._steering.drain()
            if queued_steering:
                await self._run_prompt_messages(queued_steering, skip_initial_steering_poll=True)
                return
            queued_follow_ups = self._follow_up.drain()
            if queued_follow_ups:
                await self._run_prompt_messages(queued_follow_ups)
                return
            raise UsageError("Cannot continue from message role: assistant")
        await self._run_with_lifecycle(
            lambda signal: run_agent_loop_continue(
                self._snapshot(), self._loop_config(), self._process_event, signal, self.stream_fn
            )
        )

    @staticmethod
    def _normalize_prompt(input: Any, images: Sequence[ImageContent] | None) -> list[AgentMessage]:
        if isinstance(input, list | tuple):
            return [_as_message(m) for m in input]
        if not isinstance(input, str):
            return [_as_message(input)]
        content: list[Any] = [TextContent(text=input)]
        content.extend(images or ())
        return [UserMessage(content=tuple(content))]

    async def _run_prompt_messages(
        self, messages: list[AgentMessage], skip_initial_steering_poll: bool = False
    ) -> None:
        await self._run_with_lifecycle(
            lambda signal: run_agent_loop(
                messages,
                self._snapshot(),
                self._loop_config(skip_initial_steering_poll),
                self._process_event,
                signal,
                self.stream_fn,
            )
        )

    def _snapshot(self) -> AgentContext:
        return AgentContext(messages=list(self._state.messages), tools=list(self._state.tools))

    def _loop_config(self, skip_initial_steering_poll: bool = False) -> AgentLoopConfig:
        skip = skip_initial_steering_poll

        async def get_steering_messages() -> list[AgentMessage]:
            nonlocal skip
            if skip:
                skip = False
                return []
            return self._steering.drain()

        async def get_follow_up_messages() -> list[AgentMessage]:
            return self._follow_up.drain()

        prepare_next_turn = None
        if self.prepare_next_turn_with_context is not None or self.prepare_next_turn is not None:

            async def prepare_next_turn(context: AgentTurnContext) -> Any:
                if self.prepare_next_turn_with_context is not None:
                    return await resolve(self.prepare_next_turn_with_context(context, self.signal))
                assert self.prepare_next_turn is not None
                return await resolve(self.prepare_next_turn(self.signal))

        options = dict(self.stream_options)
        if self.session_id is not None:
            options["session_id"] = self.session_id
        return AgentLoopConfig(
            model=self._state.model,
            convert_to_llm=self.convert_to_llm,
            transform_context=self.transform_context,
            reasoning=None if self._state.thinking_level == "off" else self._state.thinking_level,
            tool_execution=self.tool_execution,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            finish_turn=self.finish_turn,
            prepare_request=self.prepare_request,
            prepare_next_turn=prepare_next_turn,
            get_steering_messages=get_steering_messages,
            get_follow_up_messages=get_follow_up_messages,
            get_api_key=self.get_api_key,
            stream_options=options,
        )

    async def _run_with_lifecycle(self, executor: Callable[[AbortSignal], Awaitable[Any]]) -> None:
        if self._active is not None:
            raise AgentBusyError(BUSY_RUN)
        run = _ActiveRun(done=asyncio.get_running_loop().create_future())
        self._active = run
        self._state.is_streaming = True
        self._state.streaming_message = None
        self._state.error_message = None
        try:
            await executor(run.controller.signal)
        except Exception as error:
            await self._handle_run_failure(error, run.controller.signal.aborted)
        finally:
            self._finish_run()

    async def _handle_run_failure(self, error: Exception, aborted: bool) -> None:
        model = self._state.model
        failure = AssistantMessage(
            content=(TextContent(text=""),),
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=EMPTY_USAGE,
            stop_reason="aborted" if aborted else "error",
            error_message=str(error),
        )
        await self._process_event(MessageStartEvent(message=failure))
        await self._process_event(MessageEndEvent(message=failure))
        await self._process_event(TurnEndEvent(message=failure, tool_results=()))
        await self._process_event(AgentEndEvent(messages=(failure,)))

    def _finish_run(self) -> None:
        self._state.is_streaming = False
        self._state.streaming_message = None
        self._state.pending_tool_calls = frozenset()
        if self._active is not None and not self._active.done.done():
            self._active.done.set_result(None)
        self._active = None

    async def _process_event(self, event: Any) -> None:
        """Reduce state for one loop event, then await the listeners in order."""
        state = self._state
        kind = event.type
        if kind in ("message_start", "message_update"):
            state.streaming_message = event.message
        elif kind == "message_end":
            state.streaming_message = None
            state.messages.append(event.message)
        elif kind == "tool_execution_start":
            state.pending_tool_calls = state.pending_tool_calls | {event.tool_call_id}
        elif kind == "tool_execution_end":
            state.pending_tool_calls = state.pending_tool_calls - {event.tool_call_id}
        elif kind == "turn_end":
            message = event.message
            if getattr(message, "role", None) == "assistant" and getattr(message, "error_message", None):
                state.error_message = message.error_message
        elif kind == "agent_end":
            state.streaming_message = None
        if self._active is None:
            raise UsageError("Agent listener invoked outside active run")
        await self._listeners.dispatch(event, self._active.controller.signal)
