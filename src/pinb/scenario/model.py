"""Scenario models: the scenario format (docs/scenario-format.md); they generate its JSON Schema.

Field names on disk are the contract's (camelCase where Pi's JSON has it, snake_case elsewhere); Python attributes
are snake_case and validate only from the on-disk names, so a document the schema rejects is rejected here too.
Beyond the schema this module also enforces the contract's prose rules that JSON Schema cannot express: tool
names, extension names and handler labels are unique, and an ``unsubscribe`` target names an existing label.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from pinb.errors import ScenarioError
from pinb.files import SCENARIO_LIMIT, FileError, read_text

__all__ = [
    "UI",
    "Action",
    "Behavior",
    "Block",
    "Extension",
    "Handler",
    "Hooks",
    "Response",
    "Scenario",
    "Settings",
    "Tool",
    "Trigger",
    "load_scenario",
    "parse_scenario",
]

#: Scenario ids name trace files, so they are plain slugs (``fullmatch``: no trailing newline sneaks through).
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]*")
TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
WHEN_PATTERN = re.compile(r"([a-z_]+)#([1-9][0-9]*)|start")

HANDLER_EVENTS = (
    "project_trust", "resources_discover", "session_start", "session_info_changed", "session_before_switch",
    "session_before_fork", "session_before_compact", "session_compact", "session_compact_failed",
    "session_shutdown", "mcp_servers_change", "session_before_tree", "session_tree", "context",
    "context_with_system", "cache_warming_decision", "before_provider_request", "before_provider_headers",
    "after_provider_response", "provider_stream_event", "before_agent_start", "agent_start", "agent_end",
    "agent_before_settle", "agent_settled", "ui_prompt_start", "ui_prompt_end", "turn_start", "turn_end",
    "message_start", "message_update", "message_end", "tool_execution_start", "tool_execution_update",
    "tool_execution_end", "model_select", "thinking_level_select", "tool_call", "tool_result", "user_bash", "input",
)  # fmt: skip
HandlerEvent = Literal[
    "project_trust", "resources_discover", "session_start", "session_info_changed", "session_before_switch",
    "session_before_fork", "session_before_compact", "session_compact", "session_compact_failed",
    "session_shutdown", "mcp_servers_change", "session_before_tree", "session_tree", "context",
    "context_with_system", "cache_warming_decision", "before_provider_request", "before_provider_headers",
    "after_provider_response", "provider_stream_event", "before_agent_start", "agent_start", "agent_end",
    "agent_before_settle", "agent_settled", "ui_prompt_start", "ui_prompt_end", "turn_start", "turn_end",
    "message_start", "message_update", "message_end", "tool_execution_start", "tool_execution_update",
    "tool_execution_end", "model_select", "thinking_level_select", "tool_call", "tool_result", "user_bash", "input",
]  # fmt: skip


def _integral(value: Any) -> Any:
    # JSON Schema's "integer" accepts 2.0; strict pydantic would not.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Int = Annotated[int, BeforeValidator(_integral)]
JsonObject = dict[str, Any]


def _schema_extra(properties: dict[str, Any] | None = None, **rules: Any) -> Any:
    """A ``json_schema_extra`` that refines the generated schema: each of ``properties`` is merged into the property
    of that name, each of ``rules`` is set on the object's schema (the rules pydantic cannot derive, so that the
    committed JSON Schema rejects what the model's validators reject)."""

    def refine(schema: dict[str, Any]) -> None:
        for name, extra in (properties or {}).items():
            schema["properties"][name].update(extra)
        schema.update(rules)

    return refine


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    def to_json_dict(self) -> dict[str, Any]:
        """The on-disk JSON shape, defaults included."""
        return self.model_dump(mode="json", by_alias=True)


# --- tool behaviours ---------------------------------------------------------------------------------------------


class WordCountBehavior(_Model):
    """A word-count tool: counts ``args.text``'s whitespace-separated words."""

    kind: Literal["word_count"]


class ReturnBehavior(_Model):
    """A fixed result: one text block, ``details``, ``isError``."""

    kind: Literal["return"]
    text: str = ""
    details: Any = Field(default_factory=dict)
    is_error: bool = Field(default=False, alias="isError")
    terminate: bool | None = None
    """The result's ``terminate``: Pi ends the run after the batch when every result in it terminates."""


class ThrowBehavior(_Model):
    """``execute()`` throws ``Error(message)``."""

    kind: Literal["throw"]
    message: str


class SleepThen(_Model):
    """What a ``sleep`` tool returns after its wait (the fields of ``return``)."""

    text: str = ""
    details: Any = Field(default_factory=dict)
    is_error: bool = Field(default=False, alias="isError")
    terminate: bool | None = None


class SleepBehavior(_Model):
    """Reports ``updates``, waits ``ms``, returns ``then``; aborted meanwhile → throws ``"<name> aborted"``."""

    kind: Literal["sleep"]
    ms: Annotated[Int, Field(ge=0)]
    updates: tuple[str, ...] = ()
    then: SleepThen = Field(default_factory=SleepThen)


