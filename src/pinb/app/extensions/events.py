"""Extension events: one model per event type Pi 1.6.0 dispatches to extension handlers.

Field names are Pi's in Python spelling; ``model_dump(by_alias=True)`` gives Pi's JSON. Messages are carried as the
session holds them (``pinb.ai`` message models), so they are typed ``Any`` here. Containers a Pi handler may edit in
place (``ToolCallEvent.input``, ``ContextEvent.messages``) are plain ``dict``/``list`` inside a frozen model.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pinb.app.extensions._model import PiModel
from pinb.app.extensions.results import SessionBoundaryDraft

ExtensionMode = Literal["print", "json", "rpc", "tui"]
AgentActivityOutcome = Literal["completed", "aborted", "error"]
InputSource = Literal["interactive", "rpc", "extension"]
StreamingBehavior = Literal["steer", "followUp"]
UIPromptKind = Literal["select", "confirm", "input", "editor", "custom"]


# --- resources and session lifecycle -------------------------------------------------------------------------------


class ProjectTrustEvent(PiModel):
    """Asked before project resources load; the first handler answering yes/no owns the decision."""

    type: Literal["project_trust"] = "project_trust"
    cwd: str


class ResourcesDiscoverEvent(PiModel):
    """Fired after ``session_start`` so extensions can add skill, prompt and theme paths."""

    type: Literal["resources_discover"] = "resources_discover"
    cwd: str
    reason: Literal["startup", "reload"]


class McpServersChangeEvent(PiModel):
    """An extension registered or unregistered an MCP server after binding."""

    type: Literal["mcp_servers_change"] = "mcp_servers_change"
    servers: tuple[Any, ...] = ()


class SessionStartEvent(PiModel):
    """A session was started, loaded or reloaded."""

    type: Literal["session_start"] = "session_start"
    reason: Literal["startup", "reload", "new", "resume", "fork"]
    #: Previously active session file ("new", "resume", "fork").
    previous_session_file: str | None = None


class SessionInfoChangedEvent(PiModel):
    """The session's metadata (its name) changed."""

    type: Literal["session_info_changed"] = "session_info_changed"
    name: str | None = None


class SessionBeforeSwitchEvent(PiModel):
    """Before switching to another session; a handler may cancel."""

    type: Literal["session_before_switch"] = "session_before_switch"
    reason: Literal["new", "resume"]
    target_session_file: str | None = None


class SessionBeforeForkEvent(PiModel):
    """Before forking a session; a handler may cancel."""

    type: Literal["session_before_fork"] = "session_before_fork"
    entry_id: str
    position: Literal["before", "at"]


class SessionBeforeCompactEvent(PiModel):
    """Before compaction; a handler may cancel it or supply its own summary."""

    type: Literal["session_before_compact"] = "session_before_compact"
    preparation: Any
    branch_entries: tuple[Any, ...] = ()
    custom_instructions: str | None = None
    #: What triggered it: manual ``/compact``, the context threshold, or overflow recovery.
    reason: Literal["manual", "threshold", "overflow"]
    #: True when the aborted turn is retried after this compaction (overflow recovery).
    will_retry: bool = False
    signal: Any = None


class SessionCompactEvent(PiModel):
    """After compaction succeeded."""

    type: Literal["session_compact"] = "session_compact"
    compaction_entry: Any
    from_extension: bool
    reason: Literal["manual", "threshold", "overflow"]
    will_retry: bool = False


class SessionCompactFailedEvent(PiModel):
    """After compaction failed or was aborted."""

    type: Literal["session_compact_failed"] = "session_compact_failed"
    reason: Literal["manual", "threshold", "overflow"]
    error_message: str | None = None
    aborted: bool
    will_retry: bool = False
    from_extension: bool = False


class SessionShutdownEvent(PiModel):
    """Before an extension runtime is torn down (quit, reload, session replacement)."""

    type: Literal["session_shutdown"] = "session_shutdown"
    reason: Literal["quit", "reload", "new", "resume", "fork"]
    target_session_file: str | None = None


class SessionBeforeTreeEvent(PiModel):
    """Before navigating the session tree; a handler may cancel."""

    type: Literal["session_before_tree"] = "session_before_tree"
    preparation: Any
    signal: Any = None


class SessionTreeEvent(PiModel):
    """After navigating the session tree."""

    type: Literal["session_tree"] = "session_tree"
    new_leaf_id: str | None = None
    old_leaf_id: str | None = None
    summary_entry: Any = None
    from_extension: bool | None = None


# --- request assembly ------------------------------------------------------------------------------------------------


class ContextEvent(PiModel):
    """Before each provider request: the conversation without system messages (Pi restores those afterwards)."""

    type: Literal["context"] = "context"
    #: A ``list``, edited in place or replaced (``Any`` so pydantic keeps the caller's very list).
    messages: Any


