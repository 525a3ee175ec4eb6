"""What an extension factory receives (``ExtensionAPI``) and what loading it produces (``Extension``).

An extension is a Python callable ``factory(pi: ExtensionAPI)`` (sync or async), like Pi's default-exported
function. ``pi.on(event, handler)`` registers a handler and returns its unsubscribe function; registration methods
write to the extension, action methods go to the session through an ``ExtensionRuntime`` the session binds later
(calling them while extensions load fails with Pi's message).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from pinb.app.extensions import events as ev
from pinb.app.extensions import results as rs
from pinb.app.extensions.events import EVENT_MODELS
from pinb.errors import ExtensionError

if TYPE_CHECKING:
    from pinb.app.extensions.context import ExtensionContext

E = TypeVar("E")
R = TypeVar("R")
#: A handler: ``(event, ctx)`` returning the event's declared result (or a Pi-shaped dict), or ``None``; sync or async.
Handler = Callable[[E, "ExtensionContext"], R | Awaitable[R | None] | None]
Unsubscribe = Callable[[], None]

NOT_INITIALIZED = "Extension runtime not initialized. Action methods cannot be called during extension loading."


@dataclass
class RegisteredTool:
    """A tool an extension registered: Pi's ``ToolDefinition`` fields pinb uses."""

    name: str
    description: str
    parameters: dict[str, Any]
    execute: Callable[..., Any]
    label: str | None = None
    execution_mode: Literal["parallel", "sequential"] | None = None
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] = ()
    extension_path: str = "<inline>"


@dataclass
class RegisteredCommand:
    """A ``/name`` command: ``handler(args, ctx)``, sync or async."""

    name: str
    handler: Callable[..., Any]
    description: str | None = None
    extension_path: str = "<inline>"


@dataclass
class Extension:
    """One loaded extension: its path (pinb: its name), handlers per event in registration order, tools, commands."""

    path: str
    handlers: dict[str, list[Callable[..., Any]]] = field(default_factory=dict)
    tools: dict[str, RegisteredTool] = field(default_factory=dict)
    commands: dict[str, RegisteredCommand] = field(default_factory=dict)


def _not_initialized(*_args: Any, **_kwargs: Any) -> Any:
    raise ExtensionError(NOT_INITIALIZED)


class ExtensionRuntime:
    """The action methods every extension's API delegates to; ``AgentSession`` replaces them when it binds."""

    def __init__(self) -> None:
        self.send_message: Callable[..., None] = _not_initialized
        self.send_user_message: Callable[..., None] = _not_initialized
        self.append_entry: Callable[[str, Any], None] = _not_initialized
        self.set_session_name: Callable[[str], None] = _not_initialized
        self.get_session_name: Callable[[], str | None] = _not_initialized
        self.set_label: Callable[[str, str | None], None] = _not_initialized
        self.get_active_tools: Callable[[], list[str]] = _not_initialized
        self.get_all_tools: Callable[[], list[Any]] = _not_initialized
        self.set_active_tools: Callable[[Sequence[str]], None] = _not_initialized
        self.refresh_tools: Callable[[], None] = lambda: None
        self.get_thinking_level: Callable[[], str] = _not_initialized
        self.set_thinking_level: Callable[[str], None] = _not_initialized
        self.set_model: Callable[[Any], Awaitable[bool]] = _not_initialized
        self.stale_message: str | None = None

    def assert_active(self) -> None:
        if self.stale_message:
            raise ExtensionError(self.stale_message)