class SimulatedBashBehavior(_Model):
    """Records the command and answers like Pi 1.6.0's bash tool for ``stdout``/``exitCode``; runs nothing."""

    kind: Literal["simulated_bash"]
    stdout: str = ""
    exit_code: Int = Field(default=0, alias="exitCode")


Behavior = Annotated[
    WordCountBehavior | ReturnBehavior | ThrowBehavior | SleepBehavior | SimulatedBashBehavior,
    Field(discriminator="kind"),
]

DEFAULT_PARAMETERS: dict[str, JsonObject] = {
    "word_count": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "simulated_bash": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    },
}


class Tool(_Model):
    """One tool the model can call."""

    model_config = ConfigDict(json_schema_extra=_schema_extra({"name": {"pattern": "^[A-Za-z0-9_-]{1,64}$"}}))

    name: str
    description: str | None = None
    parameters: JsonObject | None = None
    execution_mode: Literal["sequential", "parallel"] | None = None
    behavior: Behavior
    prompt_snippet: str | None = None
    """Layer app: Pi's ``promptSnippet``, the tool's one-line entry in the default system prompt's tool list."""
    prompt_guidelines: tuple[str, ...] | None = None
    """Layer app: Pi's ``promptGuidelines``, bullets added to the default system prompt while the tool is active."""

    @model_validator(mode="after")
    def _name_pattern(self) -> Tool:
        if not TOOL_NAME_PATTERN.fullmatch(self.name):
            raise ValueError(f"tool name {self.name!r} must match ^[A-Za-z0-9_-]{{1,64}}$")
        return self

    def effective_parameters(self) -> JsonObject:
        """The declared schema, or the contract's default for this behaviour."""
        if self.parameters is not None:
            return self.parameters
        return DEFAULT_PARAMETERS.get(self.behavior.kind, {"type": "object", "properties": {}})

    def effective_description(self) -> str:
        return self.name if self.description is None else self.description


# --- responses -----------------------------------------------------------------------------------------------------


class TextBlock(_Model):
    type: Literal["text"]
    text: str


class ThinkingBlock(_Model):
    type: Literal["thinking"]
    thinking: str


class ToolCallBlock(_Model):
    type: Literal["toolCall"]
    id: Annotated[str, Field(min_length=1)] | None = None
    name: str
    arguments: JsonObject = Field(default_factory=dict)


Block = Annotated[TextBlock | ThinkingBlock | ToolCallBlock, Field(discriminator="type")]
StopReason = Literal["stop", "toolUse", "length", "error", "aborted"]


class Response(_Model):
    """One scripted assistant message."""

    content: tuple[Block, ...]
    stop_reason: StopReason = Field(default="stop", alias="stopReason")
    error_message: str | None = Field(default=None, alias="errorMessage")


# --- handler actions -------------------------------------------------------------------------------------------------


class RecordAction(_Model):
    kind: Literal["record"]


class BlockIfMatchAction(_Model):
    """A pattern guard on ``tool_call``: block (or ask to confirm) a call whose input matches a regex."""

    kind: Literal["block_if_match"]
    tool_names: Annotated[tuple[str, ...], Field(min_length=1)]
    patterns: Annotated[tuple[str, ...], Field(min_length=1)]
    match_on: Literal["json_input", "command"] = "json_input"
    reason_template: str = "Guard blocked: {pattern}"
    confirm_with_ui: bool = False
    confirm_title: str = "This command rewrites history or destroys work. Allow?"
    denied_reason: str = "Blocked by review-guard extension"


class ThrowAction(_Model):
    kind: Literal["throw"]
    message: str


class MutateInputAction(_Model):
    """``Object.assign(event.input, set)`` (``tool_call`` only)."""

    kind: Literal["mutate_input"]
    set: JsonObject


class _ResultPatch(_Model):
    """The fields a result patch may give (``text``, ``isError``, ``details``); at least one must be given."""

    model_config = ConfigDict(
        json_schema_extra=_schema_extra(
            anyOf=[{"required": ["text"]}, {"required": ["isError"]}, {"required": ["details"]}]
        )
    )

    kind: str
    text: str | None = None
    is_error: bool | None = Field(default=None, alias="isError")
    details: Any = None

    @model_validator(mode="after")
    def _something_to_patch(self) -> _ResultPatch:
        if not self.model_fields_set & {"text", "is_error", "details"}:
            raise ValueError(f"{self.kind} needs at least one of text, isError, details")
        return self

    def patch_fields(self) -> dict[str, Any]:
        """The fields given on disk (``details`` may be given as null), keyed by their JSON names."""
        names = {"text": "text", "is_error": "isError", "details": "details"}
        return {names[key]: getattr(self, key) for key in names if key in self.model_fields_set}


class ReplaceResultAction(_ResultPatch):
    """Returns a patch of the given fields (``tool_result`` only); ``{text}`` is the current result text."""

    kind: Literal["replace_result"]


class TransformInputAction(_Model):
    kind: Literal["transform_input"]
    text: str = "{text}"
    handled: bool = False
    """pinb's extension: return `{action: "handled"}` (the input is consumed, no run starts) instead of a transform."""


class InjectMessageAction(_Model):
    kind: Literal["inject_message"]
    custom_type: str = Field(alias="customType")
    content: str
    display: bool = True


