"""Settlement: the actionable boundaries (``turn_end``, ``agent_before_settle``) and what they may propose.

A boundary handler proposes session-entry drafts and a continuation. Before each handler runs, and after it, the
session builds a *preview*: a throwaway copy of the active branch with the drafts applied, projected to the context
the next request would see. A draft the session tree refuses (a ``context_edit`` of a missing entry, say) makes the
preview fail, which discards the whole proposal. A continuation needs runnable model context; without it Pi reports
``<boundary> requested continuation without runnable model context`` and makes no request.

Pi has no continuation cap, and neither does pinb; ``ContinuationRecord`` lets a notebook show a loop instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pinb.ai import CustomMessage
from pinb.app.extensions import events as ev
from pinb.app.extensions.context import ExtensionErrorRecord
from pinb.app.extensions.events import AgentActivityOutcome, BoundaryContextPreview
from pinb.app.extensions.results import (
    CompactionEntryDraft,
    ContextEditEntryDraft,
    CustomEntryDraft,
    CustomMessageEntryDraft,
)
from pinb.app.session_file import write_session_jsonl
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
    ``queued`` start a new one). ``settlement``: which settlement (one per prompt) it belongs to, counting from 1.
    ``turn_index``: the turn that ended (``turn_end`` only). ``entry_types``: the drafts committed with it.
    """

    boundary: Literal["turn_end", "agent_before_settle", "queued"]
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
    """A throwaway copy of ``manager``'s active branch with ``drafts`` applied."""
    preview = SessionManager.from_jsonl(write_session_jsonl(manager.get_header(), manager.get_branch()))
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
        try:
            await self.agent.prompt(messages)
            while not self._agent_run_abort_requested:
                if self._handle_post_agent_run():
                    if self._agent_run_abort_requested:
                        break
                    self.continuations.append(ContinuationRecord("queued", self._settlements))
                    await self.agent.continue_()
                    continue
                if self._agent_run_abort_requested or not await self._run_before_settle_boundary():
                    break
                if self._agent_run_abort_requested:
                    break
                await self.agent.continue_()
        finally:
            self._run_prompt_options = None
            self._flush_pending_bash_messages()
            self._flush_pending_custom_messages()
            await self._emit_agent_settled()

    async def _prepare_run(self, trigger: dict[str, Any]) -> list[Any]:
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

    def _handle_post_agent_run(self) -> bool:
        message, self._last_assistant_message = self._last_assistant_message, None
        if self._agent_run_abort_requested:
            return False
        if message is None:
            return self.agent.has_queued_messages()
        # Follow-ups queued by agent_end handlers need a fresh run before pre-settlement handlers fire.
        return self.agent.has_queued_messages()

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
