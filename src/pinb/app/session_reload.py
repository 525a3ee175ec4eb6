"""``reload``: Pi 1.6.0's ``AgentSession.reload()``: the extension runtime is torn down and built again.

``session_shutdown`` (reason ``reload``) reaches the old extensions, whose ``pi`` and ``ctx`` go stale; the same
extension factories run again (every handler registered afresh, with fresh state), the new runner gets the old
one's UI, mode and error listeners, and ``session_start`` (reason ``reload``) and ``resources_discover`` follow. The
session tree, the agent's messages, the model and the thinking level stay as they are. (Pi also reloads its settings
and resource files; the stand-in's are in memory and unchanged, so the system prompt is rebuilt from the same
sources.)
"""

from __future__ import annotations

from typing import Any

from pinb.app.extensions import events as ev
from pinb.app.extensions.api import load_extensions
from pinb.app.extensions.runner import ExtensionRunner
from pinb.app.ui import PromptEventUI
from pinb.errors import UsageError

__all__ = ["reload_session"]


async def reload_session(session: Any) -> None:
    """Pi's ``reload()`` on ``session`` (an ``AgentSession`` built by ``create_agent_session``)."""
    if session.is_streaming:
        raise UsageError("Wait for the current response to finish before reloading.")
    if session.is_compacting:
        raise UsageError("Wait for compaction to finish before reloading.")
    old: ExtensionRunner = session.extension_runner
    if old.has_handlers("session_shutdown"):  # Pi's emitSessionShutdownEvent
        await old.emit(ev.SessionShutdownEvent(reason="reload"))
    old.invalidate()
    loaded = await load_extensions(list(session.extension_factories))
    runner = ExtensionRunner(
        loaded.extensions,
        loaded.runtime,
        cwd=session.cwd,
        session_manager=session.session_manager,
        current_system_message=old._current_system_message,
    )
    # Pi's _applyExtensionBindings: the bindings given to bindExtensions() carry over to the new runner.
    runner.set_ui(old.ui.inner if isinstance(old.ui, PromptEventUI) else None, old.mode)
    for listener in old._error_listeners:
        runner.on_error(listener)
    session.extension_load_errors = list(loaded.errors)
    session.extension_runner = runner
    session.bind_core()
    await runner.emit(ev.SessionStartEvent(reason="reload"))
    if runner.has_handlers("resources_discover"):
        await runner.emit_resources_discover(session.cwd, "reload")