class ReplaceMessageAction(_Model):
    kind: Literal["replace_message"]
    text: str
    role: Literal["assistant", "user"] = "assistant"
    as_role: Literal["assistant", "user"] | None = None
    """pinb's extension: the role the replacement claims (default: the message's own), to try a role change."""


class EntryDraft(_Model):
    """A ``custom_message`` entry a ``continue_once`` handler proposes."""

    type: Literal["custom_message"]
    custom_type: str = Field(alias="customType")
    content: str
    display: bool = False


class ContinueOnceAction(_Model):
    kind: Literal["continue_once"]
    at: Annotated[Int, Field(ge=1)] = 1
    entry: EntryDraft | None = None


class UnsubscribeAction(_Model):
    kind: Literal["unsubscribe"]
    target: str


class SleepAction(_Model):
    kind: Literal["sleep"]
    ms: Annotated[Int, Field(ge=0)]


# --- application-layer actions (pinb's extension of the contract; scenarios/README.md) ----------------------------


class ReturnValueAction(_Model):
    """Returns ``value`` as given (a JSON value), whatever the event declares as its result."""

    kind: Literal["return_value"]
    value: Any


class ContinueTimesAction(_Model):
    """On each of its first ``times`` invocations returns what ``continue_once`` returns; then nothing."""

    kind: Literal["continue_times"]
    times: Annotated[Int, Field(ge=1)]
    entry: EntryDraft | None = None


class TrustAction(_Model):
    """A ``project_trust`` answer: ``{trusted, remember?}``."""

    kind: Literal["trust"]
    trusted: Literal["yes", "no", "undecided"]
    remember: bool | None = None


class CancelCompactionAction(_Model):
    """Returns ``{cancel: true}`` (``session_before_compact``)."""

    kind: Literal["cancel_compaction"]


class SupplySummaryAction(_Model):
    """Returns ``{compaction: {summary, firstKeptEntryId, tokensBefore}}`` from the event's preparation."""

    kind: Literal["supply_summary"]
    summary: str


class AppendSystemPromptAction(_Model):
    """On its ``at``-th invocation returns ``{systemPrompt: event.systemPrompt + text}``; otherwise nothing."""

    kind: Literal["append_system_prompt"]
    text: str
    at: Annotated[Int, Field(ge=1)] = 1


class SetActiveToolsAction(_Model):
    """On its ``at``-th invocation calls ``pi.setActiveTools(tools)``; returns nothing."""

    kind: Literal["set_active_tools"]
    tools: tuple[str, ...]
    at: Annotated[Int, Field(ge=1)] = 1


ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]


class SetThinkingLevelAction(_Model):
    """On its ``at``-th invocation calls ``pi.setThinkingLevel(level)`` (Pi clamps it); returns nothing."""

    kind: Literal["set_thinking_level"]
    level: ThinkingLevel
    at: Annotated[Int, Field(ge=1)] = 1


class DropMessagesAction(_Model):
    """Returns ``{messages}``: the event's messages without those whose text is ``text``."""

    kind: Literal["drop_messages"]
    text: str


# --- extension API actions (docs/scenario-format.md "Extension API actions") --------------------------------------


class AppendEntryAction(_Model):
    """On its ``at``-th invocation calls ``pi.appendEntry(customType, data)``; returns nothing."""

    kind: Literal["append_entry"]
    custom_type: str = Field(alias="customType")
    data: Any = None
    at: Annotated[Int, Field(ge=1)] = 1


class SendMessageAction(_Model):
    """On its ``at``-th invocation calls ``pi.sendMessage({customType, content, display, details?},
    {triggerTurn?, deliverAs?})``; returns nothing."""

    kind: Literal["send_message"]
    custom_type: str = Field(alias="customType")
    content: str
    display: bool = True
    details: Any = None
    trigger_turn: bool | None = Field(default=None, alias="triggerTurn")
    deliver_as: Literal["steer", "followUp", "nextTurn"] | None = Field(default=None, alias="deliverAs")
    at: Annotated[Int, Field(ge=1)] = 1


class SendUserMessageAction(_Model):
    """On its ``at``-th invocation calls ``pi.sendUserMessage(text, {deliverAs?, expandPromptTemplates?})``;
    returns nothing."""

    kind: Literal["send_user_message"]
    text: str
    deliver_as: Literal["steer", "followUp"] | None = Field(default=None, alias="deliverAs")
    expand_prompt_templates: bool | None = Field(default=None, alias="expandPromptTemplates")
    at: Annotated[Int, Field(ge=1)] = 1


class SetModelAction(_Model):
    """On its ``at``-th invocation awaits ``pi.setModel(ctx.modelRegistry.find("faux", model))``: ``model`` is the
    id of ``model.id`` or of one of ``model.others``; returns nothing."""

    kind: Literal["set_model"]
    model: Annotated[str, Field(min_length=1)]
    at: Annotated[Int, Field(ge=1)] = 1


