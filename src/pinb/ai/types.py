"""Message, content, usage and stream-event types, like pi-ai's ``types.ts``.

Every record is a frozen pydantic model with Python attribute names and Pi's camelCase JSON names as aliases:
``message.stop_reason`` in Python, ``"stopReason"`` in JSON. Serialise with ``to_json(value)`` (or
``model_dump(by_alias=True, exclude_none=True)``) to get the JSON Pi would write.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

#: The latest time `stamp_later_than_now` gave: `now_ms` never answers earlier than it.
_floor_ms = 0
_floor_lock = threading.Lock()


def now_ms() -> int:
    """Milliseconds since the epoch, like JavaScript's ``Date.now()`` (never before a stamp already given)."""
    now = time.time_ns() // 1_000_000
    floor = _floor_ms
    return now if now >= floor else floor


def stamp_later_than_now() -> int:
    """A time strictly later than every `now_ms` answered so far, which every later `now_ms` reaches: what a
    JavaScript program gets by waiting out the current millisecond of ``Date.now()``, without the wait: the clock
    runs ahead of the wall clock only while stamps come faster than one a millisecond, by as many as came."""
    global _floor_ms
    with _floor_lock:
        _floor_ms = max(time.time_ns() // 1_000_000, _floor_ms) + 1
        return _floor_ms


class PiRecord(BaseModel):
    """Base of every pinb.ai record: frozen, no unknown fields, camelCase aliases."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, alias_generator=to_camel)


PiRecordT = TypeVar("PiRecordT", bound=PiRecord)


# --- content blocks -------------------------------------------------------------------------------------------


class TextContent(PiRecord):
    """A block of text."""

    type: Literal["text"] = "text"
    text: str
    #: Provider signature of the text block (opaque); absent on faux output.
    text_signature: str | None = None


class ThinkingContent(PiRecord):
    """A block of model reasoning."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    #: Provider signature (opaque), or the encrypted payload when ``redacted``.
    thinking_signature: str | None = None
    #: True when safety filters redacted the thinking.
    redacted: bool | None = None


class ImageContent(PiRecord):
    """An image, base64 data plus MIME type (pinb never renders it; it is a placeholder)."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


class ToolCall(PiRecord):
    """The model's request to call a tool."""

    type: Literal["toolCall"] = "toolCall"
    #: Provider-assigned id; the tool result answers it with the same ``tool_call_id``.
    id: str
    #: Name of the tool to call.
    name: str
    #: JSON arguments as the model sent them (before validation and coercion).
    arguments: dict[str, Any]
    #: Provider signature (opaque).
    thought_signature: str | None = None
    #: Namespace of namespaced tools (OpenAI Responses); absent otherwise.
    namespace: str | None = None
    #: Set when the model's arguments text was not a JSON object; validation then fails with it.
    arguments_error: str | None = None


UserContent: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent: TypeAlias = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]

# --- usage ----------------------------------------------------------------------------------------------------


class UsageCost(PiRecord):
    """Cost of one response in dollars (the faux provider's are always zero)."""

    input: int | float = 0
    output: int | float = 0
    cache_read: int | float = 0
    cache_write: int | float = 0
    #: Best available total.
    total: int | float = 0


class Usage(PiRecord):
    """Token counts of one response."""

    #: Prompt tokens not read from or written to a cache.
    input: int = 0
    #: Output tokens (reasoning included).
    output: int = 0
    #: Prompt tokens read from the provider's cache.
    cache_read: int = 0
    #: Prompt tokens written to the provider's cache.
    cache_write: int = 0
    #: ``input + output + cache_read + cache_write``.
    total_tokens: int = 0
    cost: UsageCost = UsageCost()


EMPTY_USAGE = Usage()

#: Why a response ended. ``pending`` only on partial messages while streaming; ``deferred`` for deferred requests.
StopReason: TypeAlias = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]

# --- tools as the model sees them -------------------------------------------------------------------------------


