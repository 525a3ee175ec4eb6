"""Types of the agent core, like pi-agent-core's ``types.ts``: tools, events, hook contexts and results.

Events are frozen pydantic models discriminated on ``type`` (Pi's type strings); Python attributes are snake_case
with Pi's camelCase JSON aliases. Hook contexts carry live runtime objects (the loop's context), so they are plain
frozen dataclasses; hook results may be returned as the dataclass or as a dict with Pi's keys (snake or camel case).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field

from pinb.ai.abort import AbortSignal
from pinb.ai.types import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    ImageContent,
    Model,
    PiRecord,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserContent,
)
from pinb.errors import ToolDefinitionError

#: Any transcript message: pinb.ai's ``Message`` roles, ``custom``, or an application's own message record.
AgentMessage: TypeAlias = Any

#: ``sequential``: prepare, execute and finalise each call before the next. ``parallel``: prepare in order, then
#: execute concurrently; ``tool_execution_end`` in completion order, tool-result messages in source order.
ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]
#: How many queued messages one drain point takes: the oldest only, or all of them.
QueueMode: TypeAlias = Literal["all", "one-at-a-time"]
ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]


async def resolve(value: Any) -> Any:
    """Await ``value`` if it is awaitable (hooks and tools may be sync or async)."""
    if value is None:
        return None
    if inspect.isawaitable(value):
        return await value
    return value


async def hook_result(returned: Any, kind: type) -> Any:
    """What a hook returned (awaited if needed) as ``kind``: ``None``, an instance, or a dict with Pi's keys."""
    value = await resolve(returned)
    if value is None or isinstance(value, kind):
        return value
    if isinstance(value, dict):
        fields = {"".join(f"_{c.lower()}" if c.isupper() else c for c in k): v for k, v in value.items()}
        return kind(**fields)
    raise TypeError(f"a hook returned {type(value).__name__}; expected {kind.__name__}, a dict of its fields or None")


# --- tools ------------------------------------------------------------------------------------------------------


class AgentToolResult(PiRecord):
    """What a tool returns (or reports as progress through ``on_update``)."""

    #: Text or image content returned to the model.
    content: tuple[UserContent, ...] = ()
    #: Structured details for logs and UI.
    details: Any = None
    #: Machine-readable result matching the tool's output schema; not sent to the model.
    structured_content: Any = None
    #: Usage of the tool execution itself, if any.
    usage: Usage | None = None
    #: Report a failure without raising: the model sees ``content`` as an error result.
    is_error: bool | None = None
    #: Ask to stop after this tool batch; honoured only when every result of the batch sets it.
    terminate: bool | None = None


def text_result(text: str, details: Any = None, *, is_error: bool | None = None) -> AgentToolResult:
    """A tool result with one text block."""
    return AgentToolResult(content=(TextContent(text=text),), details=details, is_error=is_error)


ToolUpdateCallback: TypeAlias = Callable[[AgentToolResult], Any]
#: ``execute(tool_call_id, params, signal, on_update)`` returning an ``AgentToolResult`` (or a dict of its fields),
#: sync or async. Raise to fail: the loop turns the exception's message into an error result.
ToolExecute: TypeAlias = Callable[[str, Any, AbortSignal | None, ToolUpdateCallback], Any]


@dataclass(frozen=True)
class AgentTool:
    """A tool the agent can execute and declare to the model."""

    #: Name the model calls it by.
    name: str
    #: JSON Schema of the arguments; the loop validates (and coerces) arguments against it before ``execute``.
    parameters: dict[str, Any]
    #: The implementation (see ``ToolExecute``).
    execute: ToolExecute
    #: Description for the model.
    description: str = ""
    #: Human-readable label for UIs (defaults to ``name``).
    label: str = ""
    #: ``sequential`` forces every batch containing this tool to run sequentially.
    execution_mode: ToolExecutionMode | None = None
    #: Optional shim applied to raw arguments before validation.
    prepare_arguments: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ToolDefinitionError("an AgentTool needs a non-empty `name` (the name the model calls it by)")
        if not isinstance(self.parameters, dict):
            raise ToolDefinitionError(
                f"tool {self.name!r} needs `parameters`, a JSON Schema dict such as "
                '{"type": "object", "properties": {}}'
            )
        if not callable(self.execute):
            raise ToolDefinitionError(f"tool {self.name!r} needs `execute`, a callable (tool_call_id, params, ...)")
        if self.execution_mode not in (None, "sequential", "parallel"):
            raise ToolDefinitionError(f"tool {self.name!r}: execution_mode must be 'sequential' or 'parallel'")
        if not self.label:
            object.__setattr__(self, "label", self.name)


