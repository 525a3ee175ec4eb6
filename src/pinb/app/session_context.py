"""The model's view of a session: Pi's ``buildSessionContext`` as a pure function of the entries and a leaf.

The path root → leaf is the active branch. If it holds compactions, the latest one contributes its system-message
snapshot and its summary, followed by the kept entries from ``firstKeptEntryId`` (system messages among them are
replaced by the snapshot) and every entry after the compaction; older summarised entries are left out of the
context (not out of the tree). Branch summaries and custom messages enter as their application messages; the
latest context edit of an entry replaces its content or omits it. The thinking level and model are the last ones
the path selected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pinb.ai.types import AssistantMessage, CustomMessage, SystemMessage, TextContent, ToolResultMessage, UserMessage
from pinb.app.session_file import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomMessageEntry,
    ModelChangeEntry,
    SessionMessageEntry,
    ThinkingLevelChangeEntry,
    parse_iso_ms,
)
from pinb.app.session_messages import BranchSummaryMessage, CompactionSummaryMessage

__all__ = [
    "LAST_ENTRY",
    "ModelRef",
    "ProjectedEntry",
    "SessionContext",
    "SessionProjection",
    "build_context_entries",
    "build_session_context",
    "build_session_projection",
    "session_entry_to_context_messages",
]


class _LastEntry:
    def __repr__(self) -> str:
        return "LAST_ENTRY"


#: Leaf argument meaning "the last entry of the file" (Pi's ``leafId`` left undefined).
LAST_ENTRY: Final = _LastEntry()


@dataclass(frozen=True)
class ModelRef:
    """The model a branch last selected."""

    provider: str
    model_id: str


@dataclass(frozen=True)
class SessionContext:
    """What ``build_session_context`` returns: messages for the agent, thinking level, model."""

    messages: tuple[Any, ...]
    thinking_level: str
    model: ModelRef | None


@dataclass(frozen=True)
class ProjectedEntry:
    """One entry of the context and the messages it contributes (empty for state-only entries and omissions)."""

    source_entry: Any
    messages: tuple[Any, ...]


@dataclass(frozen=True)
class SessionProjection:
    """The context with provenance: which entry contributed which messages."""

    entries: tuple[ProjectedEntry, ...]
    messages: tuple[Any, ...]
    thinking_level: str
    model: ModelRef | None


# --- pure projection --------------------------------------------------------------------------------------------


def _index(entries: Sequence[Any], by_id: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return by_id if by_id is not None else {entry.id: entry for entry in entries}


def _session_path(entries: Sequence[Any], leaf_id: object, by_id: Mapping[str, Any] | None) -> list[Any]:
    index = _index(entries, by_id)
    if leaf_id is None:
        return []
    leaf = index.get(leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:  # Pi falls back to the last entry for an undefined or unknown leaf
        leaf = entries[-1] if entries else None
    path = []
    current = leaf
    while current is not None:
        path.append(current)
        current = index.get(current.parent_id) if current.parent_id else None
    path.reverse()
    return path


def _settings(path: Sequence[Any]) -> tuple[str, ModelRef | None]:
    thinking_level = "off"
    model: ModelRef | None = None
    for entry in path:
        if isinstance(entry, ThinkingLevelChangeEntry):
            thinking_level = entry.thinking_level
        elif isinstance(entry, ModelChangeEntry):
            model = ModelRef(entry.provider, entry.model_id)
        elif isinstance(entry, SessionMessageEntry) and isinstance(entry.message, AssistantMessage):
            model = ModelRef(entry.message.provider, entry.message.model)
    return thinking_level, model


def session_entry_to_context_messages(entry: Any) -> list[Any]:
    """Pi's ``sessionEntryToContextMessages``: the messages one entry contributes (custom entries none)."""
    match entry:
        case SessionMessageEntry():
            return [entry.message]
        case CustomMessageEntry():
            return [
                CustomMessage(
                    custom_type=entry.custom_type,
                    content=entry.content,
                    display=entry.display,
                    details=entry.details,
                    timestamp=parse_iso_ms(entry.timestamp),
                )
            ]
        case BranchSummaryEntry() if entry.summary:
            return [
                BranchSummaryMessage(
                    summary=entry.summary, from_id=entry.from_id, timestamp=parse_iso_ms(entry.timestamp)
                )
            ]
        case CompactionEntry():
            summary = CompactionSummaryMessage(
                summary=entry.summary, tokens_before=entry.tokens_before, timestamp=parse_iso_ms(entry.timestamp)
            )
            return [entry.system_message, summary] if entry.system_message else [summary]
    return []


