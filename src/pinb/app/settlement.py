"""Settlement: the actionable boundaries (``turn_end``, ``agent_before_settle``) and what they may propose.

A boundary handler proposes session-entry drafts and a continuation. Before each handler runs, and after it, the
session builds a *preview*: a throwaway copy of the active branch with the drafts applied, projected to the context
the next request would see. A draft the session tree refuses (a ``context_edit`` of a missing entry, say) makes the
preview fail, which discards the whole proposal. A continuation needs runnable model context; without it Pi reports
``<boundary> requested continuation without runnable model context`` and makes no request.

Pi has no continuation cap, and neither does pinb; ``ContinuationRecord`` lets a notebook show a loop instead.

After a low-level run ends, a transient provider error is retried first (Pi's ``settings.retry``: the failed attempt
is omitted from context with a ``context_edit``, ``auto_retry_start``/``auto_retry_end`` tell listeners), then an
overflowing or truncated reply is recovered and a context past the threshold compacted (``pinb.app.recovery``), then
queued messages run, then ``agent_before_settle``; an aborted run skips all of it. ``SettlementMixin`` is that loop,
as part of ``pinb.app.session.AgentSession``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pinb.ai import CustomMessage, PiRecord, sleep_or_abort
from pinb.ai.abort import AbortController, AbortError
from pinb.app.extensions import events as ev
from pinb.app.extensions.context import ExtensionErrorRecord
from pinb.app.extensions.events import AgentActivityOutcome, BoundaryContextPreview
from pinb.app.extensions.results import (
    CompactionEntryDraft,
    ContextEditEntryDraft,
    CustomEntryDraft,
    CustomMessageEntryDraft,
)
from pinb.app.session_file import CURRENT_SESSION_VERSION, write_session_jsonl
from pinb.app.session_messages import convert_to_llm
from pinb.app.session_tree import SessionManager

Boundary = Literal["turn_end", "agent_before_settle"]


def invalid_continuation_error(boundary: str) -> str:
    """Pi's error text for a continuation without runnable model context."""
    return f"{boundary} requested continuation without runnable model context"


TURN_END_ENTRY_MISSING = "turn_end could not resolve the persisted assistant entry ID"


@dataclass(frozen=True)
class ContinuationRecord:
    """One continuation a boundary requested (or queued work caused) after a prompt, in order.

    A ``turn_end`` request that the turn's own tool results already satisfy adds no extra provider request (as in
    Pi); it is recorded all the same, because the handler asked.

    ``boundary``: which boundary asked (``turn_end`` continues the same low-level run; ``agent_before_settle`` and
    ``queued`` start a new one), or what Pi continued on its own after ``agent_end``: ``retry`` (a transient provider
    error) or ``recovery`` (an overflowing or truncated reply, compacted). ``settlement``: which settlement (one per
    prompt) it belongs to, counting from 1.
    ``turn_index``: the turn that ended (``turn_end`` only). ``entry_types``: the drafts committed with it.
    """

    boundary: Literal["turn_end", "agent_before_settle", "queued", "retry", "recovery"]
    settlement: int
    turn_index: int | None = None
    entry_types: tuple[str, ...] = ()


def outcome_of(message: Any) -> AgentActivityOutcome:
    """How the last activity ended, from its assistant message's stop reason."""
    stop_reason = getattr(message, "stop_reason", None)
    if stop_reason == "aborted":
        return "aborted"
    if stop_reason == "error":
        return "error"
    return "completed"


def estimate_tokens(messages: Sequence[Any]) -> int:
    """A rough token count (characters / 4) for a compaction draft's ``tokens_before``."""
    total = 0
    for message in messages:
        dumped = message.model_dump(mode="json") if hasattr(message, "model_dump") else message
        total += len(json.dumps(dumped, default=str)) // 4
    return total


def apply_boundary_drafts(manager: SessionManager, drafts: Sequence[Any]) -> list[Any]:
    """Append each draft to ``manager`` in order; returns the appended entries. Raises what the tree raises."""
    appended = []
    for draft in drafts:
        match draft:
            case CustomEntryDraft():
                entry_id = manager.append_custom_entry(draft.custom_type, draft.data)
            case CustomMessageEntryDraft():
                entry_id = manager.append_custom_message_entry(
                    draft.custom_type, draft.content, draft.display, draft.details
                )
            case ContextEditEntryDraft():
                entry_id = manager.append_context_edit(draft.target_id, draft.replacement)
            case CompactionEntryDraft():
                tokens_before = estimate_tokens(manager.build_session_projection().messages)
                entry_id = manager.append_compaction(
                    draft.summary, draft.first_kept_entry_id, tokens_before, draft.details, True, draft.usage
                )
            case _:
                raise ValueError(f"Unknown boundary draft: {draft!r}")
        entry = manager.get_entry(entry_id)
        if entry is not None:
            appended.append(entry)
    return appended