class ContextWithSystemEvent(PiModel):
    """After every ``context`` handler: the full transcript, system messages included, sent as returned."""

    type: Literal["context_with_system"] = "context_with_system"
    #: A ``list``, edited in place or replaced (``Any`` so pydantic keeps the caller's very list).
    messages: Any


class BeforeProviderRequestEvent(PiModel):
    """Before a provider request is sent; a handler may replace the payload."""

    type: Literal["before_provider_request"] = "before_provider_request"
    payload: Any


class BeforeProviderHeadersEvent(PiModel):
    """Request headers, edited in place; the return value is ignored."""

    type: Literal["before_provider_headers"] = "before_provider_headers"
    headers: Any


class AfterProviderResponseEvent(PiModel):
    """A provider response arrived (before its stream is consumed)."""

    type: Literal["after_provider_response"] = "after_provider_response"
    status: int
    headers: dict[str, str]


class ProviderStreamEvent(PiModel):
    """A parsed provider stream event before Pi normalises it."""

    type: Literal["provider_stream_event"] = "provider_stream_event"
    provider: str
    api: str
    model: str
    data: Any


class CacheWarmingDecisionEvent(PiModel):
    """Pi is about to warm (or not warm) the prompt cache; a handler may override the action."""

    type: Literal["cache_warming_decision"] = "cache_warming_decision"
    action: Any = None
    details: Any = None


class BeforeAgentStartEvent(PiModel):
    """Before a run starts from a user prompt (``message_type`` "user") or an idle custom message ("custom")."""

    type: Literal["before_agent_start"] = "before_agent_start"
    message_type: Literal["user", "custom"]
    #: The user prompt text after expansion ("user" runs).
    prompt: str | None = None
    images: tuple[Any, ...] | None = None
    #: The custom message that starts the run ("custom" runs).
    message: Any = None
    #: The current system prompt, rendered from ``system_prompt_options`` and earlier handlers' overrides.
    system_prompt: str = ""
    #: Mutable prompt sections; later handlers observe earlier handlers' edits.
    system_prompt_options: Any = Field(default_factory=dict)


# --- the run ---------------------------------------------------------------------------------------------------------


class AgentStartEvent(PiModel):
    """A low-level agent run started."""

    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(PiModel):
    """A low-level agent run ended. Not the end of the work: settlement comes after."""

    type: Literal["agent_end"] = "agent_end"
    messages: tuple[Any, ...]


class BoundaryContextPreview(PiModel):
    """What the next request would see if the proposed entries were committed now."""

    context_entries: tuple[Any, ...] = ()
    context_messages: tuple[Any, ...] = ()
    llm_messages: tuple[Any, ...] = ()
    pending_messages: tuple[Any, ...] = ()
    #: Whether a continuation would have runnable model context.
    can_continue: bool = False


class TurnStartEvent(PiModel):
    """A turn (one assistant response plus its tool calls) started."""

    type: Literal["turn_start"] = "turn_start"
    turn_index: int
    timestamp: int = 0


class TurnEndEvent(PiModel):
    """Actionable boundary after a turn: handlers may propose entries and request one continuation."""

    type: Literal["turn_end"] = "turn_end"
    turn_index: int
    message: Any
    tool_results: tuple[Any, ...]
    message_entry_id: str
    tool_result_entry_ids: tuple[str, ...] = ()
    #: The entries proposed so far by earlier handlers.
    entries: tuple[SessionBoundaryDraft, ...] = ()
    #: The continuation proposed so far by earlier handlers.
    continue_: bool = Field(False, alias="continue")
    #: A ``BoundaryContextPreview`` of what the next request would see.
    context: Any = Field(default_factory=BoundaryContextPreview)
    outcome: AgentActivityOutcome = "completed"


class AgentBeforeSettleEvent(PiModel):
    """The last actionable boundary before settlement (extensions only; never a session event)."""

    type: Literal["agent_before_settle"] = "agent_before_settle"
    entries: tuple[SessionBoundaryDraft, ...] = ()
    continue_: bool = Field(False, alias="continue")
    #: A ``BoundaryContextPreview`` of what the next request would see.
    context: Any = Field(default_factory=BoundaryContextPreview)
    outcome: AgentActivityOutcome = "completed"


class AgentSettledEvent(PiModel):
    """Notification only: the run has fully settled and nothing more will happen on its own."""

    type: Literal["agent_settled"] = "agent_settled"
    aborted: bool


class UIPromptStartEvent(PiModel):
    """Pi started waiting on a blocking extension UI prompt."""

    type: Literal["ui_prompt_start"] = "ui_prompt_start"
    reason: Literal["ui_prompt"] = "ui_prompt"
    kind: UIPromptKind
    title: str | None = None


