"""The two user commands extensions can intercept: ``/compact`` (``session_before_compact``) and ``!command``
(``user_bash``), as Pi 1.6.0's ``AgentSession.compact`` and its RPC mode's ``bash`` command run them.

``UserCommandsMixin`` is part of ``pinb.app.session.AgentSession``. Pi's default compaction asks the session's model
for the summaries, and so does pinb's (``pinb.app.compaction_summary``; a ``summarize`` callback may answer instead).
Pi's default ``!command`` runs on the host; pinb's never does: a command's result comes from a handler, its
``operations``, or a simulated ``run``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pinb.ai import AbortController, PiRecord
from pinb.app.compaction_summary import summarize_compaction
from pinb.app.extensions import events as ev
from pinb.app.extensions import results as rs
from pinb.app.session_compaction import (
    DEFAULT_COMPACTION_SETTINGS,
    CompactionPreparation,
    CompactionResult,
    CompactionSettings,
    compaction_result,
    prepare_compaction,
)
from pinb.app.session_file import uuidv7
from pinb.app.session_messages import BashExecutionMessage
from pinb.errors import UsageError


class CompactionStartEvent(PiRecord):
    """Compaction started."""

    type: Literal["compaction_start"] = "compaction_start"
    reason: Literal["manual", "threshold", "overflow"]


class CompactionEndEvent(PiRecord):
    """Compaction ended: its result, or why not."""

    type: Literal["compaction_end"] = "compaction_end"
    reason: Literal["manual", "threshold", "overflow"]
    result: Any = None
    aborted: bool
    will_retry: bool = False
    error_message: str | None = None


def _compaction_from_extension(value: Any) -> CompactionResult:
    if isinstance(value, CompactionResult):
        return value
    data = value if isinstance(value, dict) else value.model_dump(by_alias=True)
    return CompactionResult(
        summary=data["summary"],
        first_kept_entry_id=data.get("firstKeptEntryId", data.get("first_kept_entry_id")),
        tokens_before=data.get("tokensBefore", data.get("tokens_before", 0)),
        details=data.get("details"),
        usage=data.get("usage"),
    )


class UserCommandsMixin:
    """``compact`` and ``execute_user_bash`` of ``AgentSession`` (whose ``__init__`` creates the state used here)."""

    if TYPE_CHECKING:
        agent: Any
        session_manager: Any
        extension_runner: Any
        cwd: str
        _is_compacting: bool
        _compaction_abort_controller: AbortController | None
        _pending_bash_messages: list[Any]

        @property
        def is_streaming(self) -> bool: ...
        def abort(self) -> Any: ...
        def _emit(self, event: Any) -> None: ...
        def _refresh_finalized_context(self) -> None: ...
        def _resolve_idle_waiters(self) -> None: ...
        def _summary_callbacks(self, reason: str | None, source: str = ...) -> Any: ...

    async def compact(
        self,
        custom_instructions: str | None = None,
        *,
        summarize: Callable[[CompactionPreparation, str | None], Any] | None = None,
        settings: CompactionSettings | None = None,
    ) -> CompactionResult:
        """Pi's manual ``compact()``: ``session_before_compact`` handlers may cancel it or supply the compaction.

        Otherwise, as in Pi, the session's model is asked for the summaries (the history, then a split turn's prefix,
        with ``custom_instructions`` as the additional focus). ``summarize(preparation, custom_instructions)``
        answers instead when given: the summary text, or ``(history_summary, turn_prefix_summary)`` when
        ``preparation.is_split_turn``. ``settings``: the session's compaction settings unless given.
        """
        settings = settings if settings is not None else getattr(self, "compaction_settings", None)
        settings = settings if settings is not None else DEFAULT_COMPACTION_SETTINGS
        await self.abort()
        self._is_compacting = True
        controller = self._compaction_abort_controller = AbortController()
        self._emit(CompactionStartEvent(reason="manual"))
        from_extension = False
        cancelled_by_extension = False
        try:
            branch = self.session_manager.get_branch()
            preparation = prepare_compaction(branch, settings)
            if preparation is None:
                if branch and branch[-1].type == "compaction":
                    raise UsageError("Already compacted")
                raise UsageError("Nothing to compact (session too small)")
            cancelled_by_extension, supplied = await self._ask_before_compact(
                preparation, branch, "manual", False, controller.signal, custom_instructions
            )
            if cancelled_by_extension:
                raise UsageError("Compaction cancelled")
            from_extension = supplied is not None
            if supplied is None and summarize is None:
                supplied = await summarize_compaction(
                    preparation,
                    stream_fn=self.agent.stream_fn,
                    model=self.agent.state.model,
                    options={"signal": controller.signal, "session_id": uuidv7()},
                    retry=getattr(self, "retry_settings", None),
                    callbacks=self._summary_callbacks("manual"),
                    custom_instructions=custom_instructions,
                )
            if supplied is None and summarize is not None:
                summary = summarize(preparation, custom_instructions)
                summary = await summary if inspect.isawaitable(summary) else summary
                # A split turn needs two summaries (history, turn prefix), as Pi asks for two.
                history, prefix = summary if isinstance(summary, tuple) else (summary, None)
                supplied = compaction_result(preparation, history, prefix)
            if controller.signal.aborted:
                raise UsageError("Compaction cancelled")
            await self._append_compaction(supplied, from_extension, "manual", will_retry=False)
            self._is_compacting = False
            self._emit(CompactionEndEvent(reason="manual", result=supplied, aborted=False))
            return supplied
        except Exception as error:
            aborted = controller.signal.aborted or cancelled_by_extension
            error_message = None if aborted else f"Compaction failed: {error}"
            self._is_compacting = False
            self._emit(CompactionEndEvent(reason="manual", aborted=aborted, error_message=error_message))
            if self.extension_runner.has_handlers("session_compact_failed"):
                await self.extension_runner.emit(
                    ev.SessionCompactFailedEvent(
                        reason="manual", error_message=error_message, aborted=aborted, from_extension=from_extension
                    )
                )
            raise
        finally:
            self._is_compacting = False
            self._compaction_abort_controller = None
            self._resolve_idle_waiters()

    async def _ask_before_compact(
        self,
        preparation: CompactionPreparation,
        branch: list[Any],
        reason: Literal["manual", "threshold", "overflow"],
        will_retry: bool,
        signal: Any,
        custom_instructions: str | None = None,
    ) -> tuple[bool, CompactionResult | None]:
        """Ask the `session_before_compact` handlers (manual or automatic): (cancelled, the compaction they supply)."""
        if not self.extension_runner.has_handlers("session_before_compact"):
            return False, None
        result = await self.extension_runner.emit(
            ev.SessionBeforeCompactEvent(
                preparation=preparation,
                branch_entries=tuple(branch),
                custom_instructions=custom_instructions,
                reason=reason,
                will_retry=will_retry,
                signal=signal,
            )
        )
        if result is not None and result.cancel:
            return True, None
        if result is not None and result.compaction is not None:
            return False, _compaction_from_extension(result.compaction)
        return False, None

    async def _append_compaction(
        self, supplied: Any, from_extension: bool, reason: Literal["manual", "threshold", "overflow"], will_retry: bool
    ) -> None:
        """Append the compaction entry, rebuild the context from it, and tell the extensions (manual or automatic)."""
        entry_id = self.session_manager.append_compaction(
            supplied.summary,
            supplied.first_kept_entry_id,
            supplied.tokens_before,
            supplied.details,
            from_extension,
            supplied.usage,
        )
        self._refresh_finalized_context()
        # Pi looks the entry up by its summary text (``newEntries.find``): with two compactions of the same text the
        # event carries the first of them, not the one just appended.
        entry = next(
            (
                found
                for found in self.session_manager.get_entries()
                if found.type == "compaction" and found.summary == supplied.summary
            ),
            self.session_manager.get_entry(entry_id),
        )
        await self.extension_runner.emit(
            ev.SessionCompactEvent(
                compaction_entry=entry, from_extension=from_extension, reason=reason, will_retry=will_retry
            )
        )

    def abort_compaction(self) -> None:
        """Pi's ``abortCompaction()``: cancel a compaction in progress, manual or automatic (its ``signal`` aborts)."""
        for controller in (self._compaction_abort_controller, getattr(self, "_auto_compaction_controller", None)):
            if controller is not None:
                controller.abort()

    async def execute_user_bash(
        self,
        command: str,
        *,
        exclude_from_context: bool = False,
        run: Callable[[str, str], Any] | None = None,
    ) -> rs.BashResult:
        """A user's ``!command`` (``!!``: ``exclude_from_context``), as Pi's RPC mode runs it.

        ``user_bash`` handlers may return the result themselves or ``operations`` whose ``exec`` runs it. Otherwise
        Pi runs it on the host; pinb never does: ``run(command, cwd)`` (simulated) answers, or an empty success.
        """
        event = ev.UserBashEvent(command=command, exclude_from_context=exclude_from_context, cwd=self.cwd)
        handled = (
            await self.extension_runner.emit_user_bash(event)
            if self.extension_runner.has_handlers("user_bash")
            else None
        )
        if handled is not None and handled.result is not None:
            result = handled.result
        elif handled is not None and handled.operations is not None:
            chunks: list[str] = []
            outcome = handled.operations.exec(command, self.cwd, on_data=chunks.append)
            outcome = await outcome if inspect.isawaitable(outcome) else outcome
            exit_code = outcome.get("exit_code", outcome.get("exitCode")) if isinstance(outcome, dict) else outcome
            result = rs.BashResult(output="".join(chunks), exit_code=exit_code, cancelled=False, truncated=False)
        else:
            answer = run(command, self.cwd) if run is not None else None
            answer = await answer if inspect.isawaitable(answer) else answer
            result = (
                answer
                if isinstance(answer, rs.BashResult)
                else rs.BashResult(output=answer or "", exit_code=0, cancelled=False, truncated=False)
            )
        self.record_bash_result(command, result, exclude_from_context=exclude_from_context)
        return result

    def record_bash_result(self, command: str, result: rs.BashResult, *, exclude_from_context: bool = False) -> None:
        """Put a ``bashExecution`` message in the session (deferred to the end of the run while streaming)."""
        message = BashExecutionMessage(
            command=command,
            output=result.output,
            exit_code=result.exit_code,
            cancelled=result.cancelled,
            truncated=result.truncated,
            full_output_path=result.full_output_path,
            exclude_from_context=exclude_from_context or None,
        )
        if self.is_streaming:
            self._pending_bash_messages.append(message)
        else:
            self.session_manager.append_message(message)
            self._refresh_finalized_context()

    def _flush_pending_bash_messages(self) -> None:
        pending, self._pending_bash_messages = self._pending_bash_messages, []
        for message in pending:
            self.session_manager.append_message(message)
        if pending:
            self._refresh_finalized_context()
