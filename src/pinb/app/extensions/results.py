"""Declared handler results (one model per event that has one) and the entry drafts boundaries propose.

A handler may return one of these models, the equivalent Pi-shaped ``dict`` (camelCase or snake_case keys), or
``None``. A value that does not fit the event's declared result is treated as an error of that handler, under that
event's error rule (see ``runner.py``); it never passes silently.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from pinb.ai.types import AnyMessage, UserContent
from pinb.app.extensions._model import PiModel

# --- boundary drafts (turn_end / agent_before_settle) ---------------------------------------------------------------


class CustomEntryDraft(PiModel):
    """A ``custom`` entry (extension state, never sent to the model)."""

    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None


class CustomMessageEntryDraft(PiModel):
    """A ``custom_message`` entry (enters model context as a user-role message)."""

    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | tuple[UserContent, ...]
    display: bool
    details: Any = None


class ContextEditEntryDraft(PiModel):
    """A ``context_edit`` entry: replace (or, with ``None``, omit) an earlier entry's message in context."""

    type: Literal["context_edit"] = "context_edit"
    target_id: str
    replacement: Any


class CompactionEntryDraft(PiModel):
    """A ``compaction`` entry; ``first_kept_entry_id=None`` keeps no preceding entries."""

    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str | None
    details: Any = None
    usage: Any = None


SessionBoundaryDraft = Annotated[
    CustomEntryDraft | CustomMessageEntryDraft | ContextEditEntryDraft | CompactionEntryDraft,
    Field(discriminator="type"),
]


# --- results ---


class ProjectTrustEventResult(PiModel):
    """``yes``/``no`` decides (the first handler to decide owns it); ``undecided`` falls through."""

    trusted: Literal["yes", "no", "undecided"]
    remember: bool | None = None


class ResourcesDiscoverResult(PiModel):
    """Extra resource paths; they accumulate over handlers."""

    skill_paths: tuple[str, ...] | None = None
    prompt_paths: tuple[str, ...] | None = None
    theme_paths: tuple[str, ...] | None = None


class InputContinue(PiModel):
    """Pass the input on unchanged."""

    action: Literal["continue"] = "continue"


class InputTransform(PiModel):
    """Replace the input text (and images); later handlers see the new text."""

    action: Literal["transform"] = "transform"
    text: str
    images: tuple[Any, ...] | None = None


class InputHandled(PiModel):
    """The handler took care of the input: no run starts, later handlers do not run."""

    action: Literal["handled"] = "handled"


InputEventResult = Annotated[InputContinue | InputTransform | InputHandled, Field(discriminator="action")]


class CustomMessageInput(PiModel):
    """The custom message a ``before_agent_start`` handler injects."""

    custom_type: str
    content: str | tuple[UserContent, ...] | None = None
    display: bool = False
    details: Any = None


class BeforeAgentStartEventResult(PiModel):
    """Inject a custom message into the run, and/or replace the whole system prompt for this run."""

    message: CustomMessageInput | None = None
    #: Replaces the complete system prompt of this run; later handlers observe the override.
    system_prompt: str | None = None


class ContextEventResult(PiModel):
    """A replacement message list for the request (``context`` and ``context_with_system``)."""

    #: Messages as pinb.ai models (Pi-shaped dicts are validated into them).
    messages: list[AnyMessage | Any] | None = None


class ToolCallEventResult(PiModel):
    """``block=True`` denies the call; ``reason`` becomes the error result's text. To change arguments, mutate
    ``event.input`` in place instead."""

    block: bool | None = None
    reason: str | None = None
    #: Stop after this batch when every finalised result in it asks to.
    terminate: bool | None = None


class ToolResultEventResult(PiModel):
    """Field patches; omitted fields stay. Replacing ``content`` without ``structured_content`` drops the latter."""

    content: tuple[UserContent, ...] | None = None
    details: Any = None
    structured_content: Any = None
    is_error: bool | None = None
    usage: Any = None


class MessageEndEventResult(PiModel):
    """Replace the finalised message; the replacement must keep the original role."""

    message: Any = None


class BoundaryResult(PiModel):
    """``turn_end`` / ``agent_before_settle``: the full proposed entry list and whether to continue once."""

    entries: tuple[SessionBoundaryDraft, ...] | None = None
    continue_: bool | None = Field(None, alias="continue")


TurnEndEventResult = BoundaryResult
AgentBeforeSettleEventResult = BoundaryResult


class SessionBeforeSwitchResult(PiModel):
    """``cancel=True`` stops the switch (the first cancelling handler wins)."""

    cancel: bool | None = None


class SessionBeforeForkResult(PiModel):
    """``cancel=True`` stops the fork."""

    cancel: bool | None = None
    skip_conversation_restore: bool | None = None


class SessionBeforeCompactResult(PiModel):
    """``cancel=True`` stops compaction; ``compaction`` supplies the summary instead of the model."""

    cancel: bool | None = None
    compaction: Any = None


class SessionBeforeTreeResult(PiModel):
    """``cancel=True`` stops tree navigation; other fields customise the branch summary."""

    cancel: bool | None = None
    summary: Any = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


class BashResult(PiModel):
    """A full replacement for a ``!command`` the handler ran itself."""

    output: str
    exit_code: int | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None


class UserBashEventResult(PiModel):
    """Exactly one of ``operations`` (an object with an ``exec`` callable) or ``result``."""

    operations: Any = None
    result: BashResult | None = None


class CacheWarmingDecisionEventResult(PiModel):
    """Override the cache-warming action; the last override wins."""

    action: Any = None
