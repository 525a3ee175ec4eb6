"""Where Pi 1.6.0 cuts a session when it compacts (``core/compaction/compaction.ts``), without the model call.

``prepare_compaction(branch, settings)`` is Pi's ``prepareCompaction``: from the active branch it picks the first
entry to keep (walking back from the newest entry until about ``keep_recent_tokens`` estimated tokens are kept,
never cutting at a tool result), the messages to summarise, a split turn's prefix, the token count before, and
the files read and modified. Pi then asks a model for the summary; here the caller supplies it
(``compaction_result``), and ``SessionManager.append_compaction`` records it. Token counts are Pi's estimate
(characters / 4, in UTF-16 code units) or the last assistant usage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pinb.ai.jsjson import js_length
from pinb.ai.transcript import get_current_system_message
from pinb.ai.types import (
    AssistantMessage,
    CustomMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pinb.app.js_compat import json_stringify
from pinb.app.session_context import (
    ProjectedEntry,
    SessionProjection,
    build_session_projection,
    session_entry_to_context_messages,
)
from pinb.app.session_file import CompactionEntry, ContextEditEntry, SessionMessageEntry
from pinb.app.session_messages import BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage
from pinb.errors import UsageError

__all__ = [
    "DEFAULT_COMPACTION_SETTINGS",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "ContextTokenEstimate",
    "calculate_context_tokens",
    "compaction_result",
    "estimate_context_tokens",
    "estimate_projected_context_tokens",
    "estimate_tokens",
    "format_file_operations",
    "prepare_compaction",
    "should_compact",
]

_ESTIMATED_IMAGE_CHARS: Final = 4800


@dataclass(frozen=True)
class CompactionSettings:
    """Pi's compaction settings."""

    enabled: bool = True
    #: Tokens left free in the context window; compaction triggers when the context grows past the rest.
    reserve_tokens: int = 16384
    #: About how many recent tokens stay verbatim after the cut.
    keep_recent_tokens: int = 20000


DEFAULT_COMPACTION_SETTINGS: Final = CompactionSettings()


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content:
        if isinstance(block, TextContent) and block.text:
            chars += js_length(block.text)
        elif isinstance(block, ImageContent):
            chars += _ESTIMATED_IMAGE_CHARS
    return chars


def estimate_tokens(message: Any) -> int:
    """Pi's ``estimateTokens``: characters / 4, rounded up (a deliberate overestimate)."""
    match message:
        case SystemMessage():
            chars = _content_chars(message.content)
            chars += sum(js_length(text) for text in (message.sections or {}).values() if text)
            if message.tools_added:
                chars += js_length(json_stringify(list(message.tools_added)) or "")
        case UserMessage() | CustomMessage() | ToolResultMessage():
            chars = _content_chars(message.content)
        case AssistantMessage():
            chars = 0
            for block in message.content:
                if isinstance(block, TextContent):
                    chars += js_length(block.text)
                elif isinstance(block, ThinkingContent):
                    chars += js_length(block.thinking)
                elif isinstance(block, ToolCall):
                    chars += js_length(block.name) + js_length(json_stringify(block.arguments) or "")
        case BashExecutionMessage():
            chars = js_length(message.command) + js_length(message.output)
        case BranchSummaryMessage() | CompactionSummaryMessage():
            chars = js_length(message.summary)
        case _:
            return 0
    return math.ceil(chars / 4)


def calculate_context_tokens(usage: Usage) -> int:
    """Pi's ``calculateContextTokens``: ``totalTokens``, else the sum of its parts."""
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def _assistant_usage(message: Any) -> Usage | None:
    if (
        isinstance(message, AssistantMessage)
        and message.stop_reason not in ("aborted", "error")
        and calculate_context_tokens(message.usage) > 0
    ):
        return message.usage
    return None


@dataclass(frozen=True)
class ContextTokenEstimate:
    """An estimate of the context's size: last real usage plus estimated trailing messages."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def estimate_context_tokens(messages: Sequence[Any]) -> ContextTokenEstimate:
    """Pi's ``estimateContextTokens``."""
    for index in range(len(messages) - 1, -1, -1):
        usage = _assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
            return ContextTokenEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    estimated = sum(estimate_tokens(m) for m in messages)
    return ContextTokenEstimate(estimated, 0, estimated, None)