def build_context_entries(
    entries: Sequence[Any], leaf_id: object = LAST_ENTRY, by_id: Mapping[str, Any] | None = None
) -> list[Any]:
    """Pi's ``buildContextEntries``: the active branch, with the latest compaction hiding what it summarised."""
    path = _session_path(entries, leaf_id, by_id)
    compaction = None
    for entry in path:
        if isinstance(entry, CompactionEntry):
            compaction = entry
    if compaction is None:
        return path
    compaction_index = next(i for i, entry in enumerate(path) if entry.id == compaction.id)
    context = [compaction]
    found_first_kept = False
    for entry in path[:compaction_index]:
        if entry.id == compaction.first_kept_entry_id:
            found_first_kept = True
        # The compaction's snapshot replaces the system messages it kept.
        is_system = isinstance(entry, SessionMessageEntry) and isinstance(entry.message, SystemMessage)
        if found_first_kept and not is_system:
            context.append(entry)
    context.extend(path[compaction_index + 1 :])
    return context


def _project(entry: Any, edit: ContextEditEntry | None) -> list[Any]:
    messages = session_entry_to_context_messages(entry)
    if edit is None:
        return messages
    if edit.replacement is None:
        return []
    content = edit.replacement.content
    out = []
    for message in messages:
        if not isinstance(message, UserMessage | AssistantMessage | ToolResultMessage | CustomMessage):
            out.append(message)
            continue
        new_content: Any = content
        if isinstance(message, AssistantMessage | ToolResultMessage) and isinstance(content, str):
            new_content = (TextContent(text=content),)
        out.append(type(message).model_validate({**message.model_dump(), "content": new_content}))
    return out


def build_session_projection(
    entries: Sequence[Any], leaf_id: object = LAST_ENTRY, by_id: Mapping[str, Any] | None = None
) -> SessionProjection:
    """Pi's ``buildSessionProjection``: the compaction-aware context with each message's source entry."""
    path = _session_path(entries, leaf_id, by_id)
    thinking_level, model = _settings(path)
    context_entries = build_context_entries(entries, leaf_id, by_id)
    edits: dict[str, ContextEditEntry] = {}
    for entry in context_entries:
        if isinstance(entry, ContextEditEntry):
            edits[entry.target_id] = entry  # the latest edit of a target wins
    projected = tuple(
        ProjectedEntry(
            source_entry=entry,
            # An older compaction can sit inside the kept range; only the newest (at index 0) contributes.
            messages=()
            if isinstance(entry, CompactionEntry) and index > 0
            else tuple(_project(entry, edits.get(entry.id))),
        )
        for index, entry in enumerate(context_entries)
    )
    messages = tuple(message for item in projected for message in item.messages)
    return SessionProjection(entries=projected, messages=messages, thinking_level=thinking_level, model=model)


def build_session_context(
    entries: Sequence[Any], leaf_id: object = LAST_ENTRY, by_id: Mapping[str, Any] | None = None
) -> SessionContext:
    """Pi's ``buildSessionContext``: what the agent is given for the active branch ending at ``leaf_id``."""
    projection = build_session_projection(entries, leaf_id, by_id)
    return SessionContext(projection.messages, projection.thinking_level, projection.model)
