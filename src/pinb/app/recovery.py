"""Recovery after a failed reply, as Pi 1.6.0's ``AgentSession`` does it: ``_checkCompaction`` and
``_runAutoCompaction``.

After a low-level run ends (and before a new prompt runs), the session looks at the last reply:

- a context overflow (an error text Pi classifies as overflow, or usage past the window) or a *recoverable* length
  stop (output below the model's ``maxTokens``) is hidden from later requests with a ``context_edit`` entry, then
  compacted (reason ``overflow``); when compaction succeeds the interrupted turn is retried in a new low-level run.
  Only one compact-and-retry per user turn: a second failure before the next user message is reported as
  ``compaction_end`` with an error and ``session_compact_failed``, and nothing is retried;
- otherwise, when the context is past ``contextWindow - reserveTokens``, it is compacted (reason ``threshold``)
  without a retry, and queued messages, if any, continue the run.

Compaction asks the session's own model for the summaries (``compaction_summary``), unless a
``session_before_compact`` handler cancels it or supplies one. ``RecoveryMixin`` is part of ``AgentSession``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pinb.ai import AbortController, PiRecord
from pinb.ai.abort import AbortError
from pinb.app.compaction_summary import SummaryRetryCallbacks, summarize_compaction
from pinb.app.extensions import events as ev
from pinb.app.extensions.user_commands import CompactionEndEvent, CompactionStartEvent
from pinb.app.session_compaction import (
    CompactionSettings,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_projected_context_tokens,
    prepare_compaction,
    should_compact,
)
from pinb.app.session_file import uuidv7
from pinb.app.settlement import is_context_overflow

Reason = Literal["threshold", "overflow"]

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
LENGTH_RECOVERY_FAILED = "Truncated response recovery failed after one compact-and-retry attempt."


class SummarizationRetryScheduledEvent(PiRecord):
    """A summarisation request failed transiently and is retried after ``delay_ms``."""

    type: Literal["summarization_retry_scheduled"] = "summarization_retry_scheduled"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


class SummarizationRetryAttemptStartEvent(PiRecord):
    """A summarisation retry starts."""

    type: Literal["summarization_retry_attempt_start"] = "summarization_retry_attempt_start"
    source: str
    reason: str | None = None  # a branch summary has none


class SummarizationRetryFinishedEvent(PiRecord):
    """Retrying a summarisation request ended."""

    type: Literal["summarization_retry_finished"] = "summarization_retry_finished"


def is_recoverable_length(message: Any, desired_max_output: int) -> bool:
    """pi-ai's ``isRecoverableLength``: a length stop below the model's intended output limit."""
    usage = getattr(message, "usage", None)
    output = usage.output if usage is not None else 0
    return getattr(message, "stop_reason", None) == "length" and desired_max_output > 0 and output < desired_max_output


def _iso_ms(timestamp: str) -> int:
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)


def _type_of(entry: Any) -> str | None:
    return getattr(entry, "type", None)


class RecoveryMixin:
    """``_check_compaction`` and ``_run_auto_compaction`` of ``AgentSession`` (whose ``__init__`` creates the state)."""

    if TYPE_CHECKING:
        agent: Any
        session_manager: Any
        extension_runner: Any
        compaction_settings: CompactionSettings
        retry_settings: Any
        _overflow_recovery_attempted: bool
        _auto_compaction_controller: AbortController | None
        _compaction_will_retry: bool

        @property
        def model(self) -> Any: ...
        def _emit(self, event: Any) -> None: ...
        def _entry_id_of(self, message: Any) -> str | None: ...
        def _omit_recovery_attempt(self, message: Any) -> None: ...
        def _refresh_finalized_context(self) -> None: ...
        def _resolve_idle_waiters(self) -> None: ...

    def _model_for_message(self, message: Any) -> Any:
        """The current model when it produced ``message``, else ``None`` (its limits do not apply)."""
        model = self.model
        if model is not None and model.provider == message.provider and model.id == message.model:
            return model
        return None

    def _find_last_assistant_message(self) -> Any:
        for message in reversed(self.agent.state.messages):
            if getattr(message, "role", None) == "assistant":
                return message
        return None

    async def _emit_session_compact_failed(self, event: ev.SessionCompactFailedEvent) -> None:
        if self.extension_runner.has_handlers("session_compact_failed"):
            await self.extension_runner.emit(event)

    async def _check_compaction(self, message: Any, skip_aborted_check: bool = True) -> bool:
        """Pi's ``_checkCompaction``: whether the post-run loop should continue (a retry or queued messages)."""
        settings = self.compaction_settings
        if not settings.enabled:
            return False
        if skip_aborted_check and message.stop_reason == "aborted":
            return False
        message_model = self._model_for_message(message)
        same_model = message_model is not None
        context_window = getattr(message_model or self.model, "context_window", 0) or 0
        branch = self.session_manager.get_branch()
        compaction = next((e for e in reversed(branch) if _type_of(e) == "compaction"), None)
        compaction_ms = _iso_ms(compaction.timestamp) if compaction is not None else None
        # A reply older than the latest compaction cannot trigger another one.
        if compaction_ms is not None and message.timestamp <= compaction_ms:
            return False
        projection = self.session_manager.build_session_projection()
        entry_id = self._entry_id_of(message)
        projected = entry_id is None or any(
            e.source_entry.id == entry_id and any(getattr(m, "role", None) == "assistant" for m in e.messages)
            for e in projection.entries
        )
        index = next((i for i, e in enumerate(branch) if e.id == entry_id), -1) if entry_id else -1
        after = branch[index + 1 :] if index >= 0 else []
        edited_after = any(_type_of(e) == "context_edit" for e in after)
        own_edits = [e for e in after if _type_of(e) == "context_edit" and e.target_id == entry_id]
        retained = entry_id is None or (
            not any(_type_of(e) == "compaction" for e in after)
            and (not own_edits or own_edits[-1].replacement is not None)
        )
        explicit_overflow = message.stop_reason == "error" and is_context_overflow(message)
        context_overflow = same_model and (
            (explicit_overflow and retained)
            or (projected and not edited_after and is_context_overflow(message, context_window))
        )
        recoverable_length = same_model and projected and is_recoverable_length(message, message_model.max_tokens)
        if context_overflow or recoverable_length:
            will_retry = message.stop_reason != "stop"
            if not will_retry:
                return await self._run_auto_compaction("overflow", False)
            if self._overflow_recovery_attempted:
                error_message = OVERFLOW_RECOVERY_FAILED if context_overflow else LENGTH_RECOVERY_FAILED
                self._emit(CompactionEndEvent(reason="overflow", aborted=False, error_message=error_message))
                await self._emit_session_compact_failed(
                    ev.SessionCompactFailedEvent(reason="overflow", error_message=error_message, aborted=False)
                )
                return False
            self._overflow_recovery_attempted = True
            self._omit_recovery_attempt(message)
            return await self._run_auto_compaction("overflow", True)
        # Threshold compaction, without a retry. Error and zero-usage replies are estimated from the context.
        direct = calculate_context_tokens(message.usage) if message.usage is not None else 0
        if any(_type_of(e.source_entry) == "context_edit" for e in projection.entries):
            tokens = estimate_projected_context_tokens(projection, branch).tokens
        elif message.stop_reason == "error" or direct == 0:
            messages = list(self.agent.state.messages)
            estimate = estimate_context_tokens(messages)
            if estimate.last_usage_index is not None and compaction_ms is not None:
                used = messages[estimate.last_usage_index]
                if getattr(used, "role", None) == "assistant" and used.timestamp <= compaction_ms:
                    return False
            tokens = estimate.tokens
        else:
            tokens = direct
        if should_compact(tokens, context_window, settings):
            return await self._run_auto_compaction("threshold", False)
        return False

    def _exceeds_compaction_threshold(self, model: Any, projection: Any) -> bool:
        window = getattr(model, "context_window", 0) or 0
        if window <= 0:
            return False
        tokens = estimate_projected_context_tokens(projection, self.session_manager.get_branch()).tokens
        return should_compact(tokens, window, self.compaction_settings)

    async def _compact_before_next_response(self) -> None:
        """Pi's ``_compactBeforeNextAssistantResponse``: between turns, compact a context past the threshold."""
        model = self.model
        if model is not None and self._exceeds_compaction_threshold(
            model, self.session_manager.build_session_projection()
        ):
            await self._run_auto_compaction("threshold", False)

    def _summary_callbacks(self, reason: str | None, source: str = "compaction") -> SummaryRetryCallbacks:
        """The summarisation retry events of a compaction (with its reason) or a branch summary (none)."""
        return SummaryRetryCallbacks(
            scheduled=lambda attempt, max_attempts, delay, error: self._emit(
                SummarizationRetryScheduledEvent(
                    attempt=attempt, max_attempts=max_attempts, delay_ms=delay, error_message=error
                )
            ),
            attempt_start=lambda: self._emit(SummarizationRetryAttemptStartEvent(source=source, reason=reason)),
            finished=lambda: self._emit(SummarizationRetryFinishedEvent()),
        )

    async def _run_auto_compaction(self, reason: Reason, will_retry: bool) -> bool:
        """Pi's ``_runAutoCompaction``: whether the post-run loop should call ``agent.continue()``."""
        model = self.model
        self._compaction_will_retry = False
        controller: AbortController | None = None
        started = False
        from_extension = False
        cancelled_by_extension = False
        try:
            if model is None:
                return False
            branch = self.session_manager.get_branch()
            preparation = prepare_compaction(branch, self.compaction_settings)
            if preparation is None:
                return False
            controller = self._auto_compaction_controller = AbortController()
            started = True
            self._emit(CompactionStartEvent(reason=reason))
            cancelled_by_extension, supplied = await self._ask_before_compact(
                preparation, branch, reason, will_retry, controller.signal
            )
            if cancelled_by_extension:
                raise AbortError("Compaction cancelled")
            from_extension = supplied is not None
            if controller.signal.aborted:
                raise AbortError("This operation was aborted")
            if supplied is None:
                supplied = await summarize_compaction(
                    preparation,
                    stream_fn=self.agent.stream_fn,
                    model=model,
                    options={"signal": controller.signal, "session_id": uuidv7()},
                    retry=self.retry_settings,
                    callbacks=self._summary_callbacks(reason),
                )
            if controller.signal.aborted:
                raise AbortError("This operation was aborted")
            await self._append_compaction(supplied, from_extension, reason, will_retry)
            self._emit(CompactionEndEvent(reason=reason, result=supplied, aborted=False, will_retry=will_retry))
            # Queued messages continue the run after a compaction that retries nothing.
            self._compaction_will_retry = will_retry
            return True if will_retry else self.agent.has_queued_messages()
        except Exception as error:
            aborted = (controller is not None and controller.signal.aborted) or cancelled_by_extension
            if started:
                if aborted:
                    error_message = None
                elif reason == "overflow":
                    error_message = f"Context overflow recovery failed: {error}"
                else:
                    error_message = f"Auto-compaction failed: {error}"
                self._emit(CompactionEndEvent(reason=reason, aborted=aborted, error_message=error_message))
                await self._emit_session_compact_failed(
                    ev.SessionCompactFailedEvent(
                        reason=reason, error_message=error_message, aborted=aborted, from_extension=from_extension
                    )
                )
            return False
        finally:
            if self._auto_compaction_controller is controller:
                self._auto_compaction_controller = None
            self._resolve_idle_waiters()