def preview_manager(manager: SessionManager, drafts: Sequence[Any]) -> SessionManager:
    """A throwaway session of ``manager``'s active branch with ``drafts`` applied. As Pi's
    ``_createBoundaryPreviewManager`` (1.3.0–1.6.0) hands ``SessionManager.inMemory`` the branch's own entries, the
    preview holds the same records; a header of an older format is read back through the text, which migrates it."""
    header = manager.get_header()
    if header.version == CURRENT_SESSION_VERSION:
        preview = SessionManager.from_entries(header, manager.get_branch())
    else:
        preview = SessionManager.from_jsonl(write_session_jsonl(header, manager.get_branch()))
    apply_boundary_drafts(preview, drafts)
    return preview


def build_boundary_context(
    manager: SessionManager,
    drafts: Sequence[Any],
    boundary: Boundary,
    *,
    convert_to_llm: Callable[[Sequence[Any]], list[Any]],
    queued_messages: Sequence[Any],
    pending_custom_messages: Sequence[Any],
    agent_has_queued_messages: bool,
) -> BoundaryContextPreview:
    """What the next request would see with ``drafts`` committed, and whether a continuation could run."""
    projection = preview_manager(manager, drafts).build_session_projection()
    llm_messages = convert_to_llm(projection.messages)
    final_role = getattr(llm_messages[-1], "role", None) if llm_messages else None
    has_non_system = any(getattr(m, "role", None) != "system" for m in llm_messages)
    context_can_continue = has_non_system and final_role != "assistant"
    if boundary == "turn_end":
        queued_can_continue = agent_has_queued_messages
    else:
        queued_can_continue = final_role == "assistant" and agent_has_queued_messages
    return BoundaryContextPreview(
        context_entries=tuple(projection.entries),
        context_messages=tuple(projection.messages),
        llm_messages=tuple(llm_messages),
        pending_messages=(*queued_messages, *pending_custom_messages),
        can_continue=context_can_continue or bool(pending_custom_messages) or queued_can_continue,
    )


# --- automatic retry (Pi's settings.retry and pi-ai's error classifiers) ------------------------------------------


@dataclass(frozen=True)
class RetrySettings:
    """Pi's ``settings.retry`` defaults: retry transient provider errors 3 times, 2 s doubling, capped at 60 s."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_agent_delay_ms: int = 60_000


def retry_delay_ms(settings: RetrySettings, attempt: int) -> int:
    """pi-ai's ``retryDelayMs``: ``base * 2^(attempt-1)``, capped."""
    return min(settings.base_delay_ms * 2 ** max(0, attempt - 1), settings.max_agent_delay_ms)


def _any_of(patterns: Sequence[str]) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.IGNORECASE)


