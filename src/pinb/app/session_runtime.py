"""``AgentSessionRuntime``: Pi 1.6.0's owner of the current session, which ``new_session``, ``fork`` and
``switch_session`` replace (``core/agent-session-runtime.ts``).

Each replacement asks the current extensions first (``session_before_switch`` or ``session_before_fork``: a handler
may cancel), then tears the current session down (abort, ``session_shutdown`` with the replacement's reason, dispose:
its extension ``ctx`` goes stale) and builds the next session with ``create_runtime`` (the host's factory: Pi's
``createRuntime`` builds new services, so the extension factories run again) and ``session_start`` with the same
reason. Sessions are in memory, as the scenario runner's are: a new session is a fresh ``SessionManager``; a fork
keeps the manager and branches it (``create_branched_session``), or starts it anew when the fork point is the root.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pinb.ai.types import message_text
from pinb.app.extensions import events as ev
from pinb.app.session_tree import SessionManager
from pinb.errors import UsageError

__all__ = ["AgentSessionRuntime", "ReplacementResult"]

#: ``create_runtime(session_manager, session_start_event)``: the next session, built, bound and listened to.
CreateRuntime = Callable[[SessionManager, ev.SessionStartEvent], Awaitable[Any]]


@dataclass(frozen=True)
class ReplacementResult:
    """What Pi's ``newSession``, ``fork`` and ``switchSession`` return."""

    cancelled: bool
    selected_text: str | None = None


class AgentSessionRuntime:
    """Owns the current session (``session``) and replaces it."""

    def __init__(self, session: Any, create_runtime: CreateRuntime, *, session_file: str | None = None) -> None:
        self._session = session
        self._create_runtime = create_runtime
        #: The current session's file (``None``: in memory); a resumed session's is the file it was opened from.
        self.session_file = session_file

    @property
    def session(self) -> Any:
        return self._session

    async def _before_switch(self, reason: str, target_session_file: str | None = None) -> bool:
        runner = self._session.extension_runner
        if not runner.has_handlers("session_before_switch"):
            return False
        event = ev.SessionBeforeSwitchEvent(reason=reason, target_session_file=target_session_file)  # type: ignore[arg-type]
        result = await runner.emit(event)
        return bool(result is not None and getattr(result, "cancel", None) is True)

    async def _before_fork(self, entry_id: str, position: str) -> bool:
        runner = self._session.extension_runner
        if not runner.has_handlers("session_before_fork"):
            return False
        result = await runner.emit(ev.SessionBeforeForkEvent(entry_id=entry_id, position=position))  # type: ignore[arg-type]
        return bool(result is not None and getattr(result, "cancel", None) is True)

    async def _replace(self, manager: SessionManager, reason: str, previous: str | None) -> None:
        event = ev.SessionStartEvent(reason=reason, previous_session_file=previous)  # type: ignore[arg-type]
        self._session = await self._create_runtime(manager, event)

    async def new_session(self) -> ReplacementResult:
        """Pi's ``newSession()``: a new, empty in-memory session in the same cwd."""
        if await self._before_switch("new"):
            return ReplacementResult(cancelled=True)
        previous = self.session_file
        manager = SessionManager(self._session.cwd)
        await self._session.shutdown("new")
        self.session_file = None
        await self._replace(manager, "new", previous)
        return ReplacementResult(cancelled=False)

    async def fork(self, entry_id: str, position: str = "before") -> ReplacementResult:
        """Pi's ``fork(entryId, {position})`` of an in-memory session: ``before`` a user message (its text is
        returned, the fork keeps the path up to its parent) or ``at`` any entry (the path up to it)."""
        if self.session_file is not None:
            raise UsageError("pinb forks in-memory sessions only (a resumed session is persisted by Pi)")
        if await self._before_fork(entry_id, position):
            return ReplacementResult(cancelled=True)
        manager = self._session.session_manager
        selected = manager.get_entry(entry_id)
        if selected is None:
            raise UsageError("Invalid entry ID for forking")
        selected_text = None
        if position == "at":
            target = selected.id
        else:
            if selected.type != "message" or selected.message.role != "user":
                raise UsageError("Invalid entry ID for forking")
            target = selected.parent_id
            selected_text = message_text(selected.message) or ""
        previous = self.session_file
        await self._session.shutdown("fork")
        if target is None:
            manager = SessionManager(self._session.cwd, parent_session=previous)
        else:
            manager.create_branched_session(target)
        await self._replace(manager, "fork", previous)
        return ReplacementResult(cancelled=False, selected_text=selected_text)

    async def switch_session(self, manager: SessionManager, session_file: str) -> ReplacementResult:
        """Pi's ``switchSession(path)``: the session read from ``session_file`` (``manager``) replaces this one."""
        if await self._before_switch("resume", session_file):
            return ReplacementResult(cancelled=True)
        previous = self.session_file
        await self._session.shutdown("resume", session_file)
        self.session_file = session_file
        await self._replace(manager, "resume", previous)
        return ReplacementResult(cancelled=False)