def estimate_projected_context_tokens(projection: SessionProjection, branch: Sequence[Any]) -> ContextTokenEstimate:
    """Pi's ``estimateProjectedContextTokens``: usage is not trusted across a later edit or compaction."""
    estimate = estimate_context_tokens(projection.messages)
    if estimate.last_usage_index is not None:
        index = 0
        usage_entry_id = None
        for entry in projection.entries:
            next_index = index + len(entry.messages)
            if estimate.last_usage_index < next_index:
                usage_entry_id = entry.source_entry.id
                break
            index = next_index
        usage_entry_index = next((i for i, e in enumerate(branch) if e.id == usage_entry_id), -1)
        invalidating = next(
            (i for i in range(len(branch) - 1, -1, -1) if isinstance(branch[i], ContextEditEntry | CompactionEntry)),
            -1,
        )
        if usage_entry_index > invalidating:
            return estimate
    system = get_current_system_message(projection.messages)
    tokens = estimate_tokens(system) if system else 0
    tokens += sum(estimate_tokens(m) for m in projection.messages if not isinstance(m, SystemMessage))
    return ContextTokenEstimate(tokens, 0, tokens, None)


def should_compact(
    context_tokens: int, context_window: int, settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS
) -> bool:
    """Pi's ``shouldCompact``: past the window minus the reserve."""
    return settings.enabled and context_tokens > context_window - settings.reserve_tokens


# --- the cut point ---------------------------------------------------------------------------------------------

_CUT_POINT_ROLES: Final = (
    UserMessage,
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
)
_TURN_START_ROLES: Final = (
    UserMessage,
    BashExecutionMessage,
    CustomMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
)


def _turn_start(entry: ProjectedEntry) -> bool:
    return not isinstance(entry.source_entry, CompactionEntry) and any(
        isinstance(m, _TURN_START_ROLES) for m in entry.messages
    )


@dataclass(frozen=True)
class _CutPoint:
    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool


def _find_cut_point(entries: Sequence[ProjectedEntry], start: int, end: int, keep_recent_tokens: int) -> _CutPoint:
    cut_points = [
        i
        for i in range(start, end)
        if not isinstance(entries[i].source_entry, CompactionEntry)
        and any(isinstance(m, _CUT_POINT_ROLES) for m in entries[i].messages)
    ]
    if not cut_points:
        return _CutPoint(start, -1, False)
    accumulated = 0
    exceeded = False
    cut = cut_points[0]
    for i in range(end - 1, start - 1, -1):
        tokens = sum(estimate_tokens(m) for m in entries[i].messages)
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep_recent_tokens:
            exceeded = True
            cut = next((c for c in cut_points if c >= i), cut_points[-1])
            break

    # A failed attempt omitted by context edits after the last visible input is skipped, as in Pi.
    def visible(entry: ProjectedEntry) -> bool:
        return not isinstance(entry.source_entry, ContextEditEntry) and bool(
            session_entry_to_context_messages(entry.source_entry)
        )

    def omitted(entry: ProjectedEntry) -> bool:
        return visible(entry) and not entry.messages

    suffix = entries[cut + 1 : end]
    omitted_ids = {e.source_entry.id for e in suffix if omitted(e)}
    external_replacement = any(
        isinstance(e.source_entry, ContextEditEntry)
        and e.source_entry.replacement is not None
        and e.source_entry.target_id not in omitted_ids
        for e in suffix
    )
    recovery_suffix = (
        exceeded
        and not external_replacement
        and any(
            isinstance(e.source_entry, SessionMessageEntry)
            and isinstance(e.source_entry.message, AssistantMessage)
            and omitted(e)
            for e in suffix
        )
        and all(not isinstance(e.source_entry, CompactionEntry) and (not visible(e) or omitted(e)) for e in suffix)
    )
    if recovery_suffix:
        cut += 1
    while cut > start:
        previous = entries[cut - 1]
        if isinstance(previous.source_entry, CompactionEntry) or previous.messages:
            break
        cut -= 1
    starts_turn = _turn_start(entries[cut]) if cut < len(entries) else False
    turn_start = -1
    if not starts_turn:
        turn_start = next((i for i in range(cut, start - 1, -1) if i < len(entries) and _turn_start(entries[i])), -1)
    return _CutPoint(cut, turn_start, not starts_turn and turn_start != -1)


# --- preparation and result ------------------------------------------------------------------------------------