class AgentContext:
    """The live context the loop works on: the transcript and the executable tools.

    Mutable on purpose (Pi's loop appends to ``messages`` as it goes); the loop works on its own copy of the
    agent's transcript.
    """

    __slots__ = ("messages", "tools")

    def __init__(self, messages: list[AgentMessage] | None = None, tools: Sequence[AgentTool] | None = None) -> None:
        #: Transcript visible to the model.
        self.messages: list[AgentMessage] = messages if messages is not None else []
        #: Tools available for execution in this run.
        self.tools: list[AgentTool] = list(tools) if tools is not None else []

    def __repr__(self) -> str:
        return f"AgentContext(messages=<{len(self.messages)}>, tools={[t.name for t in self.tools]})"


# --- hooks ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BeforeToolCallResult:
    """Returned by ``before_tool_call``: ``block=True`` prevents execution (an error result with ``reason``)."""

    block: bool = False
    #: Text of the error result (default "Tool execution was blocked").
    reason: str | None = None
    #: Stop after this batch (only if every result of the batch says so).
    terminate: bool | None = None


@dataclass(frozen=True)
class AfterToolCallResult:
    """Returned by ``after_tool_call``: each given field replaces the executed result's field (no deep merge)."""

    content: Sequence[TextContent | ImageContent] | None = None
    details: Any = None
    structured_content: Any = None
    is_error: bool | None = None
    usage: Usage | None = None
    terminate: bool | None = None


@dataclass(frozen=True)
class BeforeToolCallContext:
    """Passed to ``before_tool_call`` (after validation)."""

    #: The assistant message that requested the call.
    assistant_message: AssistantMessage
    #: The raw tool-call block.
    tool_call: ToolCall
    #: Validated (coerced) arguments. Mutating this dict changes what ``execute`` receives; it is not re-validated.
    args: Any
    #: The loop's current context.
    context: AgentContext


@dataclass(frozen=True)
class AfterToolCallContext:
    """Passed to ``after_tool_call`` before any override applies."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    #: The executed result.
    result: AgentToolResult
    #: Whether that result is treated as an error.
    is_error: bool
    context: AgentContext


@dataclass(frozen=True)
class AgentTurnContext:
    """Passed to ``finish_turn`` and ``prepare_next_turn``: the completed turn."""

    #: The assistant message that completed the turn.
    message: AssistantMessage
    #: Its tool-result messages.
    tool_results: list[ToolResultMessage]
    #: The context after the turn's messages were appended (live).
    context: AgentContext
    #: What this loop invocation would return if it stopped now (live).
    new_messages: list[AgentMessage]


PrepareNextTurnContext = AgentTurnContext


@dataclass(frozen=True)
class AgentTurnDecision:
    """Returned by ``finish_turn``: ``end`` stops the run; ``continue`` ensures one more provider request."""

    action: Literal["continue", "end"]


@dataclass(frozen=True)
class AgentLoopTurnUpdate:
    """Returned by ``prepare_next_turn``: replacement state for the next turn (``None`` fields keep the current)."""

    context: AgentContext | None = None
    #: Messages to append before the next request, with the usual message events.
    messages: Sequence[AgentMessage] | None = None
    model: Model | None = None
    thinking_level: ThinkingLevel | None = None


@dataclass(frozen=True)
class PrepareRequestContext:
    """Passed to ``prepare_request`` right before every provider request (pending messages already appended)."""

    context: AgentContext
    model: Model
    thinking_level: ThinkingLevel


@dataclass(frozen=True)
class AgentRequestUpdate:
    """Returned by ``prepare_request``: replacement state for this and later requests of the run."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: ThinkingLevel | None = None


