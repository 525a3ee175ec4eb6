"""What an extension's ``pi`` actions and ``/commands`` do inside a session, as Pi 1.6.0's ``AgentSession``
binds them (``bindExtensions``, ``bindCore``, ``sendCustomMessage``, ``sendUserMessage``, ``appendEntry``, ...).

``ExtensionActionsMixin`` is part of ``pinb.app.session.AgentSession``, whose ``__init__`` creates the state used here.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from pinb.agent.eager import run_eagerly
from pinb.ai import CustomMessage, PiRecord
from pinb.ai.thinking import clamp_thinking_level
from pinb.app.extensions import events as ev
from pinb.app.extensions import results as rs
from pinb.app.extensions.context import ExtensionErrorRecord
from pinb.app.extensions.runner import ContextActions
from pinb.app.ui import ExtensionUI


class ThinkingLevelChangedEvent(PiRecord):
    """The thinking level changed."""

    type: Literal["thinking_level_changed"] = "thinking_level_changed"
    level: str


class ExtensionActionsMixin:
    """Binding extensions to the session, their actions, custom messages and ``/commands``."""

    if TYPE_CHECKING:
        agent: Any
        session_manager: Any
        extension_runner: Any
        cwd: str
        _is_emitting_agent_settled: bool
        _deferred_settled_actions: list[Callable[[], Any]]
        _pending_next_turn_messages: list[Any]
        _pending_custom_messages: list[Any]
        available_models: list[Any]

        @property
        def is_streaming(self) -> bool: ...
        @property
        def is_idle(self) -> bool: ...
        @property
        def pending_message_count(self) -> int: ...
        @property
        def system_prompt(self) -> str: ...
        def abort(self) -> Any: ...
        async def wait_for_idle(self) -> None: ...
        async def prompt(self, text: str, **kwargs: Any) -> None: ...
        def _emit(self, event: Any) -> None: ...
        def _spawn(self, awaitable: Awaitable[Any]) -> None: ...
        def _entry_appended(self, entry: Any) -> None: ...
        def _refresh_finalized_context(self) -> None: ...
        async def _start_run(self, trigger: dict[str, Any]) -> None: ...
        def get_active_tool_names(self) -> list[str]: ...
        def get_all_tools(self) -> list[Any]: ...
        def set_active_tools_by_name(self, tool_names: Any) -> None: ...

    async def bind_extensions(
        self,
        *,
        ui: ExtensionUI | None = None,
        mode: ev.ExtensionMode = "print",
        on_error: Callable[[ExtensionErrorRecord], None] | None = None,
        session_start_reason: str = "startup",
    ) -> None:
        """Give extensions their UI and mode, then emit ``session_start`` (and ``resources_discover``), as Pi does."""
        self.extension_runner.set_ui(ui, mode)
        if on_error is not None:
            self.extension_runner.on_error(on_error)
        await self.extension_runner.emit(ev.SessionStartEvent(reason=session_start_reason))  # type: ignore[arg-type]
        if self.extension_runner.has_handlers("resources_discover"):
            await self.extension_runner.emit_resources_discover(self.cwd, "startup")

    def bind_core(self) -> None:
        """Give extensions' ``pi`` actions and ``ctx`` reads their session implementations (Pi's ``bindCore``)."""
        runner = self.extension_runner
        runtime = runner.runtime

        def send_message(message: Any, *, trigger_turn: bool | None = None, deliver_as: str | None = None) -> None:
            try:
                pending = self._dispatch_custom_message(message, trigger_turn, deliver_as)
            except Exception as error:
                runner.emit_error(ExtensionErrorRecord("<runtime>", "send_message", str(error)))
                return
            if pending is not None:
                # `this.sendCustomMessage(...).catch(...)`: a run it starts begins at once, up to its first await.
                started = run_eagerly(self._reporting(pending, "send_message"))
                if not started.done():
                    self._spawn(started)

        def send_user_message(
            content: Any, *, deliver_as: str | None = None, expand_prompt_templates: bool = False
        ) -> None:
            def send() -> Any:
                return self.send_user_message(
                    content, deliver_as=deliver_as, expand_prompt_templates=expand_prompt_templates
                )

            if self._is_emitting_agent_settled:
                # Pi's prompt() defers itself synchronously here; its errors reach the settling prompt's caller.
                self._deferred_settled_actions.append(send)
                return
            # `this.sendUserMessage(...).catch(...)`: the prompt starts at once and runs up to its first suspension
            # (a message queued while streaming is in the queue before the calling handler returns); a failure is
            # reported by the catch, on a later turn of the scheduler, even when the prompt failed at once.
            started = run_eagerly(send())

            def report(outcome: asyncio.Future[Any]) -> None:
                if not outcome.cancelled() and outcome.exception() is not None:
                    error = ExtensionErrorRecord("<runtime>", "send_user_message", str(outcome.exception()))
                    runner.emit_error(error)

            if started.done():
                asyncio.get_running_loop().call_soon(report, started)
            else:
                started.add_done_callback(report)
                self._spawn(started)

        async def set_model(model: Any) -> bool:
            # The faux provider needs no credentials, so Pi's auth check always passes here.
            await self.set_model(model)
            return True

        runtime.send_message = send_message
        runtime.send_user_message = send_user_message
        runtime.append_entry = self.append_entry
        runtime.set_session_name = self.set_session_name
        runtime.get_session_name = self.session_manager.get_session_name
        runtime.set_label = lambda entry_id, label: self.session_manager.append_label_change(entry_id, label)
        runtime.get_active_tools = self.get_active_tool_names
        runtime.get_all_tools = self.get_all_tools
        runtime.set_active_tools = self.set_active_tools_by_name
        runtime.get_thinking_level = lambda: self.agent.state.thinking_level
        runtime.set_thinking_level = self.set_thinking_level
        runtime.set_model = set_model
        runner.bind_core(
            ContextActions(
                get_model=lambda: self.agent.state.model,
                is_idle=lambda: self.is_idle,
                get_signal=lambda: self.agent.signal,
                abort=lambda: self._spawn(self.abort()),
                has_pending_messages=lambda: self.pending_message_count > 0,
                get_system_prompt=lambda: self.system_prompt,
                wait_for_idle=self.wait_for_idle,
                find_model=self.find_model,
            )
        )

    async def _reporting(self, awaitable: Awaitable[Any], event: str) -> None:
        # Pi runs these actions with .catch(): a failure becomes a <runtime> error record, never an exception.
        try:
            await awaitable
        except Exception as error:
            self.extension_runner.emit_error(ExtensionErrorRecord("<runtime>", event, str(error)))

    def set_thinking_level(self, level: str) -> None:
        """Set the thinking level; a change is recorded and announced (``thinking_level_select`` to extensions)."""
        # Pi clamps the level to what the model supports (pi-ai's clampThinkingLevel).
        level = clamp_thinking_level(self.agent.state.model, level)
        previous = self.agent.state.thinking_level
        self.agent.state.thinking_level = level
        if level != previous:
            self.session_manager.append_thinking_level_change(level)
            self._emit(ThinkingLevelChangedEvent(level=level))
            # `void this._extensionRunner.emit(...)`: the handlers start at once, up to their first await.
            selected = ev.ThinkingLevelSelectEvent(level=level, previous_level=previous)
            pending = run_eagerly(self.extension_runner.emit(selected))
            if not pending.done():
                self._spawn(pending)

    def find_model(self, provider: str, model_id: str) -> Any:
        """The model the session's provider serves under this id (``ctx.model_registry.find``), or ``None``."""
        return next((m for m in self.available_models if m.provider == provider and m.id == model_id), None)

    async def set_model(self, model: Any) -> None:
        """Pi 1.6.0's ``setModel``: switch, record a ``model_change``, re-apply the thinking level (clamped to the
        new model) and, when the model differs, await the ``model_select`` handlers (source ``set``)."""
        previous = self.agent.state.model
        # _getThinkingLevelForModelSwitch: no per-model or default level in pinb's settings, so the current one.
        level = self.agent.state.thinking_level
        self.agent.state.model = model
        self.session_manager.append_model_change(model.provider, model.id)
        self.set_thinking_level(level)
        if previous is None or (previous.provider, previous.id) != (model.provider, model.id):
            await self.extension_runner.emit(ev.ModelSelectEvent(model=model, previous_model=previous, source="set"))

    def set_session_name(self, name: str) -> None:
        """Name the session (a ``session_info`` entry) and announce it to listeners and extensions."""
        self.session_manager.append_session_info(name)
        event = ev.SessionInfoChangedEvent(name=self.session_manager.get_session_name())
        self._emit(event)
        self._spawn(self.extension_runner.emit(event))

    def _command_of(self, text: str) -> tuple[Any, str, str]:
        space = text.find(" ")
        name = text[1:] if space == -1 else text[1:space]
        args = "" if space == -1 else text[space + 1 :]
        return self.extension_runner.get_command(name), name, args

    async def _try_execute_command(self, text: str) -> bool:
        """Run a registered ``/command`` at once, even while streaming; its errors are reported, not raised."""
        command, name, args = self._command_of(text)
        if command is None:
            return False
        try:
            outcome = command.handler(args, self.extension_runner.create_context())
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as error:
            self.extension_runner.emit_error(ExtensionErrorRecord(f"command:{name}", "command", str(error)))
        return True

    async def send_custom_message(
        self, message: Any, *, trigger_turn: bool | None = None, deliver_as: str | None = None
    ) -> None:
        """Pi's ``sendCustomMessage``: queue it, defer it to the end of the turn, start a run, or just append it."""
        pending = self._dispatch_custom_message(message, trigger_turn, deliver_as)
        if pending is not None:
            await pending

    def _dispatch_custom_message(
        self, message: Any, trigger_turn: bool | None, deliver_as: str | None
    ) -> Awaitable[None] | None:
        data = (
            rs.CustomMessageInput.model_validate(message) if not isinstance(message, rs.CustomMessageInput) else message
        )
        app_message = CustomMessage(
            custom_type=data.custom_type,
            content=data.content if data.content is not None else (),
            display=data.display,
            details=data.details,
        )
        if deliver_as == "nextTurn":
            self._pending_next_turn_messages.append(app_message)
        elif self.is_streaming and trigger_turn is not False:
            if deliver_as in ("followUp", "follow_up"):
                self.agent.follow_up(app_message)
            else:
                self.agent.steer(app_message)
        elif trigger_turn:
            if self._is_emitting_agent_settled:
                self._deferred_settled_actions.append(lambda: self.send_custom_message(message, trigger_turn=True))
                return None
            return self._start_run({"message_type": "custom", "message": app_message})
        elif self.is_streaming:
            # Appending now could split a tool call from its result; wait for the end of the turn.
            self._pending_custom_messages.append(app_message)
        else:
            self._append_custom_message(app_message)
        return None

    def _append_custom_message(self, message: CustomMessage) -> None:
        self.session_manager.append_custom_message_entry(
            message.custom_type, message.content, message.display, message.details
        )
        self._refresh_finalized_context()
        self._emit(ev.MessageStartEvent(message=message))
        self._emit(ev.MessageEndEvent(message=message))

    def _flush_pending_custom_messages(self) -> None:
        pending, self._pending_custom_messages = self._pending_custom_messages, []
        for message in pending:
            self._append_custom_message(message)

    async def send_user_message(
        self, content: Any, *, deliver_as: str | None = None, expand_prompt_templates: bool = False
    ) -> None:
        """Pi's ``sendUserMessage``: a prompt from an extension (``source`` "extension")."""
        if isinstance(content, str):
            text, images = content, None
        else:
            blocks = list(content)
            text = "\n".join(b.text for b in blocks if getattr(b, "type", None) == "text")
            images = [b for b in blocks if getattr(b, "type", None) != "text"] or None
        await self.prompt(
            text,
            images=images,
            streaming_behavior=deliver_as,  # type: ignore[arg-type]
            source="extension",
            expand_prompt_templates=expand_prompt_templates,
        )

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        entry_id = self.session_manager.append_custom_entry(custom_type, data)
        entry = self.session_manager.get_entry(entry_id)
        if entry is not None:
            self._entry_appended(entry)
