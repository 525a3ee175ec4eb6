"""Pi 1.6.0's compaction summaries (``core/compaction/compaction.ts``, ``utils.ts``): the requests Pi sends to the
session's own model to summarise what a compaction cuts off.

``summarize_compaction`` is Pi's ``compact()``: one request for the history (or the update of a previous summary),
and, when the cut splits a turn, a second one for the turn's prefix; the answers are merged and the file lists
appended. Each request is a standalone context (Pi's summarisation system prompt and one user message holding the
serialised conversation and the instructions), sent through the session's stream function, so a scripted (faux)
model answers it like any other request. A transient error is retried with Pi's retry settings
(``retryAssistantCall``); an error, a ``length`` stop or a tool call fails the compaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pinb.ai import AbortError, TextContent, UserMessage, sleep_or_abort
from pinb.ai.transcript import content_text, create_initial_system_message
from pinb.ai.types import Context
from pinb.app.js_compat import json_stringify
from pinb.app.session_compaction import CompactionPreparation, CompactionResult, compaction_result
from pinb.app.session_messages import convert_to_llm

__all__ = [
    "SUMMARIZATION_SYSTEM_PROMPT",
    "SummaryRetryCallbacks",
    "serialize_conversation",
    "summarize_compaction",
]

# Pi's prompts, verbatim.
SUMMARIZATION_SYSTEM_PROMPT: Final = (
    "You are a context summarization assistant. Your task is to read a conversation between a user and "
    "an AI assistant, then produce a structured summary following the exact format specified.\n"
    "\n"
    "Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output "
    "the structured summary."
)
SUMMARIZATION_PROMPT: Final = (
    "The messages above are a conversation to summarize. Create a structured context checkpoint summary "
    "that another LLM will use to continue the work.\n"
    "\n"
    "Use this EXACT format:\n"
    "\n"
    "## Goal\n"
    "[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]\n"
    "\n"
    "## Constraints & Preferences\n"
    "- [Any constraints, preferences, or requirements mentioned by user]\n"
    '- [Or "(none)" if none were mentioned]\n'
    "\n"
    "## Progress\n"
    "### Done\n"
    "- [x] [Completed tasks/changes]\n"
    "\n"
    "### In Progress\n"
    "- [ ] [Current work]\n"
    "\n"
    "### Blocked\n"
    "- [Issues preventing progress, if any]\n"
    "\n"
    "## Key Decisions\n"
    "- **[Decision]**: [Brief rationale]\n"
    "\n"
    "## Next Steps\n"
    "1. [Ordered list of what should happen next]\n"
    "\n"
    "## Critical Context\n"
    "- [Any data, examples, or references needed to continue]\n"
    '- [Or "(none)" if not applicable]\n'
    "\n"
    "Keep each section concise. Preserve exact file paths, function names, and error messages."
)
UPDATE_SUMMARIZATION_PROMPT: Final = (
    "The messages above are NEW conversation messages to incorporate into the existing summary provided "
    "in <previous-summary> tags.\n"
    "\n"
    "Update the existing structured summary with new information. RULES:\n"
    "- PRESERVE all existing information from the previous summary\n"
    "- ADD new progress, decisions, and context from the new messages\n"
    '- UPDATE the Progress section: move items from "In Progress" to "Done" when completed\n'
    '- UPDATE "Next Steps" based on what was accomplished\n'
    "- PRESERVE exact file paths, function names, and error messages\n"
    "- If something is no longer relevant, you may remove it\n"
    "\n"
    "Use this EXACT format:\n"
    "\n"
    "## Goal\n"
    "[Preserve existing goals, add new ones if the task expanded]\n"
    "\n"
    "## Constraints & Preferences\n"
    "- [Preserve existing, add new ones discovered]\n"
    "\n"
    "## Progress\n"
    "### Done\n"
    "- [x] [Include previously done items AND newly completed items]\n"
    "\n"
    "### In Progress\n"
    "- [ ] [Current work - update based on progress]\n"
    "\n"
    "### Blocked\n"
    "- [Current blockers - remove if resolved]\n"
    "\n"
    "## Key Decisions\n"
    "- **[Decision]**: [Brief rationale] (preserve all previous, add new)\n"
    "\n"
    "## Next Steps\n"
    "1. [Update based on current state]\n"
    "\n"
    "## Critical Context\n"
    "- [Preserve important context, add new if needed]\n"
    "\n"
    "Keep each section concise. Preserve exact file paths, function names, and error messages."
)
TURN_PREFIX_SUMMARIZATION_PROMPT: Final = (
    "The messages above are earlier context from an ongoing conversation. Later messages are stored "
    "separately and do not need to be reconstructed.\n"
    "\n"
    "Create a concise checkpoint of the user's request and the progress shown above. This checkpoint "
    "will be placed before the later messages so the conversation can continue with the necessary context.\n"
    "\n"
    "## Original Request\n"
    "[What did the user ask for?]\n"
    "\n"
    "## Progress So Far\n"
    "- [Key decisions and work completed in these messages]\n"
    "\n"
    "## Context Needed to Continue\n"
    "- [Information from these messages needed to understand the later work]\n"
    "\n"
    "Only summarize information explicitly present above. Do not infer or recreate later messages."
)
TOOL_RESULT_MAX_CHARS: Final = 2000


# --- the conversation as text ----------------------------------------------------------------------------------


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _slice_head(text: str, max_units: int) -> str:
    """Pi's ``sliceHead``: the first ``max_units`` UTF-16 code units, never half a surrogate pair."""
    units = _utf16(text)
    end = max(0, max_units)
    if 0 < end < len(units) // 2:
        high = int.from_bytes(units[2 * end - 2 : 2 * end], "little")
        low = int.from_bytes(units[2 * end : 2 * end + 2], "little")
        if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
            end -= 1
    return units[: 2 * end].decode("utf-16-le", "surrogatepass")


