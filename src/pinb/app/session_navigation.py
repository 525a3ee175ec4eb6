"""``navigate_tree``: Pi 1.6.0's ``AgentSession.navigateTree``, the branch summary asked of the model included.

Moving to a user message puts its parent at the leaf and hands the message's text back for editing (the next
prompt starts a new branch there); moving to any other entry makes it the leaf. ``session_before_tree`` handlers
may cancel, relabel or (when a summary was asked for) supply the branch summary; ``session_tree`` follows.
Nothing is deleted: the branch left behind stays in the tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pinb.ai.abort import AbortController
from pinb.ai.types import message_text
from pinb.app.branch_summary import BranchSummaryResult, generate_branch_summary
from pinb.app.extensions import events as ev
from pinb.app.session_tree import collect_entries_for_branch_summary
from pinb.errors import UsageError

__all__ = ["NavigateResult", "NavigationMixin", "TreePreparation"]


@dataclass(frozen=True)
class TreePreparation:
    """What ``session_before_tree`` handlers see (Pi's ``TreePreparation``)."""

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: tuple[Any, ...]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True)
class NavigateResult:
    cancelled: bool
    editor_text: str | None = None
    summary_entry: Any = None
    aborted: bool | None = None


class NavigationMixin:
    """``navigate_tree`` of ``AgentSession``."""

    if TYPE_CHECKING:
        session_manager: Any
        extension_runner: Any
        agent: Any
        retry_settings: Any

        @property
        def model(self) -> Any: ...
        def _emit(self, event: Any) -> None: ...

        @property
        def is_streaming(self) -> bool: ...
        @property
        def is_compacting(self) -> bool: ...
        def _refresh_finalized_context(self) -> None: ...
        def _summary_callbacks(self, reason: str | None, source: str = ...) -> Any: ...

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool | None = None,
        label: str | None = None,
    ) -> NavigateResult:
        """Move the leaf to ``target_id`` (a user message: to its parent, its text returned for editing)."""
        if self.is_streaming:
            raise UsageError("Wait for the current response to finish before navigating the session tree.")
        if self.is_compacting:
            raise UsageError(
                "Wait for the current compaction or tree navigation to finish before navigating the session tree."
            )
        manager = self.session_manager
        old_leaf_id = manager.get_leaf_id()
        if target_id == old_leaf_id:
            return NavigateResult(cancelled=False)
        target = manager.get_entry(target_id)
        if target is None:
            raise UsageError(f"Entry {target_id} not found")
        entries, common = collect_entries_for_branch_summary(manager, old_leaf_id, target_id)
        preparation = TreePreparation(
            target_id=target_id,
            old_leaf_id=old_leaf_id,
            common_ancestor_id=common,
            entries_to_summarize=tuple(entries),
            user_wants_summary=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )
        summary: Any = None
        from_extension = False
        if self.extension_runner.has_handlers("session_before_tree"):
            event = ev.SessionBeforeTreeEvent(preparation=preparation, signal=AbortController().signal)
            result = await self.extension_runner.emit(event)
            if result is not None and result.cancel:
                return NavigateResult(cancelled=True)
            if result is not None and result.summary and summarize:
                summary, from_extension = result.summary, True
            if result is not None and result.custom_instructions is not None:
                custom_instructions = result.custom_instructions
            if result is not None and result.replace_instructions is not None:
                replace_instructions = result.replace_instructions
            if result is not None and result.label is not None:
                label = result.label
        if summarize and entries and summary is None:
            generated = await self._summarize_branch(entries, custom_instructions, replace_instructions)
            if generated.aborted:
                return NavigateResult(cancelled=True, aborted=True)
            if generated.error is not None:
                raise UsageError(generated.error)
            details = {"readFiles": list(generated.read_files), "modifiedFiles": list(generated.modified_files)}
            summary = {"summary": generated.summary, "details": details}
        editor_text: str | None = None
        if target.type == "message" and target.message.role == "user":
            new_leaf_id, editor_text = target.parent_id, message_text(target.message) or ""
        elif target.type == "custom_message":
            new_leaf_id, editor_text = target.parent_id, message_text(target) or ""
        else:
            new_leaf_id = target_id
        summary_entry = None
        summary_text = _get(summary, "summary")
        if summary_text:
            details = _get(summary, "details")
            summary_id = manager.branch_with_summary(new_leaf_id, summary_text, details, from_extension)
            summary_entry = manager.get_entry(summary_id)
            if label:
                manager.append_label_change(summary_id, label)
        elif new_leaf_id is None:
            manager.reset_leaf()
        else:
            manager.branch(new_leaf_id)
        if label and not summary_text:
            manager.append_label_change(target_id, label)
        self._refresh_finalized_context()
        await self.extension_runner.emit(
            ev.SessionTreeEvent(
                new_leaf_id=manager.get_leaf_id(),
                old_leaf_id=old_leaf_id,
                summary_entry=summary_entry,
                from_extension=from_extension if summary_text else None,
            )
        )
        return NavigateResult(cancelled=False, editor_text=editor_text, summary_entry=summary_entry)

    async def _summarize_branch(
        self, entries: list[Any], custom_instructions: str | None, replace_instructions: bool | None
    ) -> BranchSummaryResult:
        """Pi's ``generateBranchSummary`` with the session's model, thinking level, stream function and retry
        settings (``branchSummary.reserveTokens`` at Pi's default)."""
        model = self.model
        options: dict[str, Any] = {"signal": AbortController().signal}
        level = self.agent.state.thinking_level
        if getattr(model, "reasoning", False) and level and level != "off":
            options["reasoning"] = level
        return await generate_branch_summary(
            entries,
            stream_fn=self.agent.stream_fn,
            model=model,
            options=options,
            retry=self.retry_settings,
            callbacks=self._summary_callbacks(None, source="branchSummary"),
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
        )


def _get(value: Any, key: str) -> Any:
    if value is None:
        return None
    return value.get(key) if isinstance(value, dict) else getattr(value, key, None)