Action = Annotated[
    RecordAction
    | BlockIfMatchAction
    | ThrowAction
    | MutateInputAction
    | ReplaceResultAction
    | TransformInputAction
    | InjectMessageAction
    | ReplaceMessageAction
    | ContinueOnceAction
    | UnsubscribeAction
    | SleepAction
    | ReturnValueAction
    | ContinueTimesAction
    | TrustAction
    | CancelCompactionAction
    | SupplySummaryAction
    | AppendSystemPromptAction
    | SetActiveToolsAction
    | SetThinkingLevelAction
    | DropMessagesAction
    | AppendEntryAction
    | SendMessageAction
    | SendUserMessageAction
    | SetModelAction,
    Field(discriminator="kind"),
]

#: What an extension command (``extensions[].commands[]``) may do when invoked.
CommandAction = Annotated[
    RecordAction
    | ThrowAction
    | SetActiveToolsAction
    | SetThinkingLevelAction
    | AppendEntryAction
    | SendMessageAction
    | SendUserMessageAction
    | SetModelAction,
    Field(discriminator="kind"),
]

#: Actions that only make sense on some events (the schema's allOf rules).
ACTION_EVENTS: dict[str, tuple[str, ...]] = {
    "block_if_match": ("tool_call",),
    "mutate_input": ("tool_call",),
    "replace_result": ("tool_result",),
    "transform_input": ("input",),
    "inject_message": ("before_agent_start",),
    "replace_message": ("message_end",),
    "continue_once": ("turn_end", "agent_before_settle", "agent_settled"),
    "continue_times": ("turn_end", "agent_before_settle"),
    "trust": ("project_trust",),
    "cancel_compaction": ("session_before_compact",),
    "supply_summary": ("session_before_compact",),
    "append_system_prompt": ("before_agent_start",),
    "drop_messages": ("context",),
}


def _action_event_rules(schema: dict[str, Any]) -> None:
    schema["allOf"] = [
        {
            "if": {"properties": {"action": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}}},
            "then": {"properties": {"event": {"enum": list(events)}}},
        }
        for kind, events in ACTION_EVENTS.items()
    ]


class Handler(_Model):
    """One ``pi.on(event, …)`` registration."""

    model_config = ConfigDict(json_schema_extra=_action_event_rules)

    event: HandlerEvent
    label: Annotated[str, Field(min_length=1)] | None = None
    action: Action
    occurrences: Annotated[tuple[Annotated[Int, Field(ge=1)], ...], Field(min_length=1)] | None = None
    """pinb's extension: the action runs only on these invocations of the handler (1 = the first); on the others
    the handler returns nothing (its ``ext`` line is still written)."""

    @model_validator(mode="after")
    def _action_fits_event(self) -> Handler:
        allowed = ACTION_EVENTS.get(self.action.kind)
        if allowed is not None and self.event not in allowed:
            raise ValueError(f"action {self.action.kind} applies only to {' or '.join(allowed)}, not {self.event}")
        if self.occurrences is not None and "at" in self.action.model_fields_set:
            raise ValueError("occurrences replaces the action's at: give one of them")
        return self


class Command(_Model):
    """``pi.registerCommand(name, {description, handler})``: a prompt ``/name args`` runs ``action`` (``{args}`` in
    its text is the arguments) instead of the model."""

    model_config = ConfigDict(json_schema_extra=_schema_extra({"name": {"pattern": "^[^\\s/]+$"}}))

    name: str
    description: str | None = None
    action: CommandAction

    @model_validator(mode="after")
    def _name(self) -> Command:
        if not re.fullmatch(r"[^\s/]+", self.name):
            raise ValueError(f"command name {self.name!r} must be one word without '/'")
        return self


class Extension(_Model):
    name: Annotated[str, Field(min_length=1)]
    handlers: tuple[Handler, ...]
    commands: tuple[Command, ...] = ()
    """pinb's extension: the commands the extension registers (after its handlers)."""
    source: str | None = None
    """Optional: the extension's own code, a module whose default export is the factory (as a book prints it).
    The pi backend runs this code (traced per registration, the n-th taking the n-th handler's label); the
    stand-in, which runs no TypeScript, runs `handlers`, its declarative port."""


class UI(_Model):
    has_ui: bool = False
    confirm: bool = False


class Trigger(_Model):
    """``when`` = ``"<event type>#<n>"``, or ``"start"`` (before the first prompt); ``steer``/``follow_up``/
    ``prompt`` need ``text``."""

    model_config = ConfigDict(
        json_schema_extra=_schema_extra(
            {"when": {"pattern": "^([a-z_]+#[1-9][0-9]*|start)$"}},
            allOf=[
                {
                    "if": {"properties": {"do": {"enum": ["steer", "follow_up", "prompt"]}}, "required": ["do"]},
                    "then": {"required": ["text"], "properties": {"text": {"type": "string"}}},
                },
                {
                    "if": {"properties": {"do": {"not": {"const": "prompt"}}}},
                    "then": {"not": {"required": ["streaming_behavior"]}},
                },
            ],
        )
    )

    when: str
    do: Literal["steer", "follow_up", "abort", "prompt"]
    text: str | None = None
    streaming_behavior: Literal["steer", "followUp"] | None = None
    """``do: prompt`` only: Pi's ``session.prompt(text, {streamingBehavior})`` (absent: none given)."""

    @model_validator(mode="after")
    def _check(self) -> Trigger:
        if not WHEN_PATTERN.fullmatch(self.when):
            raise ValueError(f"when {self.when!r} must look like '<event type>#<n>' (n from 1) or be 'start'")
        if self.do in ("steer", "follow_up", "prompt") and self.text is None:
            raise ValueError(f"a {self.do} trigger needs text")
        if self.streaming_behavior is not None and self.do != "prompt":
            raise ValueError("streaming_behavior applies only to a prompt trigger")
        return self

    @property
    def event_type(self) -> str:
        return self.when.split("#", 1)[0]

    @property
    def occurrence(self) -> int:
        return int(self.when.split("#", 1)[1]) if "#" in self.when else 1