@dataclass
class FileOperations:
    """Paths the summarised messages read, wrote and edited (from tool calls' ``path`` arguments)."""

    read: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)

    def add(self, tool_name: str, arguments: Any) -> None:
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if not isinstance(path, str) or not path:
            return
        target = {"read": self.read, "write": self.written, "edit": self.edited}.get(tool_name)
        if target is not None and path not in target:
            target.append(path)

    def add_message(self, message: Any) -> None:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolCall):
                    self.add(block.name, block.arguments)

    def file_lists(self) -> tuple[list[str], list[str]]:
        """Pi's ``computeFileLists``: (files only read, files modified), each sorted."""
        modified = set(self.edited) | set(self.written)
        return sorted(p for p in self.read if p not in modified), sorted(modified)


@dataclass(frozen=True)
class CompactionPreparation:
    """Pi's ``CompactionPreparation``."""

    first_kept_entry_id: str
    messages_to_summarize: tuple[Any, ...]
    turn_prefix_messages: tuple[Any, ...]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations
    settings: CompactionSettings


def prepare_compaction(
    branch: Sequence[Any], settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS
) -> CompactionPreparation | None:
    """Pi's ``prepareCompaction`` over the active branch's entries (``SessionManager.get_branch()``).

    None when there is nothing to compact (the branch ends in a compaction, or nothing lies before the cut).
    """
    if branch and isinstance(branch[-1], CompactionEntry):
        return None
    projection = build_session_projection(list(branch))
    entries = projection.entries
    previous_index = next(
        (i for i, e in enumerate(entries) if isinstance(e.source_entry, CompactionEntry) and e.messages), -1
    )
    previous_summary = None
    start = 0
    if previous_index >= 0:
        previous_summary = entries[previous_index].source_entry.summary
        start = previous_index + 1
    tokens_before = estimate_projected_context_tokens(projection, branch).tokens
    cut = _find_cut_point(entries, start, len(entries), settings.keep_recent_tokens)
    if cut.first_kept_entry_index >= len(entries):
        return None
    first_kept = entries[cut.first_kept_entry_index].source_entry

    def conversation(selected: Sequence[ProjectedEntry]) -> tuple[Any, ...]:
        return tuple(
            m
            for e in selected
            if not isinstance(e.source_entry, CompactionEntry)
            for m in e.messages
            if not isinstance(m, SystemMessage)
        )

    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = conversation(entries[start:history_end])
    prefix = conversation(entries[cut.turn_start_index : cut.first_kept_entry_index]) if cut.is_split_turn else ()
    if not to_summarize and not prefix:
        return None
    file_ops = FileOperations()
    if previous_index >= 0:
        previous = entries[previous_index].source_entry
        details = previous.details if isinstance(previous.details, dict) else None
        if not previous.from_hook and details:
            for path in details.get("readFiles") or []:
                file_ops.add("read", {"path": path})
            for path in details.get("modifiedFiles") or []:
                file_ops.add("edit", {"path": path})
    for message in (*to_summarize, *prefix):
        file_ops.add_message(message)
    return CompactionPreparation(
        first_kept_entry_id=first_kept.id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
        settings=settings,
    )


def format_file_operations(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    """Pi's ``formatFileOperations``: the file lists appended to a compaction summary."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


@dataclass(frozen=True)
class CompactionResult:
    """What Pi's ``compact()`` returns, ready for ``SessionManager.append_compaction``."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: dict[str, list[str]]
    usage: Usage | None = None


def compaction_result(
    preparation: CompactionPreparation,
    history_summary: str,
    turn_prefix_summary: str | None = None,
    usage: Usage | None = None,
) -> CompactionResult:
    """Pi's ``compact()`` with the model's answers given: summaries merged, file lists appended."""
    if preparation.is_split_turn and preparation.turn_prefix_messages:
        if turn_prefix_summary is None:
            raise UsageError("a split turn needs turn_prefix_summary (Pi summarises the turn prefix separately)")
        history = (
            history_summary
            if preparation.messages_to_summarize
            else (preparation.previous_summary or "No prior history.")
        )
        summary = f"{history}\n\n---\n\n**Turn Context (split turn):**\n\n{turn_prefix_summary}"
    else:
        summary = history_summary
    read_files, modified_files = preparation.file_ops.file_lists()
    summary += format_file_operations(read_files, modified_files)
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
        usage=usage,
    )