class Tool(PiRecord):
    """A tool declaration: what the model is told about a tool (name, description, JSON Schema)."""

    name: str
    description: str = ""
    #: JSON Schema of the arguments.
    parameters: dict[str, Any]
    #: Provider-side constrained sampling config (opaque to pinb).
    constrained_sampling: Any = None


class ToolReference(PiRecord):
    """A tool named in ``tools_removed``."""

    name: str


# --- messages -------------------------------------------------------------------------------------------------


class SystemMessage(PiRecord):
    """System instructions and tool declarations at one point of the transcript.

    The leading system message is the system prompt; later ones add instructions (``content``), patch named
    ``sections`` and change the tool set (``tools_added`` / ``tools_removed``). Replaying them in order gives the
    current prompt and tools.
    """

    role: Literal["system"] = "system"
    #: Instruction text: the base prompt on the leading message, additional instructions later.
    content: str | tuple[TextContent, ...] = ""
    #: Named prompt sections; ``None`` removes one.
    sections: dict[str, str | None] | None = None
    #: Full definitions of tools that become available here.
    tools_added: tuple[Tool, ...] | None = None
    #: Tools that stop being available here.
    tools_removed: tuple[ToolReference, ...] | None = None
    timestamp: int = Field(default_factory=now_ms)


class UserMessage(PiRecord):
    """What the user (or a queue) said."""

    role: Literal["user"] = "user"
    content: str | tuple[UserContent, ...]
    timestamp: int = Field(default_factory=now_ms)


class AssistantMessage(PiRecord):
    """One model response (or, while streaming, the response so far with stop reason ``pending``)."""

    role: Literal["assistant"] = "assistant"
    content: tuple[AssistantContent, ...] = ()
    #: API that produced it (``faux`` for the faux provider).
    api: str = "faux"
    #: Provider id.
    provider: str = "faux"
    #: Model id.
    model: str = "faux-1"
    response_model: str | None = None
    response_id: str | None = None
    #: Pi thinking level the agent loop requested for this response.
    thinking_level: str | None = None
    usage: Usage = EMPTY_USAGE
    stop_reason: StopReason = "stop"
    #: Set when ``stop_reason`` is ``error`` or ``aborted``.
    error_message: str | None = None
    #: Unix time in ms when the request started.
    timestamp: int = Field(default_factory=now_ms)
    #: Milliseconds until the response ended (not set by pinb: volatile).
    duration_ms: int | None = None


class ToolResultMessage(PiRecord):
    """The result of one tool call, sent back to the model."""

    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: tuple[UserContent, ...] = ()
    #: Structured details for logs and UI; not sent to the model.
    details: Any = None
    #: Usage of the tool execution itself, if any.
    usage: Usage | None = None
    is_error: bool = False
    timestamp: int = Field(default_factory=now_ms)
    #: Milliseconds the tool's execution took (not set by pinb: volatile).
    duration_ms: int | None = None


class CustomMessage(PiRecord):
    """An application message (pi-coding-agent's ``custom`` role): shown in the UI, converted by the app."""

    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | tuple[UserContent, ...]
    #: Whether the UI shows it.
    display: bool = True
    details: Any = None
    timestamp: int = Field(default_factory=now_ms)


#: What a model accepts.
Message: TypeAlias = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")
]
#: Any transcript message pinb.ai knows: the model's four plus ``custom``.
AnyMessage: TypeAlias = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | CustomMessage, Field(discriminator="role")
]

#: The one shared adapter for messages (JSON in and out).
MESSAGE_ADAPTER: TypeAdapter[Any] = TypeAdapter(AnyMessage)
MESSAGES_ADAPTER: TypeAdapter[Any] = TypeAdapter(list[AnyMessage])


def parse_message(data: Any) -> Any:
    """Validate one message from JSON-like data (camelCase or snake_case keys)."""
    return MESSAGE_ADAPTER.validate_python(data)


def to_json(value: BaseModel) -> dict[str, Any]:
    """A record as Pi's JSON: camelCase keys, undefined fields left out."""
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