class StreamSettings(_Model):
    token_size: Annotated[Int, Field(ge=1)] | None = None
    tokens_per_second: Annotated[float, Field(gt=0)] | None = None


class CompactionSpec(_Model):
    """pinb's extension (layer app): Pi's ``compaction`` settings; absent fields keep Pi's defaults."""

    enabled: bool | None = None
    reserve_tokens: Annotated[Int, Field(ge=0)] | None = None
    keep_recent_tokens: Annotated[Int, Field(ge=0)] | None = None


class RetrySpec(_Model):
    """pinb's extension (layer app): Pi's ``retry`` settings; absent fields keep Pi's defaults."""

    enabled: bool | None = None
    max_retries: Annotated[Int, Field(ge=0)] | None = None
    base_delay_ms: Annotated[Int, Field(ge=0)] | None = None


class Settings(_Model):
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    steering_mode: Literal["one-at-a-time", "all"] = "one-at-a-time"
    follow_up_mode: Literal["one-at-a-time", "all"] = "one-at-a-time"
    stream: StreamSettings | None = None
    compaction: CompactionSpec | None = None
    retry: RetrySpec | None = None


class OtherModel(_Model):
    """Another model of the faux provider: its id, whether it reasons, its limits (faux defaults otherwise)."""

    id: Annotated[str, Field(min_length=1)]
    reasoning: bool | None = None
    context_window: Annotated[Int, Field(ge=1)] | None = None
    max_tokens: Annotated[Int, Field(ge=1)] | None = None


class ModelSpec(_Model):
    """pinb's extension (layer app): the faux model (id, reasoning, limits: Pi's faux defaults are faux-1, no
    reasoning, 128000 and 16384 tokens) and the session's thinking level (Pi clamps it to what the model supports)."""

    context_window: Annotated[Int, Field(ge=1)] | None = None
    max_tokens: Annotated[Int, Field(ge=1)] | None = None
    id: Annotated[str, Field(min_length=1)] | None = None
    reasoning: bool | None = None
    thinking_level: ThinkingLevel | None = None
    others: tuple[OtherModel, ...] = ()
    """The other models the faux provider serves (a ``set_model`` step or action switches to one)."""

    @property
    def served_ids(self) -> tuple[str, ...]:
        """The ids of every model the faux provider serves, the session's first."""
        return (self.id or "faux-1", *(other.id for other in self.others))


# --- agent-core hooks (pinb's extension of the contract; scenarios/README.md) ------------------------------------


class HookRecord(_Model):
    """The hook is set and returns nothing."""

    kind: Literal["record"]


class HookThrow(_Model):
    """The hook throws ``Error(message)`` on its ``at``-th invocation (default the first); otherwise returns nothing."""

    kind: Literal["throw"]
    message: str
    at: Annotated[Int, Field(ge=1)] = 1


class MutateArgs(_Model):
    """``Object.assign(context.args, set)``: the validated arguments the tool will receive; returns nothing."""

    kind: Literal["mutate_args"]
    set: JsonObject


class BlockCall(_Model):
    """Returns ``{block: true, reason}`` (``reason`` absent: Pi's own "Tool execution was blocked")."""

    kind: Literal["block"]
    reason: str | None = None


class PatchResult(_ResultPatch):
    """Returns the fields given: ``content: [{type: text, text}]`` (``{text}`` = the executed result's text),
    ``isError``, ``details``."""

    kind: Literal["patch"]


PrepareRequestHook = Annotated[HookRecord | HookThrow, Field(discriminator="kind")]
BeforeToolCallHook = Annotated[HookRecord | HookThrow | MutateArgs | BlockCall, Field(discriminator="kind")]
AfterToolCallHook = Annotated[HookRecord | HookThrow | PatchResult, Field(discriminator="kind")]


class Hooks(_Model):
    """Layer agent only: the ``Agent``'s ``prepareRequest``, ``beforeToolCall`` and ``afterToolCall`` options."""

    prepare_request: PrepareRequestHook | None = None
    before_tool_call: BeforeToolCallHook | None = None
    after_tool_call: AfterToolCallHook | None = None


# --- the application layer (pinb's extension of the contract; scenarios/README.md) --------------------------------

_PROJECT_PATH = re.compile(r"[^/\\\x00]+(/[^/\\\x00]+)*")