def _truncate_for_summary(text: str, max_chars: int) -> str:
    length = len(_utf16(text)) // 2
    if length <= max_chars:
        return text
    return f"{_slice_head(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def _arguments_text(arguments: Any) -> str:
    items = arguments.items() if isinstance(arguments, dict) else ()
    return ", ".join(f"{key}={json_stringify(value)}" for key, value in items)


def serialize_conversation(messages: Sequence[Any]) -> str:
    """Pi's ``serializeConversation`` of LLM messages: user text, assistant text and tool calls, tool results
    (truncated to 2000 characters); thinking is left out."""
    parts: list[str] = []
    for message in messages:
        role = getattr(message, "role", None)
        if role == "user":
            text = content_text(message.content, "")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            calls = [
                f"{block.name}({_arguments_text(block.arguments)})"
                for block in message.content
                if getattr(block, "type", None) == "toolCall"
            ]
            if any(getattr(block, "type", None) == "text" for block in message.content):
                parts.append(f"[Assistant]: {content_text(message.content)}")
            if calls:
                parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif role == "toolResult":
            text = content_text(message.content, "")
            if text:
                parts.append(f"[Tool result]: {_truncate_for_summary(text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)


# --- the requests ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SummaryRetryCallbacks:
    """Pi's summarisation retry callbacks (``onRetryScheduled``, ``onRetryAttemptStart``, ``onRetryFinished``)."""

    scheduled: Callable[[int, int, int, str], None] | None = None
    attempt_start: Callable[[], None] | None = None
    finished: Callable[[], None] | None = None


async def _complete(
    prompt_text: str, stream_fn: Any, model: Any, options: dict[str, Any], retry: Any, callbacks: SummaryRetryCallbacks
) -> Any:
    """Pi's ``completeSummarization``: one standalone request, retried like ``retryAssistantCall``."""
    from pinb.app.settlement import is_retryable_error, retry_delay_ms

    system = create_initial_system_message(SUMMARIZATION_SYSTEM_PROMPT, None)
    user = UserMessage(content=(TextContent(text=prompt_text),))
    context = Context(messages=[m for m in (system, user) if m is not None])
    request_options = {**options, "cache_retention": "none"}
    max_attempts = retry.max_retries if retry is not None and retry.enabled else 0
    attempt = 0
    retried = False
    signal = options.get("signal")
    while True:
        stream = stream_fn(model, context, request_options)
        if asyncio.iscoroutine(stream):
            stream = await stream
        response = await stream.result()
        if response.stop_reason != "error" or attempt >= max_attempts or not is_retryable_error(response):
            if retried and callbacks.finished is not None:
                callbacks.finished()
            return response
        attempt += 1
        retried = True
        delay = retry_delay_ms(retry, attempt)
        if callbacks.scheduled is not None:
            callbacks.scheduled(attempt, max_attempts, delay, response.error_message or "Unknown error")
        try:
            await sleep_or_abort(delay / 1000, signal)
        except AbortError:
            if callbacks.finished is not None:
                callbacks.finished()
            return response.model_copy(update={"stop_reason": "aborted", "error_message": None})
        if callbacks.attempt_start is not None:
            callbacks.attempt_start()


def _checked_text(response: Any, label: str) -> str:
    if response.stop_reason == "error":
        raise RuntimeError(f"{label} failed: {response.error_message or 'Unknown error'}")
    if response.stop_reason == "length":
        raise RuntimeError(f"{label} failed: generation hit the token cap and the summary is incomplete")
    if any(getattr(block, "type", None) == "toolCall" for block in response.content):
        raise RuntimeError(f"{label} attempted to call a tool")
    return content_text(response.content)


async def summarize_compaction(
    preparation: CompactionPreparation,
    *,
    stream_fn: Any,
    model: Any,
    options: dict[str, Any],
    retry: Any = None,
    callbacks: SummaryRetryCallbacks | None = None,
    custom_instructions: str | None = None,
) -> CompactionResult:
    """Pi's ``compact()``: ask the model for the summaries and merge them into a ``CompactionResult``."""
    callbacks = callbacks or SummaryRetryCallbacks()

    async def history() -> str:
        base = UPDATE_SUMMARIZATION_PROMPT if preparation.previous_summary else SUMMARIZATION_PROMPT
        if custom_instructions:
            base = f"{base}\n\nAdditional focus: {custom_instructions}"
        conversation = serialize_conversation(convert_to_llm(preparation.messages_to_summarize))
        text = f"<conversation>\n{conversation}\n</conversation>\n\n"
        if preparation.previous_summary:
            text += f"<previous-summary>\n{preparation.previous_summary}\n</previous-summary>\n\n"
        response = await _complete(text + base, stream_fn, model, options, retry, callbacks)
        return _checked_text(response, "Summarization")

    async def turn_prefix() -> str:
        conversation = serialize_conversation(convert_to_llm(preparation.turn_prefix_messages))
        text = f"# Conversation\n{conversation}\n\n# Instructions\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"
        if custom_instructions:
            text = f"{text}\n\nAdditional focus: {custom_instructions}"
        response = await _complete(text, stream_fn, model, options, retry, callbacks)
        return _checked_text(response, "Turn prefix summarization")

    if preparation.is_split_turn and preparation.turn_prefix_messages:
        history_text = preparation.previous_summary or "No prior history."
        if preparation.messages_to_summarize:
            history_text = await history()
        return compaction_result(preparation, history_text, await turn_prefix())
    return compaction_result(preparation, await history())