class UIPromptEndEvent(PiModel):
    """Pi stopped waiting on a blocking extension UI prompt."""

    type: Literal["ui_prompt_end"] = "ui_prompt_end"
    reason: Literal["ui_prompt"] = "ui_prompt"
    kind: UIPromptKind
    title: str | None = None


class MessageStartEvent(PiModel):
    """A message (user, assistant, toolResult, custom, system) started."""

    type: Literal["message_start"] = "message_start"
    message: Any


class MessageUpdateEvent(PiModel):
    """A streamed assistant message changed."""

    type: Literal["message_update"] = "message_update"
    message: Any
    assistant_message_event: Any = None


class MessageEndEvent(PiModel):
    """A message was finalised; a handler may replace it with one of the same role."""

    type: Literal["message_end"] = "message_end"
    message: Any


class ToolExecutionStartEvent(PiModel):
    """A tool call started executing (before ``tool_call`` handlers run, as in Pi)."""

    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: Any
    parent_tool_call_id: str | None = None


class ToolExecutionUpdateEvent(PiModel):
    """A tool reported progress."""

    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: Any = None
    parent_tool_call_id: str | None = None


class ToolExecutionEndEvent(PiModel):
    """A tool call finished (or was blocked)."""

    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: Any
    is_error: bool
    duration_ms: float | None = None
    parent_tool_call_id: str | None = None


class ModelSelectEvent(PiModel):
    """A new model was selected."""

    type: Literal["model_select"] = "model_select"
    model: Any
    previous_model: Any = None
    source: Literal["set", "cycle", "restore"]


class ThinkingLevelSelectEvent(PiModel):
    """A new thinking level was selected."""

    type: Literal["thinking_level_select"] = "thinking_level_select"
    level: str
    previous_level: str


class UserBashEvent(PiModel):
    """The user ran ``!command`` (``!!`` excludes it from model context); a handler may run it instead."""

    type: Literal["user_bash"] = "user_bash"
    command: str
    exclude_from_context: bool
    cwd: str


class InputEvent(PiModel):
    """User input arrived, before skill/template expansion; handlers continue, transform or handle it."""

    type: Literal["input"] = "input"
    text: str
    images: tuple[Any, ...] | None = None
    source: InputSource
    #: How the input will be delivered while streaming; absent when idle.
    streaming_behavior: StreamingBehavior | None = None


class ToolCallEvent(PiModel):
    """Before a tool executes. ``input`` is mutable: later handlers and the tool see in-place edits."""

    type: Literal["tool_call"] = "tool_call"
    tool_name: str
    tool_call_id: str
    #: The arguments ``dict`` itself (``Any`` so pydantic keeps the object): in-place edits reach the tool.
    input: Any
    parent_tool_call_id: str | None = None


class ToolResultEvent(PiModel):
    """After a tool executed; handlers patch fields, and later handlers see earlier patches."""

    type: Literal["tool_result"] = "tool_result"
    tool_name: str
    tool_call_id: str
    #: The arguments ``dict`` itself (``Any`` so pydantic keeps the object): in-place edits reach the tool.
    input: Any
    content: tuple[Any, ...]
    details: Any = None
    structured_content: Any = None
    is_error: bool
    usage: Any = None
    parent_tool_call_id: str | None = None


ExtensionEvent = (
    ProjectTrustEvent
    | ResourcesDiscoverEvent
    | McpServersChangeEvent
    | SessionStartEvent
    | SessionInfoChangedEvent
    | SessionBeforeSwitchEvent
    | SessionBeforeForkEvent
    | SessionBeforeCompactEvent
    | SessionCompactEvent
    | SessionCompactFailedEvent
    | SessionShutdownEvent
    | SessionBeforeTreeEvent
    | SessionTreeEvent
    | ContextEvent
    | ContextWithSystemEvent
    | BeforeProviderRequestEvent
    | BeforeProviderHeadersEvent
    | AfterProviderResponseEvent
    | ProviderStreamEvent
    | CacheWarmingDecisionEvent
    | BeforeAgentStartEvent
    | AgentStartEvent
    | AgentEndEvent
    | AgentBeforeSettleEvent
    | AgentSettledEvent
    | UIPromptStartEvent
    | UIPromptEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | ModelSelectEvent
    | ThinkingLevelSelectEvent
    | UserBashEvent
    | InputEvent
    | ToolCallEvent
    | ToolResultEvent
)

#: Every event name ``ExtensionAPI.on`` accepts, mapped to its event model.
EVENT_MODELS: dict[str, type[PiModel]] = {
    model.model_fields["type"].default: model  # type: ignore[misc]
    for model in ExtensionEvent.__args__  # type: ignore[attr-defined]
}