def _relative_path(path: str, what: str) -> str:
    if not _PROJECT_PATH.fullmatch(path) or any(part in (".", "..") for part in path.split("/")):
        raise ValueError(f"{what} {path!r} must be a relative path inside the project ('/'-separated, no '..')")
    return path


_PATH_SCHEMA = {"pattern": "^[^/\\\\\\u0000]+(/[^/\\\\\\u0000]+)*$", "not": {"pattern": "(^|/)\\.\\.?(/|$)"}}


class Project(_Model):
    """A project folder the runner lays out in a fresh temporary directory: on layer app the session's project, on
    layer agent only the run's working directory."""

    model_config = ConfigDict(
        json_schema_extra=_schema_extra(
            {
                "files": {"propertyNames": _PATH_SCHEMA},
                "agent_files": {"propertyNames": _PATH_SCHEMA},
                "cwd": {"anyOf": [{"type": "string", **_PATH_SCHEMA}, {"type": "null"}]},
            }
        )
    )

    files: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    trust: Literal["trusted", "untrusted", "ask"] = "trusted"
    agent_files: dict[str, str] = Field(default_factory=dict)
    """Layer app: files laid out in the user's agent directory (``<home>/.pi/agent``): a global ``AGENTS.md``,
    ``SYSTEM.md``, ``APPEND_SYSTEM.md``, ``skills/<name>/SKILL.md``, ``prompts/<name>.md``."""

    @model_validator(mode="after")
    def _paths(self) -> Project:
        for path in self.agent_files:
            _relative_path(path, "agent file")
        for path in self.files:
            _relative_path(path, "project file")
        if self.cwd is not None:
            _relative_path(self.cwd, "project cwd")
        return self


class EntryTarget(_Model):
    """The first message entry (in append order) with this role and text."""

    role: Literal["user", "assistant"]
    text: str


EntryType = Literal[
    "message", "thinking_level_change", "model_change", "usage", "compaction", "branch_summary", "custom", "label",
    "session_info", "custom_message", "context_edit",
]  # fmt: skip


class EntryOfType(_Model):
    """The ``nth`` entry (in append order, from 1) of this type: a target that need not be a message entry."""

    type: EntryType
    nth: Annotated[Int, Field(ge=1)] = 1


#: What a step may target: a message entry by role and text, or any entry by type and position.
Target = EntryTarget | EntryOfType


class PromptStep(_Model):
    do: Literal["prompt"]
    text: str


class BranchStep(_Model):
    """``sessionManager.branch(id)``: the target becomes the leaf."""

    do: Literal["branch"]
    target: Target


class NavigateStep(_Model):
    """``session.navigateTree(id, {summarize, customInstructions, replaceInstructions, label})``; with ``summarize``
    Pi asks the session's model for a summary of the branch left behind (the next scripted response answers)."""

    do: Literal["navigate"]
    target: Target
    summarize: bool | None = None
    instructions: str | None = None
    """Pi's ``customInstructions`` for the branch summary."""
    replace_instructions: bool | None = None
    label: str | None = None


class LabelStep(_Model):
    """``sessionManager.appendLabelChange(id, label)``."""

    do: Literal["label"]
    target: Target
    label: str


class CompactStep(_Model):
    """``session.compact(instructions)``."""

    do: Literal["compact"]
    instructions: str | None = None


class SetThinkingLevelStep(_Model):
    """``session.setThinkingLevel(level)`` between prompts (Pi clamps it to what the model supports)."""

    do: Literal["set_thinking_level"]
    level: ThinkingLevel


class ReloadStep(_Model):
    """``session.reload()``: ``session_shutdown`` (reload) to the old extensions, the extension factories run
    again, ``session_start`` (reload)."""

    do: Literal["reload"]


class NewSessionStep(_Model):
    """``AgentSessionRuntime.newSession()``: the session is replaced by a new, empty one (its extensions loaded
    afresh, ``session_start`` reason ``new``)."""

    do: Literal["new_session"]


class ForkStep(_Model):
    """``AgentSessionRuntime.fork(id, {position})``: a new session holding the path up to the target (``before``,
    Pi's default: a user message, up to its parent, its text returned; ``at``: up to the target itself)."""

    do: Literal["fork"]
    target: Target
    position: Literal["before", "at"] | None = None


class ResumeStep(_Model):
    """``AgentSessionRuntime.switchSession(path)``: the session is replaced by the one in a session file the
    scenario lays out in its project (``project.files``), the run's working directory as its cwd."""

    model_config = ConfigDict(json_schema_extra=_schema_extra({"path": _PATH_SCHEMA}))

    do: Literal["resume"]
    path: str

    @model_validator(mode="after")
    def _inside(self) -> ResumeStep:
        _relative_path(self.path, "resume path")
        return self


class SetModelStep(_Model):
    """``session.setModel(model)`` between prompts: ``model`` is the id of ``model.id`` or one of ``model.others``."""

    do: Literal["set_model"]
    model: Annotated[str, Field(min_length=1)]


