"""Pi 1.6.0's branch summaries (``core/compaction/branch-summarization.ts``): when ``navigate_tree`` is asked to
summarise, the branch being left is summarised by the session's own model.

``generate_branch_summary`` is Pi's ``generateBranchSummary``: the entries left behind (oldest first) become
messages (tool results, thinking-level, model, label and custom entries contribute none; a compaction or an
earlier branch summary contributes its summary), newest first until the token budget (the model's context window
minus ``branchSummary.reserveTokens``) is spent; they are serialised into one standalone request with Pi's prompt,
answered like any other request, and the answer is prefixed with Pi's preamble and followed by the file lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from pinb.app.compaction_summary import SummaryRetryCallbacks, _checked_text, _complete, serialize_conversation
from pinb.app.session_compaction import FileOperations, estimate_tokens, format_file_operations
from pinb.app.session_context import _project
from pinb.app.session_file import parse_iso_ms
from pinb.app.session_messages import BranchSummaryMessage, CompactionSummaryMessage, convert_to_llm

__all__ = ["BRANCH_SUMMARY_RESERVE_TOKENS", "BranchSummaryResult", "generate_branch_summary"]

#: Pi 1.6.0's default ``branchSummary.reserveTokens``.
BRANCH_SUMMARY_RESERVE_TOKENS: Final = 16384

# Pi's texts, verbatim.
BRANCH_SUMMARY_PREAMBLE: Final = (
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
)
BRANCH_SUMMARY_PROMPT: Final = (
    "Create a structured summary of this conversation branch for context when returning later.\n"
    "\n"
    "Use this EXACT format:\n"
    "\n"
    "## Goal\n"
    "[What was the user trying to accomplish in this branch?]\n"
    "\n"
    "## Constraints & Preferences\n"
    "- [Any constraints, preferences, or requirements mentioned]\n"
    '- [Or "(none)" if none were mentioned]\n'
    "\n"
    "## Progress\n"
    "### Done\n"
    "- [x] [Completed tasks/changes]\n"
    "\n"
    "### In Progress\n"
    "- [ ] [Work that was started but not finished]\n"
    "\n"
    "### Blocked\n"
    "- [Issues preventing progress, if any]\n"
    "\n"
    "## Key Decisions\n"
    "- **[Decision]**: [Brief rationale]\n"
    "\n"
    "## Next Steps\n"
    "1. [What should happen next to continue this work]\n"
    "\n"
    "Keep each section concise. Preserve exact file paths, function names, and error messages."
)


@dataclass(frozen=True)
class BranchSummaryResult:
    """What Pi's ``generateBranchSummary`` returns: a summary, or ``aborted``, or an ``error``."""

    summary: str | None = None
    read_files: tuple[str, ...] = ()
    modified_files: tuple[str, ...] = ()
    usage: Any = None
    aborted: bool = False
    error: str | None = None


def _message_of(entry: Any, edit: Any) -> Any:
    """Pi's ``getMessageFromEntry``: the message one entry contributes to the summary, or ``None``."""
    match entry.type:
        case "message":
            if getattr(entry.message, "role", None) == "toolResult":
                return None  # the context is in the assistant's tool call
            return (_project(entry, edit) or [None])[0]
        case "custom_message":
            return (_project(entry, edit) or [None])[0]
        case "branch_summary":
            return BranchSummaryMessage(
                summary=entry.summary, from_id=entry.from_id, timestamp=parse_iso_ms(entry.timestamp)
            )
        case "compaction":
            return CompactionSummaryMessage(
                summary=entry.summary, tokens_before=entry.tokens_before, timestamp=parse_iso_ms(entry.timestamp)
            )
    return None


def prepare_branch_entries(entries: Sequence[Any], token_budget: int = 0) -> tuple[list[Any], FileOperations]:
    """Pi's ``prepareBranchEntries``: the messages to summarise (newest first until the budget, a summary entry
    squeezed in below 90 % of it) and the files read and modified, earlier branch summaries' lists included."""
    file_ops = FileOperations()
    for entry in entries:
        # Only Pi's own summaries carry file lists to pass on (not those an extension supplied).
        if entry.type != "branch_summary" or entry.from_hook or not isinstance(entry.details, dict):
            continue
        for key, paths in (("readFiles", file_ops.read), ("modifiedFiles", file_ops.edited)):
            listed = entry.details.get(key)
            for path in listed if isinstance(listed, list) else ():
                if path not in paths:
                    paths.append(path)
    edits = {entry.target_id: entry for entry in entries if entry.type == "context_edit"}
    messages: list[Any] = []
    total = 0
    for entry in reversed(entries):
        message = _message_of(entry, edits.get(entry.id))
        if message is None:
            continue
        file_ops.add_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.type in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.insert(0, message)
                total += tokens
            break
        messages.insert(0, message)
        total += tokens
    return messages, file_ops


async def generate_branch_summary(
    entries: Sequence[Any],
    *,
    stream_fn: Any,
    model: Any,
    options: dict[str, Any],
    retry: Any = None,
    callbacks: SummaryRetryCallbacks | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool | None = None,
    reserve_tokens: int = BRANCH_SUMMARY_RESERVE_TOKENS,
) -> BranchSummaryResult:
    """Pi's ``generateBranchSummary`` over the entries of the branch being left (oldest first)."""
    budget = (getattr(model, "context_window", 0) or 128000) - reserve_tokens
    messages, file_ops = prepare_branch_entries(entries, budget)
    if not messages:
        return BranchSummaryResult(summary="No content to summarize")
    conversation = serialize_conversation(convert_to_llm(messages))
    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    elif custom_instructions:
        instructions = f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom_instructions}"
    else:
        instructions = BRANCH_SUMMARY_PROMPT
    prompt_text = f"<conversation>\n{conversation}\n</conversation>\n\n{instructions}"
    response = await _complete(prompt_text, stream_fn, model, options, retry, callbacks or SummaryRetryCallbacks())
    if response.stop_reason == "aborted":
        return BranchSummaryResult(aborted=True)
    try:
        text = _checked_text(response, "Branch summarization")
    except RuntimeError as error:
        return BranchSummaryResult(error=str(error))
    read_files, modified_files = file_ops.file_lists()
    return BranchSummaryResult(
        summary=BRANCH_SUMMARY_PREAMBLE + text + format_file_operations(read_files, modified_files),
        read_files=tuple(read_files),
        modified_files=tuple(modified_files),
        usage=response.usage,
    )