def replace_fields(record: PiRecordT, **update: Any) -> PiRecordT:
    """A copy of ``record`` with some fields replaced, without validation (for trusted values only).

    The hot-path twin of ``model_copy(update=...)``: the streaming loop copies the partial message on every delta.
    """
    cls = type(record)
    new = cls.__new__(cls)
    fields = dict(record.__dict__)
    fields.update(update)
    object.__setattr__(new, "__dict__", fields)
    object.__setattr__(new, "__pydantic_fields_set__", record.__pydantic_fields_set__ | update.keys())
    object.__setattr__(new, "__pydantic_extra__", None)
    object.__setattr__(new, "__pydantic_private__", None)
    return new


def message_text(message: Any) -> str | None:
    """The text blocks of ``message`` joined without a separator; ``None`` when it has no text content at all.

    A string ``content`` is returned as is. Thinking and tool calls are not text.
    """
    content = getattr(message, "content", None)
    if content is None:
        return None
    if isinstance(content, str):
        return content
    texts = [block.text for block in content if isinstance(block, TextContent)]
    return "".join(texts) if texts else None


def tool_calls_of(message: AssistantMessage) -> list[ToolCall]:
    """The tool-call blocks of an assistant message, in source order."""
    return [block for block in message.content if isinstance(block, ToolCall)]


# --- models -----------------------------------------------------------------------------------------------------


class ModelCost(PiRecord):
    """Dollars per million tokens."""

    input: int | float = 0
    output: int | float = 0
    cache_read: int | float = 0
    cache_write: int | float = 0


class Model(PiRecord):
    """A chat model as the catalog describes it."""

    id: str
    name: str
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    cost: ModelCost = ModelCost()
    context_window: int = 0
    max_tokens: int = 0


#: Pi's placeholder model of an Agent created without one.
DEFAULT_MODEL = Model(id="unknown", name="unknown", api="unknown", provider="unknown", input=())


@dataclass(frozen=True, slots=True)
class Context:
    """A provider request's input: the transcript; prompt and tool declarations ride in its system messages.

    ``messages`` is often a read-only ``MessageView`` over the agent's growing transcript (O(1) to build), so a
    long run does not copy its history on every request.
    """

    messages: Sequence[Any]


# --- streaming events -------------------------------------------------------------------------------------------


class StartEvent(PiRecord):
    """The response started; ``partial`` is empty with stop reason ``pending``."""

    type: Literal["start"] = "start"
    partial: AssistantMessage


class TextStartEvent(PiRecord):
    type: Literal["text_start"] = "text_start"
    content_index: int
    partial: AssistantMessage


class TextDeltaEvent(PiRecord):
    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class TextEndEvent(PiRecord):
    type: Literal["text_end"] = "text_end"
    content_index: int
    #: The block's whole text.
    content: str
    partial: AssistantMessage


class ThinkingStartEvent(PiRecord):
    type: Literal["thinking_start"] = "thinking_start"
    content_index: int
    partial: AssistantMessage


class ThinkingDeltaEvent(PiRecord):
    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class ThinkingEndEvent(PiRecord):
    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ToolcallStartEvent(PiRecord):
    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


class ToolcallDeltaEvent(PiRecord):
    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    #: A chunk of the arguments' JSON text.
    delta: str
    partial: AssistantMessage


class ToolcallEndEvent(PiRecord):
    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


class DoneEvent(PiRecord):
    """The response ended normally; ``message`` is final."""

    type: Literal["done"] = "done"
    reason: Literal["stop", "length", "toolUse", "deferred"]
    message: AssistantMessage


class ErrorEvent(PiRecord):
    """The response ended with an error or was aborted; ``error`` is the final message."""

    type: Literal["error"] = "error"
    reason: Literal["aborted", "error"]
    error: AssistantMessage


AssistantMessageEvent: TypeAlias = Annotated[
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolcallStartEvent
    | ToolcallDeltaEvent
    | ToolcallEndEvent
    | DoneEvent
    | ErrorEvent,
    Field(discriminator="type"),
]