class ExtensionAPI:
    """The ``pi`` object an extension factory receives."""

    def __init__(self, extension: Extension, runtime: ExtensionRuntime) -> None:
        self._extension = extension
        self._runtime = runtime

    # One overload per event name, so a handler returning the wrong result type is a type error.
    @overload
    def on(
        self, event: Literal["project_trust"], handler: Handler[ev.ProjectTrustEvent, rs.ProjectTrustEventResult]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self,
        event: Literal["resources_discover"],
        handler: Handler[ev.ResourcesDiscoverEvent, rs.ResourcesDiscoverResult],
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["mcp_servers_change"], handler: Handler[ev.McpServersChangeEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["session_start"], handler: Handler[ev.SessionStartEvent, None]) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["session_info_changed"], handler: Handler[ev.SessionInfoChangedEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self,
        event: Literal["session_before_switch"],
        handler: Handler[ev.SessionBeforeSwitchEvent, rs.SessionBeforeSwitchResult],
    ) -> Unsubscribe: ...
    @overload
    def on(
        self,
        event: Literal["session_before_fork"],
        handler: Handler[ev.SessionBeforeForkEvent, rs.SessionBeforeForkResult],
    ) -> Unsubscribe: ...
    @overload
    def on(
        self,
        event: Literal["session_before_compact"],
        handler: Handler[ev.SessionBeforeCompactEvent, rs.SessionBeforeCompactResult],
    ) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["session_compact"], handler: Handler[ev.SessionCompactEvent, None]) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["session_compact_failed"], handler: Handler[ev.SessionCompactFailedEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["session_shutdown"], handler: Handler[ev.SessionShutdownEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self,
        event: Literal["session_before_tree"],
        handler: Handler[ev.SessionBeforeTreeEvent, rs.SessionBeforeTreeResult],
    ) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["session_tree"], handler: Handler[ev.SessionTreeEvent, None]) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["context"], handler: Handler[ev.ContextEvent, rs.ContextEventResult]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["context_with_system"], handler: Handler[ev.ContextWithSystemEvent, rs.ContextEventResult]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["before_provider_request"], handler: Handler[ev.BeforeProviderRequestEvent, Any]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["before_provider_headers"], handler: Handler[ev.BeforeProviderHeadersEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["after_provider_response"], handler: Handler[ev.AfterProviderResponseEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["provider_stream_event"], handler: Handler[ev.ProviderStreamEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self,
        event: Literal["cache_warming_decision"],
        handler: Handler[ev.CacheWarmingDecisionEvent, rs.CacheWarmingDecisionEventResult],
    ) -> Unsubscribe: ...
    @overload
    def on(
        self,
        event: Literal["before_agent_start"],
        handler: Handler[ev.BeforeAgentStartEvent, rs.BeforeAgentStartEventResult],
    ) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["agent_start"], handler: Handler[ev.AgentStartEvent, None]) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["agent_end"], handler: Handler[ev.AgentEndEvent, None]) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["agent_before_settle"], handler: Handler[ev.AgentBeforeSettleEvent, rs.BoundaryResult]
    ) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["agent_settled"], handler: Handler[ev.AgentSettledEvent, None]) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["ui_prompt_start"], handler: Handler[ev.UIPromptStartEvent, None]) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["ui_prompt_end"], handler: Handler[ev.UIPromptEndEvent, None]) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["turn_start"], handler: Handler[ev.TurnStartEvent, None]) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["turn_end"], handler: Handler[ev.TurnEndEvent, rs.BoundaryResult]) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["message_start"], handler: Handler[ev.MessageStartEvent, None]) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["message_update"], handler: Handler[ev.MessageUpdateEvent, None]) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["message_end"], handler: Handler[ev.MessageEndEvent, rs.MessageEndEventResult]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["tool_execution_start"], handler: Handler[ev.ToolExecutionStartEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["tool_execution_update"], handler: Handler[ev.ToolExecutionUpdateEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["tool_execution_end"], handler: Handler[ev.ToolExecutionEndEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["model_select"], handler: Handler[ev.ModelSelectEvent, None]) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["thinking_level_select"], handler: Handler[ev.ThinkingLevelSelectEvent, None]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["user_bash"], handler: Handler[ev.UserBashEvent, rs.UserBashEventResult]
    ) -> Unsubscribe: ...
    @overload
    def on(self, event: Literal["input"], handler: Handler[ev.InputEvent, rs.InputEventResult]) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["tool_call"], handler: Handler[ev.ToolCallEvent, rs.ToolCallEventResult]
    ) -> Unsubscribe: ...
    @overload
    def on(
        self, event: Literal["tool_result"], handler: Handler[ev.ToolResultEvent, rs.ToolResultEventResult]
    ) -> Unsubscribe: ...
    def on(self, event: str, handler: Callable[..., Any]) -> Unsubscribe:
        """Register ``handler`` for ``event``; returns the function that unregisters this registration only.

        Unregistering (or registering) during a dispatch does not change that dispatch: each dispatch works on a
        snapshot of the handler lists taken when it starts.
        """
        self._runtime.assert_active()
        if event not in EVENT_MODELS:
            raise ExtensionError(
                f'Unknown extension event "{event}" (extension "{self._extension.path}"). '
                f"Known events: {', '.join(sorted(EVENT_MODELS))}."
            )
        if not callable(handler):
            raise ExtensionError(
                f'Handler for "{event}" registered by extension "{self._extension.path}" is not callable.'
            )

        # A fresh wrapper per registration, so registering one function twice gives two independent entries.
        def registered(event_obj: Any, ctx: Any) -> Any:
            return handler(event_obj, ctx)

        registered.__wrapped__ = handler  # type: ignore[attr-defined]
        handlers = self._extension.handlers.setdefault(event, [])
        handlers.append(registered)

        def unsubscribe() -> None:
            current = self._extension.handlers.get(event)
            if current is None or registered not in current:
                return
            current.remove(registered)
            if not current:
                del self._extension.handlers[event]

        return unsubscribe

    def register_tool(
        self,
        *,
        name: str,
        description: str,
        parameters: dict[str, Any],
        execute: Callable[..., Any],
        label: str | None = None,
        execution_mode: Literal["parallel", "sequential"] | None = None,
        prompt_snippet: str | None = None,
        prompt_guidelines: Sequence[str] = (),
    ) -> None:
        """Register a tool; ``execute(tool_call_id, params, signal, on_update, ctx)`` may be sync or async."""
        self._runtime.assert_active()
        if not isinstance(parameters, dict):
            raise ExtensionError(
                f'Tool "{name}" registered by extension "{self._extension.path}" '
                "must define an object parameter schema."
            )
        self._extension.tools[name] = RegisteredTool(
            name=name,
            description=description,
            parameters=parameters,
            execute=execute,
            label=label,
            execution_mode=execution_mode,
            prompt_snippet=prompt_snippet,
            prompt_guidelines=tuple(prompt_guidelines),
            extension_path=self._extension.path,
        )
        self._runtime.refresh_tools()

    def register_command(self, name: str, *, handler: Callable[..., Any], description: str | None = None) -> None:
        """Register ``/name``: a prompt starting with it runs ``handler(args, ctx)`` instead of the model."""
        self._runtime.assert_active()
        if not isinstance(name, str) or not name:
            raise ExtensionError(
                f'Command registered by extension "{self._extension.path}" must have a non-empty string name. '
                'Use pi.registerCommand("name", { description, handler }).'
            )
        if not callable(handler):
            raise ExtensionError(
                f'Command "/{name}" registered by extension "{self._extension.path}" must define handler().'
            )
        self._extension.commands[name] = RegisteredCommand(name, handler, description, self._extension.path)

    # --- actions (delegated to the bound session) ---

    def send_message(self, message: Any, *, trigger_turn: bool | None = None, deliver_as: str | None = None) -> None:
        """Send a custom message (``{custom_type, content, display, details}``); see
        ``AgentSession.send_custom_message``."""
        self._runtime.assert_active()
        self._runtime.send_message(message, trigger_turn=trigger_turn, deliver_as=deliver_as)

    def send_user_message(
        self, content: Any, *, deliver_as: str | None = None, expand_prompt_templates: bool = False
    ) -> None:
        """Send a user message; it always starts (or, while streaming, queues) a turn. With
        ``expand_prompt_templates`` it may run an extension command or expand a prompt template instead."""
        self._runtime.assert_active()
        if expand_prompt_templates:
            self._runtime.send_user_message(content, deliver_as=deliver_as, expand_prompt_templates=True)
        else:
            self._runtime.send_user_message(content, deliver_as=deliver_as)

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        """Append a ``custom`` entry (extension state; never sent to the model)."""
        self._runtime.assert_active()
        self._runtime.append_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._runtime.assert_active()
        self._runtime.set_session_name(name)

    def get_session_name(self) -> str | None:
        self._runtime.assert_active()
        return self._runtime.get_session_name()

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._runtime.assert_active()
        self._runtime.set_label(entry_id, label)

    def get_active_tools(self) -> list[str]:
        self._runtime.assert_active()
        return self._runtime.get_active_tools()

    def get_all_tools(self) -> list[Any]:
        self._runtime.assert_active()
        return self._runtime.get_all_tools()

    def set_active_tools(self, tool_names: Sequence[str]) -> None:
        """Set the active tools by name (unknown names are ignored); takes effect on the next turn."""
        self._runtime.assert_active()
        self._runtime.set_active_tools(tool_names)

    def get_thinking_level(self) -> str:
        self._runtime.assert_active()
        return self._runtime.get_thinking_level()

    def set_thinking_level(self, level: str) -> None:
        self._runtime.assert_active()
        self._runtime.set_thinking_level(level)

    async def set_model(self, model: Any) -> bool:
        """Switch the session's model (recorded, announced as ``model_select``); ``False`` without auth."""
        self._runtime.assert_active()
        return await self._runtime.set_model(model)