# pi-ai 1.6.0 utils/retry.ts, pattern for pattern.
_NON_RETRYABLE = _any_of(
    [
        "GoUsageLimitError",
        "FreeUsageLimitError",
        "Monthly usage limit reached",
        "available balance",
        "insufficient_quota",
        "out of budget",
        "quota exceeded",
        "billing",
        "subscription_sharing_usage_limit_exceeded",
        "subscription_sharing_workplace_individual_usage_limit_exceeded",
        '"code"\\s*:\\s*"?1308(?![0-9])',
    ]
)
_RETRYABLE = _any_of(
    [
        "overloaded",
        "server_busy",
        "servers are currently busy",
        "currently experiencing high demand",
        "model is at capacity",
        "rate.?limit",
        "too many requests",
        "(?<![a-z0-9])(?:429|500|502|503|504|520|524)(?![a-z0-9])",
        "service.?(?:is.?)?(?:temporarily.?)?unavailable",
        "server.?error",
        "internal.?error",
        "provider.?returned.?(?:an.?)?error",
        "exceeded request buffer limit while retrying upstream",
        "unable to forward upstream",
        "upstream.?request.?failed",
        "upstream_stream_read_error",
        "stream was interrupted",
        "http/?2 stream failed",
        "network.?error",
        "connection.?error",
        "connection.?refused",
        "connection.?lost",
        "connection.?closed",
        "other side closed",
        "fetch failed",
        "request to \\S+ failed, reason:",
        "getaddrinfo",
        "(?<![a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?![a-z0-9_])",
        "connection reset by peer",
        "ENOTFOUND",
        "EAI_AGAIN",
        "upstream.?connect",
        "reset before headers",
        "socket hang up",
        "socket connection was closed",
        "timed? out",
        "timeout",
        "terminated",
        "websocket.?closed",
        "websocket.?error",
        "websocket.?connection.?limit.?reached",
        "ended without",
        "stream ended before message_stop",
        "stream ended before a terminal response event",
        "http2 request did not get a response",
        "stream disconnected before completion",
        "cut short after the reply had begun",
        "pending stream has been canceled",
        "retry delay",
        "you can retry your request",
        "try your request again",
        "please retry your request",
        "ResourceExhausted",
        "subscription_sharing_usage_unavailable",
        "subscription_sharing_user_unavailable",
    ]
)
# pi-ai 1.6.0 utils/overflow.ts: context overflow goes to compaction, never to retry.
_OVERFLOW = [
    re.compile(source, re.IGNORECASE)
    for source in (
        r"prompt (?:is )?too long",
        r"prompt exceeds max length",
        r"request_too_large",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        r"context window exceeded",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
        r"model_context_window_exceeded",
        r"prompt too long; exceeded (?:max )?context length",
        r"range of input length should be",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))",
    )
]
_NON_OVERFLOW = [
    re.compile(r"^(Throttling error|Service unavailable):", re.IGNORECASE),
    re.compile(r"rate limit", re.IGNORECASE),
    re.compile(r"too many requests", re.IGNORECASE),
]
_CEREBRAS_BODYLESS = re.compile(r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)", re.IGNORECASE)


def is_context_overflow(message: Any, context_window: int = 0) -> bool:
    """pi-ai's ``isContextOverflow``: an overflow error text, or a silent overflow visible in the usage."""
    stop_reason = getattr(message, "stop_reason", None)
    error = getattr(message, "error_message", None)
    if stop_reason == "error" and error and not any(p.search(error) for p in _NON_OVERFLOW):
        if any(p.search(error) for p in _OVERFLOW):
            return True
        if getattr(message, "provider", None) == "cerebras" and _CEREBRAS_BODYLESS.search(error):
            return True
    usage = getattr(message, "usage", None)
    if context_window and usage is not None:
        tokens = usage.input + usage.cache_read
        if stop_reason == "stop" and tokens > context_window:
            return True
        if stop_reason == "length" and usage.output == 0 and tokens >= context_window * 0.99:
            return True
    return False


def is_retryable_error(message: Any, context_window: int = 0) -> bool:
    """Whether Pi retries this assistant message: a transient provider error, not an overflow or a quota limit."""
    if is_context_overflow(message, context_window):
        return False
    error = getattr(message, "error_message", None)
    if getattr(message, "stop_reason", None) != "error" or not error:
        return False
    return not _NON_RETRYABLE.search(error) and bool(_RETRYABLE.search(error))


class AutoRetryStartEvent(PiRecord):
    """A transient provider error: the session waits ``delay_ms`` and retries (attempt ``attempt`` of ``max``)."""

    type: Literal["auto_retry_start"] = "auto_retry_start"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


class AutoRetryEndEvent(PiRecord):
    """Retrying ended: a later response succeeded, the attempts ran out, or the retry was cancelled."""

    type: Literal["auto_retry_end"] = "auto_retry_end"
    success: bool
    attempt: int
    final_error: str | None = None