class CommandStep(_Model):
    """``session.prompt(text)`` with ``text`` = ``/name args``: an extension command (or Pi's answer to an unknown
    one)."""

    model_config = ConfigDict(json_schema_extra=_schema_extra({"text": {"pattern": "^/"}}))

    do: Literal["command"]
    text: str

    @model_validator(mode="after")
    def _slash(self) -> CommandStep:
        if not self.text.startswith("/"):
            raise ValueError("a command step's text starts with '/'")
        return self


class SnapshotStep(_Model):
    """Writes one ``tree`` line: every entry, the leaf and the active branch."""

    do: Literal["snapshot"]


class ShutdownStep(_Model):
    """What Pi's runtime does on exit: abort, then ``session_shutdown`` with reason ``quit``."""

    do: Literal["shutdown"]


Step = Annotated[
    PromptStep
    | BranchStep
    | NavigateStep
    | LabelStep
    | CompactStep
    | SetThinkingLevelStep
    | ReloadStep
    | NewSessionStep
    | ForkStep
    | ResumeStep
    | SetModelStep
    | CommandStep
    | SnapshotStep
    | ShutdownStep,
    Field(discriminator="do"),
]


class Observe(_Model):
    """Extra trace lines a scenario asks for (absent: none, so other traces are unchanged)."""

    requests: bool = False


# --- the scenario --------------------------------------------------------------------------------------------------


def _layer_rules() -> list[dict[str, Any]]:
    """The layer rules of ``Scenario._check`` as JSON Schema conditions (the committed schema states them too)."""

    def needs(layer: str, what: str, present: dict[str, Any]) -> dict[str, Any]:
        other = "agent" if layer == "app" else "app"
        return {
            "description": f"{what} need layer {layer}.",
            "if": {"properties": {"layer": {"const": other}}, "required": ["layer"]},
            "then": {"not": present},
        }

    return [
        needs("app", "extensions", {"properties": {"extensions": {"minItems": 1}}, "required": ["extensions"]}),
        needs("agent", "hooks", {"properties": {"hooks": {"type": "object"}}, "required": ["hooks"]}),
        needs(
            "app",
            "prompt triggers",
            {
                "properties": {"queue": {"contains": {"properties": {"do": {"const": "prompt"}}, "required": ["do"]}}},
                "required": ["queue"],
            },
        ),
        needs("app", "steps and model", {"anyOf": [{"required": ["steps"]}, {"required": ["model"]}]}),
        needs(
            "app",
            "settings.compaction and settings.retry",
            {
                "properties": {
                    "settings": {
                        "type": "object",
                        "anyOf": [
                            {"properties": {name: {"type": "object"}}, "required": [name]}
                            for name in ("compaction", "retry")
                        ],
                    }
                },
                "required": ["settings"],
            },
        ),
        *(
            needs(
                "app",
                f"project.{name}",
                {"properties": {"project": {"type": "object", "required": [name]}}, "required": ["project"]},
            )
            for name in ("trust", "agent_files")
        ),
    ]