BeforeToolCall: TypeAlias = Callable[[BeforeToolCallContext, AbortSignal | None], Any]
AfterToolCall: TypeAlias = Callable[[AfterToolCallContext, AbortSignal | None], Any]
FinishTurn: TypeAlias = Callable[[AgentTurnContext, AbortSignal | None], Any]
PrepareRequest: TypeAlias = Callable[[PrepareRequestContext, AbortSignal | None], Any]
PrepareNextTurn: TypeAlias = Callable[[AgentTurnContext], Any]
ConvertToLlm: TypeAlias = Callable[[Sequence[AgentMessage]], Any]
TransformContext: TypeAlias = Callable[[Sequence[AgentMessage], AbortSignal | None], Any]
GetQueued: TypeAlias = Callable[[], Any]
#: ``stream_fn(model, context, options)`` → an ``AssistantMessageEventStream`` (or an awaitable of one).
StreamFn: TypeAlias = Callable[[Model, Context, dict[str, Any]], Any]


@dataclass
class AgentLoopConfig:
    """Configuration of one loop run (Pi's ``AgentLoopConfig``)."""

    model: Model
    #: AgentMessage list → the messages the model understands (system, user, assistant, toolResult).
    convert_to_llm: ConvertToLlm
    transform_context: TransformContext | None = None
    #: ``None`` means thinking off.
    reasoning: ThinkingLevel | None = None
    tool_execution: ToolExecutionMode = "parallel"
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    finish_turn: FinishTurn | None = None
    prepare_request: PrepareRequest | None = None
    prepare_next_turn: PrepareNextTurn | None = None
    get_steering_messages: GetQueued | None = None
    get_follow_up_messages: GetQueued | None = None
    get_api_key: Callable[[str], Any] | None = None
    #: Extra stream options passed to the stream function (``session_id``, ``api_key``, ...).
    stream_options: dict[str, Any] = field(default_factory=dict)


# --- events -----------------------------------------------------------------------------------------------------


class AgentStartEvent(PiRecord):
    """A run started."""

    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(PiRecord):
    """A run ended; no further loop event follows. ``messages`` are the run's new messages."""

    type: Literal["agent_end"] = "agent_end"
    messages: tuple[Any, ...]


class TurnStartEvent(PiRecord):
    """A turn (one provider request plus the tool execution that follows) started."""

    type: Literal["turn_start"] = "turn_start"


class TurnEndEvent(PiRecord):
    """A turn ended: its assistant message and tool results."""

    type: Literal["turn_end"] = "turn_end"
    message: Any
    tool_results: tuple[ToolResultMessage, ...]


class MessageStartEvent(PiRecord):
    """A message entered the transcript (an assistant message: its streaming started)."""

    type: Literal["message_start"] = "message_start"
    message: Any


class MessageUpdateEvent(PiRecord):
    """The streaming assistant message changed."""

    type: Literal["message_update"] = "message_update"
    #: Snapshot of the message so far.
    message: Any
    #: The provider stream event behind the update.
    assistant_message_event: AssistantMessageEvent


class MessageEndEvent(PiRecord):
    """A message is complete."""

    type: Literal["message_end"] = "message_end"
    message: Any


class ToolExecutionStartEvent(PiRecord):
    """A tool call is about to be prepared (validated, hooked) and executed."""

    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    #: Raw arguments from the tool call.
    args: Any


class ToolExecutionUpdateEvent(PiRecord):
    """A tool reported progress."""

    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: Any


class ToolExecutionEndEvent(PiRecord):
    """A tool call finished (after ``after_tool_call``)."""

    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: Any
    is_error: bool
    #: Milliseconds ``execute`` took; absent when the tool did not run.
    duration_ms: int | None = None


AgentEvent: TypeAlias = Annotated[
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent,
    Field(discriminator="type"),
]

#: Receives every loop event, in order; awaited before the loop goes on.
AgentEventSink: TypeAlias = Callable[[Any], Awaitable[None] | None]
#: ``Agent.subscribe`` listener: ``(event, signal)``, sync or async.
AgentListener: TypeAlias = Callable[[Any, AbortSignal], Any]