ExtensionFactory = Callable[[ExtensionAPI], Awaitable[None] | None]


@dataclass(frozen=True)
class ExtensionLoadError:
    """An extension that failed to load, with Pi's message."""

    path: str
    error: str


@dataclass
class LoadExtensionsResult:
    """Extensions in load order, the ones that failed, and the runtime they share."""

    extensions: list[Extension]
    errors: list[ExtensionLoadError]
    runtime: ExtensionRuntime


async def load_extensions(
    factories: Sequence[tuple[str, ExtensionFactory]], runtime: ExtensionRuntime | None = None
) -> LoadExtensionsResult:
    """Run each ``(name, factory)`` in order. A factory that raises loads nothing (Pi discards its registrations)."""
    runtime = runtime or ExtensionRuntime()
    extensions: list[Extension] = []
    errors: list[ExtensionLoadError] = []
    for path, factory in factories:
        extension = Extension(path=path)
        if not callable(factory):
            errors.append(ExtensionLoadError(path, f"Extension does not export a valid factory function: {path}"))
            continue
        try:
            outcome = factory(ExtensionAPI(extension, runtime))
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as error:
            errors.append(ExtensionLoadError(path, f"Failed to load extension: {error}"))
            continue
        extensions.append(extension)
    return LoadExtensionsResult(extensions, errors, runtime)
