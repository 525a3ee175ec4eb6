"""The extension runner: dispatch order, snapshot semantics, and each event's combine and error rule (Pi 1.6.0).

Every dispatch walks extensions in load order and, within one, handlers in registration order, over a snapshot of
the handler lists taken when the dispatch starts (so ``pi.on``/unsubscribe during a dispatch affect only later
dispatches). Handlers are awaited one at a time. Error policy per event, as in Pi: a raising ``tool_call`` handler
blocks the call (fails closed) and is *not* reported; a raising ``user_bash`` handler is reported and re-raised; every
other handler's error is reported to ``on_error`` listeners and dispatch goes on (fails open). A result of the wrong
shape counts as an error of that handler under the same rule.
"""

from __future__ import annotations

import asyncio
import copy
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from pinb.agent.types import resolve
from pinb.app.extensions import events as ev
from pinb.app.extensions import results as rs
from pinb.app.extensions.api import Extension, ExtensionRuntime
from pinb.app.extensions.context import ExtensionContext, ExtensionErrorRecord
from pinb.app.ui import NO_OP_UI, ExtensionUI, PromptEventUI
from pinb.errors import ExtensionError

STALE_CONTEXT = (
    "This extension ctx is stale after session replacement or reload. Do not use a captured pi or command ctx "
    "after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload(). For newSession, fork, and "
    "switchSession, move post-replacement work into withSession and use the ctx passed to withSession. For reload, "
    "do not use the old ctx after await ctx.reload()."
)
MESSAGE_END_ROLE_ERROR = "message_end handlers must return a message with the same role"
CONTEXT_WITH_SYSTEM_DROPPED = (
    "Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it "
    "at index 0 or replace a dropped prefix with getCurrentSystemMessage()."
)
USER_BASH_INVALID = (
    "Invalid user_bash handler result: return undefined for local execution or exactly one valid { operations } or "
    "{ result } object"
)
SESSION_BEFORE_EVENTS = frozenset(
    {"session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree"}
)
_SESSION_BEFORE_RESULTS: dict[str, type[BaseModel]] = {
    "session_before_switch": rs.SessionBeforeSwitchResult,
    "session_before_fork": rs.SessionBeforeForkResult,
    "session_before_compact": rs.SessionBeforeCompactResult,
    "session_before_tree": rs.SessionBeforeTreeResult,
}
_INPUT_RESULT: TypeAdapter[Any] = TypeAdapter(rs.InputEventResult)

ErrorListener = Callable[[ExtensionErrorRecord], None]


class InvalidHandlerResult(Exception):
    """A handler returned a value that is not its event's declared result."""


def role_of(message: Any) -> str | None:
    """A message's role, whether it is a pinb.ai model or a Pi-shaped dict."""
    if isinstance(message, dict):
        return message.get("role")
    return getattr(message, "role", None)


def coerce_result(value: Any, model: Any, event_type: str) -> Any:
    """``value`` as ``model`` (a model class or a ``TypeAdapter``); ``None`` stays ``None``."""
    if value is None:
        return None
    adapter = model if isinstance(model, TypeAdapter) else None
    if adapter is None and isinstance(value, model):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True, exclude_none=True)
    try:
        return adapter.validate_python(value) if adapter else model.model_validate(value)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or 'result'}: {item['msg']}" for item in error.errors()
        )
        raise InvalidHandlerResult(f"Invalid {event_type} handler result: {problems}") from None


async def call_handler(handler: Callable[..., Any], event: Any, ctx: Any) -> Any:
    """Call a sync or async handler and return its result."""
    return await resolve(handler(event, ctx))