class Scenario(_Model):
    """One declarative experiment that runs unchanged on the stand-in and on real Pi."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        protected_namespaces=(),
        json_schema_extra=_schema_extra({"id": {"pattern": "^[a-z0-9][a-z0-9._-]*$"}}, allOf=_layer_rules()),
    )

    id: str
    description: str | None = None
    layer: Literal["agent", "app"]
    system_prompt: str | None = None
    prompt: str | Annotated[tuple[str, ...], Field(min_length=1)]
    tools: tuple[Tool, ...] = ()
    responses: tuple[Response, ...]
    extensions: tuple[Extension, ...] = ()
    ui: UI | None = None
    queue: tuple[Trigger, ...] = ()
    settings: Settings | None = None
    hooks: Hooks | None = None
    model: ModelSpec | None = None
    project: Project | None = None
    steps: tuple[Step, ...] = ()
    observe: Observe | None = None

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        if not ID_PATTERN.fullmatch(self.id):
            raise ValueError(f"id {self.id!r} is not a plain slug (lowercase letters, digits, '.', '_', '-')")
        if self.layer == "agent" and self.extensions:
            raise ValueError("extensions need layer app")
        if self.layer != "app" and any(trigger.do == "prompt" for trigger in self.queue):
            raise ValueError("a prompt trigger needs layer app (session.prompt)")
        if self.layer != "agent" and self.hooks is not None:
            raise ValueError("hooks need layer agent")
        settings = self.settings
        if self.layer != "app" and settings is not None and (settings.compaction or settings.retry):
            raise ValueError("settings.compaction and settings.retry need layer app")
        if self.layer != "app":
            # An agent-layer scenario may lay out a project (the run's working directory) and observe its requests;
            # trust is an application-layer decision.
            app_only = ("steps", "model") if self.layer == "agent" else ("project", "steps", "model", "observe")
            for name in app_only:
                if name in self.model_fields_set:
                    raise ValueError(f"{name} needs layer app")
            if self.project is not None:
                for name in ("trust", "agent_files"):
                    if name in self.project.model_fields_set:
                        raise ValueError(f"project.{name} needs layer app")
        _check_session_replacements(self)
        shutdowns = [i for i, step in enumerate(self.steps) if isinstance(step, ShutdownStep)]
        if shutdowns and shutdowns[0] != len(self.steps) - 1:
            raise ValueError("a shutdown step must be the last step")
        _unique("tool name", [tool.name for tool in self.tools])
        _unique("extension name", [ext.name for ext in self.extensions])
        labels = [h.label for ext in self.extensions for h in ext.handlers if h.label is not None]
        _unique("handler label", labels)
        for ext in self.extensions:
            for handler in ext.handlers:
                if isinstance(handler.action, UnsubscribeAction) and handler.action.target not in labels:
                    raise ValueError(f"unsubscribe target {handler.action.target!r} labels no handler")
        _check_extension_api(self)
        return self

    @property
    def prompts(self) -> tuple[str, ...]:
        return (self.prompt,) if isinstance(self.prompt, str) else self.prompt

    @property
    def effective_settings(self) -> Settings:
        return self.settings if self.settings is not None else Settings()

    @property
    def effective_ui(self) -> UI:
        return self.ui if self.ui is not None else UI()


def _check_session_replacements(scenario: Scenario) -> None:
    """A resume step reads a session file of ``project.files``; Pi persists a resumed session, whose next
    replacement would get a file name made of the clock and a random id, so a resume is the last replacement."""
    resumed = False
    for step in scenario.steps:
        if resumed and isinstance(step, NewSessionStep | ForkStep | ResumeStep):
            raise ValueError(f"a {step.do} step cannot follow a resume step (Pi names the new session file randomly)")
        if isinstance(step, ResumeStep):
            if scenario.project is None or step.path not in scenario.project.files:
                raise ValueError(f"resume path {step.path!r} is not a file of project.files")
            resumed = True


def _check_extension_api(scenario: Scenario) -> None:
    """The rules of the extension API items: a model change names a served model, prompt lines need layer app."""
    served = scenario.model.served_ids if scenario.model is not None else ("faux-1",)
    _unique("model id", list(served))
    actions = [h.action for ext in scenario.extensions for h in ext.handlers]
    actions += [c.action for ext in scenario.extensions for c in ext.commands]
    wanted = [a.model for a in actions if isinstance(a, SetModelAction)]
    wanted += [step.model for step in scenario.steps if isinstance(step, SetModelStep)]
    for model_id in wanted:
        if model_id not in served:
            raise ValueError(f"set_model: model {model_id!r} is not served (model.id or model.others)")
    if scenario.layer != "app":
        for tool in scenario.tools:
            if tool.prompt_snippet is not None or tool.prompt_guidelines is not None:
                raise ValueError("tools' prompt_snippet and prompt_guidelines need layer app")


def _unique(what: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{what} {name!r} is used twice")
        seen.add(name)


def _describe(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = first["loc"]
    if loc and loc[0] == "prompt" and len(loc) <= 2:
        return "prompt: must be a string or a non-empty array of strings"
    where = ".".join(str(part) for part in loc)
    message = first["msg"].removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"


def parse_scenario(data: Any, *, source: str = "scenario") -> Scenario:
    """Validate a decoded JSON document; a failure is one ``ScenarioError`` line naming the first problem."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a JSON object, not {type(data).__name__}")
    try:
        # JSON mode: strict types as JSON Schema has them (arrays for tuples, no "1" for 1, no 1 for true).
        return Scenario.model_validate_json(json.dumps(data))
    except ValidationError as exc:
        described = _describe(exc)
        if "recursion limit exceeded" in described:  # pydantic's JSON parser has its own depth limit
            described = TOO_DEEP
        raise ScenarioError(f"{source}: {described}".replace("\n", " ")) from None
    except RecursionError:
        raise ScenarioError(f"{source}: {TOO_DEEP}") from None
    except ValueError as exc:  # an integer too long to print (Python's limit on int-to-text conversion)
        raise ScenarioError(f"{source}: {_value_error(exc)}") from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file."""
    path = Path(path)
    if not path.exists():
        raise ScenarioError(f"{path}: no such scenario file")
    try:
        text = read_text(path, limit=SCENARIO_LIMIT, what="scenario file")
    except FileError as exc:
        raise ScenarioError(str(exc)) from None
    return parse_scenario(decode_json(text, str(path)), source=str(path))


TOO_DEEP = "nested too deeply (arrays and objects inside each other hundreds of levels deep)"


def decode_json(text: str, source: str) -> Any:
    """``json.loads`` whose every failure is one ``ScenarioError`` line: bad syntax, an integer longer than Python
    converts (4300 digits), nesting deeper than the interpreter's recursion limit."""
    try:
        return json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{source}: not valid JSON: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: not usable JSON: {TOO_DEEP}") from None
    except ValueError as exc:
        raise ScenarioError(f"{source}: not usable JSON: {_value_error(exc)}") from None


def _not_json(name: str) -> Any:
    # Python's json module reads NaN and Infinity; JSON (and JSON.parse in the reference runner) does not.
    raise json.JSONDecodeError(f"{name} is not a JSON value", name, 0)


def _value_error(exc: ValueError) -> str:
    text = str(exc).replace("\n", " ")
    if "integer string conversion" in text:
        return f"an integer has more than {sys.get_int_max_str_digits()} digits"
    return text