class SettlementMixin:
    """The run-to-settlement half of ``AgentSession``: boundaries, continuations, ``agent_settled``.

    Mixed into ``AgentSession``, whose ``__init__`` creates the state used here.
    """

    if TYPE_CHECKING:
        agent: Any
        session_manager: SessionManager
        extension_runner: Any
        continuations: list[ContinuationRecord]
        _entry_ids: dict[int, tuple[Any, str]]
        _settlements: int
        _turn_index: int
        _last_activity_outcome: AgentActivityOutcome
        _pending_custom_messages: list[Any]
        _pending_next_turn_messages: list[Any]
        _is_agent_run_active: bool
        _agent_run_abort_requested: bool
        _is_before_settle: bool
        _abort_during_before_settle: bool
        _is_emitting_agent_settled: bool
        _deferred_settled_actions: list[Callable[[], Any]]
        _last_assistant_message: Any
        _run_prompt_options: Any
        _retry_attempt: int
        _retry_controller: Any
        _post_run_continuation: Literal["queued", "retry", "recovery"]
        _compaction_will_retry: bool
        retry_settings: RetrySettings
        _base_prompt_options: Any

        def _entry_appended(self, entry: Any) -> None: ...
        def _emit(self, event: Any) -> None: ...
        def _flush_pending_custom_messages(self) -> None: ...
        def _flush_pending_bash_messages(self) -> None: ...
        def _resolve_idle_waiters(self) -> None: ...
        def _set_active_tools(self, tool_names: list[str]) -> None: ...
        def get_active_tool_names(self) -> list[str]: ...
        def _user_message(self, text: str, images: Any) -> Any: ...
        def _prompt_update(self, options: Any, messages: Sequence[Any]) -> Any: ...
        def _render_prompt(self, options: Any) -> str: ...
        def _emit_session_settled(self, aborted: bool) -> None: ...
        def _find_last_assistant_message(self) -> Any: ...
        async def _check_compaction(self, message: Any, skip_aborted_check: bool = True) -> bool: ...

    def _entry_id_of(self, message: Any) -> str | None:
        mapped = self._entry_ids.get(id(message))
        if mapped is not None and mapped[0] is message:
            return mapped[1]
        for entry in reversed(self.session_manager.get_branch()):
            if getattr(entry, "type", None) == "message" and entry.message is message:
                return entry.id
        return None

    def _boundary_context(self, drafts: Sequence[Any], boundary: Literal["turn_end", "agent_before_settle"]) -> Any:
        return build_boundary_context(
            self.session_manager,
            drafts,
            boundary,
            convert_to_llm=convert_to_llm,
            queued_messages=self.agent.peek_queued_messages(),
            pending_custom_messages=self._pending_custom_messages,
            agent_has_queued_messages=self.agent.has_queued_messages(),
        )

    def _commit_boundary_drafts(self, drafts: Sequence[Any]) -> list[Any]:
        appended = apply_boundary_drafts(self.session_manager, drafts)
        self._refresh_finalized_context()
        for entry in appended:
            self._entry_appended(entry)
        return appended

    def _refresh_finalized_context(self) -> None:
        projection = self.session_manager.build_session_projection()
        for projected in projection.entries:
            for message in projected.messages:
                self._entry_ids[id(message)] = (message, projected.source_entry.id)
        self.agent.state.messages = list(projection.messages)

    def _report_invalid_continuation(self, boundary: str) -> None:
        self.extension_runner.emit_error(
            ExtensionErrorRecord("<boundary>", boundary, invalid_continuation_error(boundary))
        )

    async def _dispatch_turn_end_boundary(self, message: Any, tool_results: list[Any]) -> bool:
        self._last_activity_outcome = outcome_of(message)
        runner = self.extension_runner
        message_entry_id = self._entry_id_of(message)
        if not runner.has_handlers("turn_end"):
            return False
        if message_entry_id is None:
            runner.emit_error(ExtensionErrorRecord("<boundary>", "turn_end", TURN_END_ENTRY_MISSING))
            return False
        tool_result_entry_ids = tuple(i for r in tool_results if (i := self._entry_id_of(r)) is not None)
        base = {
            "turn_index": self._turn_index,
            "message": message,
            "tool_results": tuple(tool_results),
            "message_entry_id": message_entry_id,
            "tool_result_entry_ids": tool_result_entry_ids,
            "outcome": self._last_activity_outcome,
        }
        outcome = await runner.emit_boundary(
            ev.TurnEndEvent, base, lambda drafts: self._boundary_context(drafts, "turn_end")
        )
        self._commit_boundary_drafts(outcome.entries)
        if outcome.continue_ and not self._boundary_context((), "turn_end").can_continue:
            self._report_invalid_continuation("turn_end")
            return False
        if outcome.continue_:
            self.continuations.append(
                ContinuationRecord(
                    "turn_end", self._settlements, self._turn_index, tuple(d.type for d in outcome.entries)
                )
            )
        return outcome.continue_

    async def _run_before_settle_boundary(self) -> bool:
        runner = self.extension_runner
        if not runner.has_handlers("agent_before_settle"):
            queued = self.agent.has_queued_messages()
            if queued:
                self.continuations.append(ContinuationRecord("queued", self._settlements))
            return queued
        self._is_before_settle = True
        self._abort_during_before_settle = False
        try:
            outcome = await runner.emit_boundary(
                ev.AgentBeforeSettleEvent,
                {"outcome": self._last_activity_outcome},
                lambda drafts: self._boundary_context(drafts, "agent_before_settle"),
            )
            self._commit_boundary_drafts(outcome.entries)
            self._flush_pending_custom_messages()
            final_context = self._boundary_context((), "agent_before_settle")
            if self._abort_during_before_settle:
                return False
            should_continue = outcome.continue_ or self.agent.has_queued_messages()
            if should_continue and not final_context.can_continue:
                if outcome.continue_:
                    self._report_invalid_continuation("agent_before_settle")
                return False
            if should_continue:
                boundary = "agent_before_settle" if outcome.continue_ else "queued"
                entry_types = tuple(d.type for d in outcome.entries)
                self.continuations.append(ContinuationRecord(boundary, self._settlements, None, entry_types))
            return should_continue
        finally:
            self._is_before_settle = False

    async def _start_run(self, trigger: dict[str, Any]) -> None:
        self._is_agent_run_active = True
        self._agent_run_abort_requested = False
        self._settlements += 1
        try:
            messages = await self._prepare_run(trigger)
        except BaseException:
            self._is_agent_run_active = False
            self._flush_pending_bash_messages()
            self._flush_pending_custom_messages()
            self._resolve_idle_waiters()
            raise
        self._flush_pending_bash_messages()
        self._flush_pending_custom_messages()
        self._record_selection()
        try:
            await self.agent.prompt(messages)
            while not self._agent_run_abort_requested:
                if await self._handle_post_agent_run():
                    if self._agent_run_abort_requested:
                        break
                    self.continuations.append(ContinuationRecord(self._post_run_continuation, self._settlements))
                    await self.agent.continue_()
                    continue
                if self._agent_run_abort_requested or not await self._run_before_settle_boundary():
                    break
                if self._agent_run_abort_requested:
                    break
                await self.agent.continue_()
        finally:
            if self._agent_run_abort_requested:
                self._finish_cancelled_retry()
            self._run_prompt_options = None
            self._flush_pending_bash_messages()
            self._flush_pending_custom_messages()
            await self._emit_agent_settled()

    def _record_selection(self) -> None:
        """Pi 1.6.0's ``_recordSelection``: when the active branch's latest ``thinking_level_change`` (clamped to
        the model) is not the live level — tree navigation can leave it on another branch — record the live one.
        (Its model half records only virtual model selections, which the stand-in's faux model never is.)"""
        from pinb.ai.thinking import clamp_thinking_level

        branch = self.session_manager.get_branch()
        recorded = next((entry for entry in reversed(branch) if entry.type == "thinking_level_change"), None)
        if recorded is None:
            return
        live = self.agent.state.thinking_level
        if clamp_thinking_level(self.agent.state.model, recorded.thinking_level) != live:
            self.session_manager.append_thinking_level_change(live)

    async def _prepare_run(self, trigger: dict[str, Any]) -> list[Any]:
        # Pi reaches before_agent_start only after awaits (`await this._prepareRun(...)`, `_checkCompaction`): a run
        # started from inside a handler or command lets its caller go on first.
        await asyncio.sleep(0)
        # Compact first when needed (this also reports a recovery that already failed); never retries here.
        last_assistant = self._find_last_assistant_message()
        if last_assistant is not None:
            await self._check_compaction(last_assistant, False)
        base = self._base_prompt_options
        selected_before = list(base.selected_tools)
        outcome = await self.extension_runner.emit_before_agent_start(trigger, base, self._render_prompt)
        options = outcome.system_prompt_options
        # An explicit edit of the selected tools wins; otherwise the live loadout (set_active_tools) does.
        if list(options.selected_tools) == selected_before:
            options.selected_tools = self.get_active_tool_names()
        else:
            self._set_active_tools(list(options.selected_tools))
        messages: list[Any] = []
        if trigger["message_type"] == "custom":
            messages.append(trigger["message"])
        else:
            messages.append(self._user_message(trigger["prompt"], trigger.get("images")))
        messages.extend(self._pending_next_turn_messages)
        self._pending_next_turn_messages = []
        for injected in outcome.messages:
            messages.append(
                CustomMessage(
                    custom_type=injected.custom_type,
                    content=injected.content if injected.content is not None else (),
                    display=injected.display,
                    details=injected.details,
                )
            )
        update = self._prompt_update(options, self.agent.state.messages)
        self._run_prompt_options = options
        if update is not None:
            messages.insert(0, update)
        return messages

    async def _handle_post_agent_run(self) -> bool:
        message, self._last_assistant_message = self._last_assistant_message, None
        if self._agent_run_abort_requested:
            self._finish_cancelled_retry()
            return False
        if message is None:
            return self.agent.has_queued_messages()
        self._post_run_continuation = "queued"
        if self._is_retryable(message) and await self._prepare_retry(message):
            if self._agent_run_abort_requested:
                self._finish_cancelled_retry()
            self._post_run_continuation = "retry"
            return not self._agent_run_abort_requested
        if self._agent_run_abort_requested:
            self._finish_cancelled_retry()
            return False
        if message.stop_reason == "error" and self._retry_attempt > 0:
            self._emit(AutoRetryEndEvent(success=False, attempt=self._retry_attempt, final_error=message.error_message))
            self._retry_attempt = 0
        # Overflow and truncation recovery, or threshold compaction (pinb.app.recovery).
        if await self._check_compaction(message):
            if self._compaction_will_retry:
                self._post_run_continuation = "recovery"
            return not self._agent_run_abort_requested
        # Follow-ups queued by agent_end handlers need a fresh run before pre-settlement handlers fire.
        return not self._agent_run_abort_requested and self.agent.has_queued_messages()

    # --- automatic retry ---

    def _is_retryable(self, message: Any) -> bool:
        model = self.agent.state.model
        return is_retryable_error(message, getattr(model, "context_window", 0) or 0)

    def _will_retry_after_agent_end(self, messages: Sequence[Any]) -> bool:
        settings = self.retry_settings
        if self._agent_run_abort_requested or not settings.enabled or self._retry_attempt >= settings.max_retries:
            return False
        last = next((m for m in reversed(messages) if getattr(m, "role", None) == "assistant"), None)
        return last is not None and self._is_retryable(last)

    async def _prepare_retry(self, message: Any) -> bool:
        settings = self.retry_settings
        if not settings.enabled:
            return False
        self._retry_attempt += 1
        if self._retry_attempt > settings.max_retries:
            self._retry_attempt -= 1  # the final failure is announced after the run
            return False
        delay = retry_delay_ms(settings, self._retry_attempt)
        self._emit(
            AutoRetryStartEvent(
                attempt=self._retry_attempt,
                max_attempts=settings.max_retries,
                delay_ms=delay,
                error_message=message.error_message or "Unknown error",
            )
        )
        # The failed attempt stays in the session but leaves the model's context for good.
        self._omit_recovery_attempt(message)
        self._retry_controller = AbortController()
        try:
            await sleep_or_abort(delay / 1000, self._retry_controller.signal)
        except AbortError:
            self._finish_cancelled_retry()
            return False
        finally:
            self._retry_controller = None
        return True

    def _omit_recovery_attempt(self, message: Any) -> None:
        call_ids = {block.id for block in message.content if getattr(block, "type", None) == "toolCall"}
        messages = list(self.agent.state.messages)
        index = next((i for i, m in enumerate(messages) if m is message), -1)
        results = []
        for later in messages[index + 1 :] if index >= 0 else []:
            if getattr(later, "role", None) == "assistant":
                break
            if getattr(later, "role", None) == "toolResult" and later.tool_call_id in call_ids:
                results.append(later)
        for target in (message, *results):
            entry_id = self._entry_id_of(target)
            if entry_id is None:
                continue
            edit_id = self.session_manager.append_context_edit(entry_id, None)
            entry = self.session_manager.get_entry(edit_id)
            if entry is not None:
                self._entry_appended(entry)
        self._refresh_finalized_context()

    def _finish_cancelled_retry(self) -> None:
        if self._retry_attempt == 0:
            return
        attempt, self._retry_attempt = self._retry_attempt, 0
        self._emit(AutoRetryEndEvent(success=False, attempt=attempt, final_error="Retry cancelled"))

    async def _emit_agent_settled(self) -> None:
        self._is_agent_run_active = False
        self._is_emitting_agent_settled = True
        try:
            aborted = self._agent_run_abort_requested
            await self.extension_runner.emit(ev.AgentSettledEvent(aborted=aborted))
            self._emit_session_settled(aborted)
        finally:
            self._is_emitting_agent_settled = False
        deferred, self._deferred_settled_actions = self._deferred_settled_actions, []
        try:
            for action in deferred:
                await action()
        finally:
            self._resolve_idle_waiters()