def _stack(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


@dataclass
class ContextActions:
    """What ``ctx`` reads from the session; ``AgentSession`` binds real ones."""

    get_model: Callable[[], Any] = lambda: None
    is_idle: Callable[[], bool] = lambda: True
    get_signal: Callable[[], Any] = lambda: None
    abort: Callable[[], None] = lambda: None
    has_pending_messages: Callable[[], bool] = lambda: False
    shutdown: Callable[[], None] = lambda: None
    get_context_usage: Callable[[], Any] = lambda: None
    compact: Callable[[Any], None] = lambda _options: None
    get_system_prompt: Callable[[], str] = lambda: ""
    wait_for_idle: Callable[[], Awaitable[None]] | None = None
    find_model: Callable[[str, str], Any] = lambda _provider, _model_id: None


@dataclass(frozen=True)
class ProjectTrustOutcome:
    """The first yes/no decision (``None`` when every handler was undecided) and the errors, collected not reported."""

    result: rs.ProjectTrustEventResult | None
    errors: tuple[ExtensionErrorRecord, ...]


@dataclass(frozen=True)
class BeforeAgentStartOutcome:
    """Messages handlers injected, in order, and the run's prompt options (``force_system_prompt`` when replaced)."""

    messages: tuple[rs.CustomMessageInput, ...]
    system_prompt_options: Any


@dataclass(frozen=True)
class BoundaryOutcome:
    """What a ``turn_end``/``agent_before_settle`` dispatch proposes; an invalid draft discards the whole proposal."""

    entries: tuple[Any, ...]
    continue_: bool
    context: Any
    valid: bool


@dataclass(frozen=True)
class ResourcePaths:
    skill_paths: tuple[tuple[str, str], ...] = ()
    prompt_paths: tuple[tuple[str, str], ...] = ()
    theme_paths: tuple[tuple[str, str], ...] = ()


class ExtensionRunner:
    """Runs loaded extensions' handlers for one session."""

    def __init__(
        self,
        extensions: Sequence[Extension],
        runtime: ExtensionRuntime | None = None,
        *,
        cwd: str = "/",
        session_manager: Any = None,
        current_system_message: Callable[[Sequence[Any]], Any] | None = None,
    ) -> None:
        self.extensions = list(extensions)
        self.runtime = runtime or ExtensionRuntime()
        self.cwd = cwd
        self.session_manager = session_manager
        self.actions = ContextActions()
        self.mode = "print"
        self.ui: ExtensionUI = NO_OP_UI
        self._error_listeners: list[ErrorListener] = []
        self._stale_message: str | None = None
        self._current_system_message = current_system_message or _first_system_message
        self._pending_prompt_events: list[asyncio.Task[Any]] = []

    # --- binding ---

    def bind_core(self, actions: ContextActions) -> None:
        self.actions = actions

    def set_ui(self, ui: ExtensionUI | None, mode: str = "print") -> None:
        """Give handlers a UI (``None``: Pi's no-op UI, ``ctx.has_ui`` false) and the run mode."""
        self.ui = PromptEventUI(ui, self._announce_prompt) if ui is not None else NO_OP_UI
        self.mode = mode

    def has_ui(self) -> bool:
        return self.ui is not NO_OP_UI

    def _announce_prompt(self, kind: str, title: str | None, starting: bool) -> None:
        # Pi emits ui_prompt_start/end from a microtask: the dispatch starts once the dialog's caller yields.
        model = ev.UIPromptStartEvent if starting else ev.UIPromptEndEvent
        event = model(kind=kind, title=title)  # type: ignore[arg-type]
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._pending_prompt_events.append(loop.create_task(self.emit(event)))

    def invalidate(self, message: str = STALE_CONTEXT) -> None:
        if not self._stale_message:
            self._stale_message = message
            self.runtime.stale_message = message

    def assert_active(self) -> None:
        if self._stale_message:
            raise ExtensionError(self._stale_message)

    def create_context(self, **overrides: Callable[..., Any]) -> ExtensionContext:
        return ExtensionContext(self, overrides)

    # --- errors ---

    def on_error(self, listener: ErrorListener) -> Callable[[], None]:
        """Receive every reported extension error as an ``ExtensionErrorRecord``; returns the unsubscribe function."""
        self._error_listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._error_listeners:
                self._error_listeners.remove(listener)

        return unsubscribe

    def emit_error(self, record: ExtensionErrorRecord) -> None:
        if self._stale_message:
            return
        for listener in list(self._error_listeners):
            listener(record)

    def _report(self, ext: Extension, event_type: str, error: BaseException, prefix: str = "") -> None:
        self.emit_error(ExtensionErrorRecord(ext.path, event_type, f"{prefix}{error}", _stack(error)))

    # --- dispatch helpers ---

    def get_command(self, name: str) -> Any:
        """The command invoked as ``/name``; a name several extensions register is ``name:1``, ``name:2``, ..."""
        commands = [command for ext in self.extensions for command in ext.commands.values()]
        counts: dict[str, int] = {}
        for command in commands:
            counts[command.name] = counts.get(command.name, 0) + 1
        seen: dict[str, int] = {}
        taken: set[str] = set()
        for command in commands:
            occurrence = seen[command.name] = seen.get(command.name, 0) + 1
            invocation = f"{command.name}:{occurrence}" if counts[command.name] > 1 else command.name
            suffix = occurrence
            while invocation in taken:
                suffix += 1
                invocation = f"{command.name}:{suffix}"
            taken.add(invocation)
            if invocation == name:
                return command
        return None

    def has_handlers(self, event_type: str) -> bool:
        return any(ext.handlers.get(event_type) for ext in self.extensions)

    def _snapshot(self, event_type: str) -> list[tuple[Extension, Callable[..., Any]]]:
        """Every handler of ``event_type`` with its extension, in dispatch order, as registered right now."""
        return [(ext, handler) for ext in self.extensions for handler in ext.handlers.get(event_type, ())]

    # --- generic notification (and session_before_* cancel) ---

    async def emit(self, event: Any) -> Any:
        """Notify every handler. For ``session_before_*`` events the last result is returned and the first
        ``cancel`` stops the dispatch; for every other event return values have no effect (as in Pi)."""
        ctx = self.create_context()
        result = None
        event_type = event.type
        for ext, handler in self._snapshot(event_type):
            try:
                value = await call_handler(handler, event, ctx)
                # JavaScript's `await handler(...)` always yields, even to a value: dispatches started together
                # (a tool's synchronous progress updates) interleave handler by handler, as in Pi.
                await asyncio.sleep(0)
                if event_type in SESSION_BEFORE_EVENTS and value:
                    result = coerce_result(value, _SESSION_BEFORE_RESULTS[event_type], event_type)
                    if result.cancel:
                        return result
            except Exception as error:
                self._report(ext, event_type, error)
        return result

    async def drain_prompt_events(self) -> None:
        """Wait for UI prompt notifications scheduled so far (tests and orderly shutdown)."""
        await asyncio.sleep(0)
        while self._pending_prompt_events:
            pending, self._pending_prompt_events = self._pending_prompt_events, []
            await asyncio.gather(*pending)
            await asyncio.sleep(0)

    # --- project_trust: first to decide owns it; errors collected, not reported ---

    async def emit_project_trust(self, event: ev.ProjectTrustEvent, ctx: Any = None) -> ProjectTrustOutcome:
        ctx = ctx if ctx is not None else self.create_context()
        errors: list[ExtensionErrorRecord] = []
        for ext, handler in self._snapshot("project_trust"):
            try:
                value = await call_handler(handler, event, ctx)
                if value is None:
                    raise InvalidHandlerResult(
                        'Invalid project_trust handler result: return { trusted: "yes" | "no" | "undecided" }'
                    )
                result = coerce_result(value, rs.ProjectTrustEventResult, "project_trust")
                if result.trusted == "undecided":
                    continue
                return ProjectTrustOutcome(result, tuple(errors))
            except Exception as error:
                errors.append(ExtensionErrorRecord(ext.path, "project_trust", str(error), _stack(error)))
        return ProjectTrustOutcome(None, tuple(errors))

    # --- input: transforms chain, "handled" short-circuits ---

    async def emit_input(
        self, text: str, images: tuple[Any, ...] | None, source: str, streaming_behavior: str | None
    ) -> rs.InputContinue | rs.InputTransform | rs.InputHandled:
        ctx = self.create_context()
        current_text, current_images = text, images
        for ext, handler in self._snapshot("input"):
            try:
                event = ev.InputEvent(
                    text=current_text,
                    images=current_images,
                    source=source,  # type: ignore[arg-type]
                    streaming_behavior=streaming_behavior,  # type: ignore[arg-type]
                )
                result = coerce_result(await call_handler(handler, event, ctx), _INPUT_RESULT, "input")
                await asyncio.sleep(0)  # `await handler(...)` yields, as in emit()
                if isinstance(result, rs.InputHandled):
                    return result
                if isinstance(result, rs.InputTransform):
                    current_text = result.text
                    current_images = result.images if result.images is not None else current_images
            except Exception as error:
                self._report(ext, "input", error)
        if current_text != text or current_images is not images:
            return rs.InputTransform(text=current_text, images=current_images)
        return rs.InputContinue()

    # --- before_agent_start: messages accumulate; systemPrompt forces the run's prompt ---

    async def emit_before_agent_start(
        self,
        trigger: dict[str, Any],
        system_prompt_options: Any,
        render_system_prompt: Callable[[Any], str],
    ) -> BeforeAgentStartOutcome:
        # Handlers share one copy of the options: later handlers observe earlier handlers' edits, the base stays.
        options = copy.deepcopy(system_prompt_options)
        ctx = self.create_context(get_system_prompt=lambda: render_system_prompt(options))
        messages: list[rs.CustomMessageInput] = []
        for ext, handler in self._snapshot("before_agent_start"):
            try:
                event = ev.BeforeAgentStartEvent(
                    **trigger, system_prompt=render_system_prompt(options), system_prompt_options=options
                )
                value = await call_handler(handler, event, ctx)
                await asyncio.sleep(0)  # `await handler(...)` yields, as in emit()
                result = coerce_result(value, rs.BeforeAgentStartEventResult, "before_agent_start")
                if result is None:
                    continue
                if result.message is not None:
                    messages.append(result.message)
                if result.system_prompt is not None:
                    _set_option(options, "force_system_prompt", result.system_prompt)
            except Exception as error:
                self._report(ext, "before_agent_start", error)
        return BeforeAgentStartOutcome(tuple(messages), options)

    # --- context, then context_with_system ---

    async def emit_context(self, messages: Sequence[Any]) -> list[Any]:
        ctx = self.create_context()
        current = list(messages)
        for ext, handler in self._snapshot("context"):
            try:
                visible = [m for m in current if role_of(m) != "system"]
                snapshot = list(visible)
                value = await call_handler(handler, ev.ContextEvent(messages=visible), ctx)
                result = coerce_result(value, rs.ContextEventResult, "context")
                returned = result.messages if result is not None and result.messages is not None else None
                if returned is None and not _same_messages(visible, snapshot):
                    returned = visible  # edited in place
                if returned is None:
                    continue
                current = self._restore_system_messages(current, snapshot, list(returned))
            except Exception as error:
                self._report(ext, "context", error)
        for ext, handler in self._snapshot("context_with_system"):
            try:
                had_leading_system = bool(current) and role_of(current[0]) == "system"
                value = await call_handler(handler, ev.ContextWithSystemEvent(messages=current), ctx)
                result = coerce_result(value, rs.ContextEventResult, "context_with_system")
                if result is not None and result.messages is not None:
                    current = list(result.messages)
                if had_leading_system and (not current or role_of(current[0]) != "system"):
                    self.emit_error(ExtensionErrorRecord(ext.path, "context_with_system", CONTEXT_WITH_SYSTEM_DROPPED))
            except Exception as error:
                self._report(ext, "context_with_system", error)
        return current

    def _restore_system_messages(self, current: list[Any], visible: list[Any], returned: list[Any]) -> list[Any]:
        # Unchanged conversation: keep every system message where it was (cached prefixes survive).
        if _same_messages(returned, visible):
            return current
        head = self._current_system_message(current)
        return [head, *returned] if head is not None else returned

    # --- tool_call: first block wins; a raise propagates (the caller blocks the call) ---

    async def emit_tool_call(self, event: ev.ToolCallEvent) -> rs.ToolCallEventResult | None:
        ctx = self.create_context()
        result: rs.ToolCallEventResult | None = None
        for _ext, handler in self._snapshot("tool_call"):
            value = await call_handler(handler, event, ctx)
            coerced = coerce_result(value, rs.ToolCallEventResult, "tool_call")
            if coerced is not None:
                result = coerced
                if result.block:
                    return result
        return result

    # --- tool_result: field patches compose; a raise is reported and skipped ---

    async def emit_tool_result(self, event: ev.ToolResultEvent) -> rs.ToolResultEventResult | None:
        ctx = self.create_context()
        current = event
        modified = False
        for ext, handler in self._snapshot("tool_result"):
            try:
                value = await call_handler(handler, current, ctx)
                patch = coerce_result(value, rs.ToolResultEventResult, "tool_result")
                if patch is None:
                    continue
                update: dict[str, Any] = {}
                if patch.content is not None:
                    update["content"] = patch.content
                    if patch.structured_content is None:
                        update["structured_content"] = None
                for name in ("details", "structured_content", "is_error", "usage"):
                    if getattr(patch, name) is not None:
                        update[name] = getattr(patch, name)
                if update:
                    current = current.model_copy(update=update)
                    modified = True
            except Exception as error:
                self._report(ext, "tool_result", error)
        if not modified:
            return None
        return rs.ToolResultEventResult(
            content=current.content,
            details=current.details,
            structured_content=current.structured_content,
            is_error=current.is_error,
            usage=current.usage,
        )

    # --- message_end: replace, same role only ---

    async def emit_message_end(
        self, event: ev.MessageEndEvent, validate_message: Callable[[Any], Any] | None = None
    ) -> Any:
        ctx = self.create_context()
        current = event.message
        modified = False
        for ext, handler in self._snapshot("message_end"):
            try:
                value = await call_handler(handler, event.model_copy(update={"message": current}), ctx)
                result = coerce_result(value, rs.MessageEndEventResult, "message_end")
                if result is None or not result.message:
                    continue
                if role_of(result.message) != role_of(current):
                    self.emit_error(ExtensionErrorRecord(ext.path, "message_end", MESSAGE_END_ROLE_ERROR))
                    continue
                current = validate_message(result.message) if validate_message else result.message
                modified = True
            except Exception as error:
                self._report(ext, "message_end", error)
        return current if modified else None

    # --- turn_end / agent_before_settle boundaries ---

    async def emit_boundary(
        self,
        event_model: type[ev.TurnEndEvent] | type[ev.AgentBeforeSettleEvent],
        base: dict[str, Any],
        build_context: Callable[[tuple[Any, ...]], Any | Awaitable[Any]],
    ) -> BoundaryOutcome:
        """Each handler sees the proposal so far; after each, the preview is rebuilt from the proposed entries.
        If the last rebuild fails, the whole proposal (entries and continue) is discarded."""
        event_type = event_model.model_fields["type"].default
        ctx = self.create_context()
        entries: tuple[Any, ...] = ()
        should_continue = False
        context = await resolve(build_context(entries))
        valid = True
        for ext, handler in self._snapshot(event_type):
            event = event_model(**base, entries=entries, continue_=should_continue, context=context)
            try:
                value = await call_handler(handler, event, ctx)
                await asyncio.sleep(0)  # `await handler(...)` yields, as in emit()
                result = coerce_result(value, rs.BoundaryResult, event_type)
                if result is not None and result.entries is not None:
                    entries = tuple(result.entries)
                if result is not None and result.continue_ is not None:
                    should_continue = result.continue_
            except Exception as error:
                self._report(ext, event_type, error)
            try:
                context = await resolve(build_context(entries))
                valid = True
            except Exception as error:
                valid = False
                self._report(ext, event_type, error, prefix="Invalid boundary entries: ")
        if valid:
            return BoundaryOutcome(entries, should_continue, context, True)
        return BoundaryOutcome((), False, context, False)

    # --- user_bash: first valid result wins; errors are reported and re-raised ---

    async def emit_user_bash(self, event: ev.UserBashEvent) -> rs.UserBashEventResult | None:
        ctx = self.create_context()
        for ext, handler in self._snapshot("user_bash"):
            try:
                value = await call_handler(handler, event, ctx)
                if value is None:
                    continue
                return _user_bash_result(value)
            except Exception as error:
                self._report(ext, "user_bash", error)
                raise
        return None

    # --- smaller combiners ---

    async def emit_resources_discover(self, cwd: str, reason: str) -> ResourcePaths:
        ctx = self.create_context()
        skills: list[tuple[str, str]] = []
        prompts: list[tuple[str, str]] = []
        themes: list[tuple[str, str]] = []
        for ext, handler in self._snapshot("resources_discover"):
            try:
                event = ev.ResourcesDiscoverEvent(cwd=cwd, reason=reason)  # type: ignore[arg-type]
                value = await call_handler(handler, event, ctx)
                result = coerce_result(value, rs.ResourcesDiscoverResult, "resources_discover")
                if result is None:
                    continue
                skills += [(path, ext.path) for path in result.skill_paths or ()]
                prompts += [(path, ext.path) for path in result.prompt_paths or ()]
                themes += [(path, ext.path) for path in result.theme_paths or ()]
            except Exception as error:
                self._report(ext, "resources_discover", error)
        return ResourcePaths(tuple(skills), tuple(prompts), tuple(themes))

    async def emit_before_provider_request(self, payload: Any) -> Any:
        ctx = self.create_context()
        current = payload
        for ext, handler in self._snapshot("before_provider_request"):
            try:
                value = await call_handler(handler, ev.BeforeProviderRequestEvent(payload=current), ctx)
                if value is not None:
                    current = value
            except Exception as error:
                self._report(ext, "before_provider_request", error)
        return current

    async def emit_cache_warming_decision(self, event: ev.CacheWarmingDecisionEvent) -> Any:
        ctx = self.create_context()
        action = event.action
        for ext, handler in self._snapshot("cache_warming_decision"):
            try:
                value = await call_handler(handler, event, ctx)
                result = coerce_result(value, rs.CacheWarmingDecisionEventResult, "cache_warming_decision")
                if result is not None and result.action is not None:
                    action = result.action
            except Exception as error:
                self._report(ext, "cache_warming_decision", error)
        return action


def _user_bash_result(value: Any) -> rs.UserBashEventResult:
    if isinstance(value, rs.UserBashEventResult):
        candidate = value
    else:
        try:
            candidate = coerce_result(value, rs.UserBashEventResult, "user_bash")
        except InvalidHandlerResult:
            raise InvalidHandlerResult(USER_BASH_INVALID) from None
    has_operations = candidate.operations is not None
    has_result = candidate.result is not None
    if has_operations == has_result:
        raise InvalidHandlerResult(USER_BASH_INVALID)
    if has_operations and not callable(getattr(candidate.operations, "exec", None)):
        raise InvalidHandlerResult(USER_BASH_INVALID)
    return candidate


def _set_option(options: Any, name: str, value: Any) -> None:
    if isinstance(options, dict):
        options[name] = value
    else:
        setattr(options, name, value)


def _same_messages(left: Sequence[Any], right: Sequence[Any]) -> bool:
    return len(left) == len(right) and all(a is b for a, b in zip(left, right, strict=True))


def _first_system_message(messages: Sequence[Any]) -> Any:
    """Fallback when no folding function is given: the first system message."""
    return next((m for m in messages if role_of(m) == "system"), None)
