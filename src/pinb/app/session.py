"""``AgentSession``: Pi 1.6.0's application session over ``pinb.agent.Agent``, wired the way Pi wires its Agent.

The session subscribes to the Agent and, for every agent event, runs the extension handlers first and then its own
public listeners (``subscribe``), then persists finalised messages in the session tree. It installs the Agent hooks
Pi installs: ``before_tool_call`` → ``tool_call``, ``after_tool_call`` → ``tool_result``, ``transform_context`` →
``context``/``context_with_system`` (plus a forced system prompt), ``prepare_request`` → the session projection,
``finish_turn`` → the ``turn_end`` boundary. A prompt runs to *settlement*: after ``agent_end``, transient errors are
retried and queued follow-ups run, then ``agent_before_settle`` (extensions only) may add entries and continue, and
``agent_settled`` fires once at the true end. Messages are frozen models; where Pi replaces a message object in place
(``message_end``) the session rewrites the frozen object's fields so the Agent's state, later events and persistence
all see it.

The class is assembled from one-job parts: ``extensions/wiring.py`` (agent hooks and events),
``extensions/actions.py`` (binding, ``pi`` actions, custom messages, ``/commands``), ``extensions/user_commands.py``
(``/compact``, ``!command``) and ``settlement.py`` (the run, boundaries, retry, ``agent_settled``). This module keeps
state, prompting, queues, abort and construction (``create_agent_session``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pinb.agent import (
    Agent,
    AgentTool,
)
from pinb.agent.agent import AgentInitialState
from pinb.ai import (
    DEFAULT_MODEL,
    Model,
    PiRecord,
    TextContent,
    UserMessage,
)
from pinb.ai.abort import AbortController
from pinb.ai.thinking import clamp_thinking_level
from pinb.ai.transcript import get_current_system_message
from pinb.app.extensions import events as ev
from pinb.app.extensions import results as rs
from pinb.app.extensions.actions import ExtensionActionsMixin
from pinb.app.extensions.api import ExtensionFactory, RegisteredTool, load_extensions
from pinb.app.extensions.context import ExtensionErrorRecord
from pinb.app.extensions.runner import ExtensionRunner
from pinb.app.extensions.user_commands import UserCommandsMixin
from pinb.app.extensions.wiring import AgentWiringMixin
from pinb.app.prompt_templates import PromptTemplate, expand_prompt_template, load_prompt_templates
from pinb.app.recovery import RecoveryMixin
from pinb.app.resources import LoadedResources, Skill, Workspace, load_resources, parse_frontmatter
from pinb.app.session_compaction import DEFAULT_COMPACTION_SETTINGS, CompactionSettings
from pinb.app.session_messages import convert_to_llm
from pinb.app.session_navigation import NavigationMixin
from pinb.app.session_tree import SessionManager
from pinb.app.settlement import ContinuationRecord, RetrySettings, SettlementMixin
from pinb.app.system_prompt import (
    SystemPromptOptions,
    build_system_prompt,
    options_from_resources,
)
from pinb.app.ui import ExtensionUI
from pinb.errors import AgentBusyError, UsageError

Mode = ev.ExtensionMode
StreamingBehavior = Literal["steer", "followUp"]
SessionListener = Callable[[Any], Any]

BUSY_ERROR = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
COMPACTING_ERROR = "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."


# --- session-only events (what ``subscribe`` listeners get besides the agent's own events) ---------------------------


class QueueUpdateEvent(PiRecord):
    """The texts still queued for steering and follow-up."""

    type: Literal["queue_update"] = "queue_update"
    steering: tuple[str, ...]
    follow_up: tuple[str, ...]


class EntryAppendedEvent(PiRecord):
    """The session appended an entry outside message persistence (boundary drafts, ``append_entry``)."""

    type: Literal["entry_appended"] = "entry_appended"
    entry: Any


class SessionAgentEndEvent(PiRecord):
    """The agent's ``agent_end`` as session listeners get it: plus ``will_retry``."""

    type: Literal["agent_end"] = "agent_end"
    messages: tuple[Any, ...]
    will_retry: bool = False


class AgentSettledEvent(PiRecord):
    """Notification only: the prompt's work is over and nothing more will happen on its own."""

    type: Literal["agent_settled"] = "agent_settled"
    aborted: bool


class _Deferred:
    """An awaitable that creates its coroutine only when awaited (so not awaiting it is harmless)."""

    def __init__(self, factory: Callable[[], Awaitable[None]]) -> None:
        self._factory = factory

    def __await__(self) -> Any:
        return self._factory().__await__()


class AgentSession(
    AgentWiringMixin, ExtensionActionsMixin, UserCommandsMixin, NavigationMixin, SettlementMixin, RecoveryMixin
):
    """One session: an Agent, its session tree, the extension runner and the run/settle logic of Pi 1.6.0."""

    def __init__(
        self,
        agent: Any,
        session_manager: SessionManager,
        runner: ExtensionRunner,
        *,
        cwd: str,
        prompt_options: SystemPromptOptions,
        tool_registry: dict[str, Any],
        retry_settings: RetrySettings | None = None,
        compaction_settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
        workspace: Workspace | None = None,
        skills: Sequence[Skill] = (),
        prompt_templates: Sequence[PromptTemplate] = (),
    ) -> None:
        self.agent = agent
        #: The in-memory file set skills are read from (``/skill:name``); ``None``: none.
        self.workspace = workspace
        self._skills = tuple(skills)
        #: The prompt templates ``/name args`` expands (project ones only when the workspace is trusted).
        self.prompt_templates = list(prompt_templates)
        #: Pi's automatic retry of transient provider errors (``enabled=False`` turns it off).
        self.retry_settings = retry_settings or RetrySettings()
        self._retry_attempt = 0
        self._retry_controller: AbortController | None = None
        #: Pi's automatic compaction (threshold and overflow recovery; ``enabled=False`` turns it off).
        self.compaction_settings = compaction_settings
        self._overflow_recovery_attempted = False
        self._auto_compaction_controller: AbortController | None = None
        self._compaction_will_retry = False
        self._post_run_continuation: Literal["queued", "retry", "recovery"] = "queued"
        self.session_manager = session_manager
        self.extension_runner = runner
        self.cwd = cwd
        self._base_prompt_options = prompt_options
        self._run_prompt_options: SystemPromptOptions | None = None
        self._tool_registry = dict(tool_registry)
        self._listeners: list[SessionListener] = []
        self._is_agent_run_active = False
        self._agent_run_abort_requested = False
        self._idle_waiters: list[asyncio.Future[None]] = []
        self._steering_messages: list[str] = []
        self._follow_up_messages: list[str] = []
        self._pending_next_turn_messages: list[Any] = []
        self._pending_custom_messages: list[Any] = []
        #: The models the provider serves (``ctx.model_registry.find``, ``set_model``), the session's first.
        self.available_models: list[Any] = [agent.state.model]
        self._pending_bash_messages: list[Any] = []
        self._is_compacting = False
        self._compaction_abort_controller: AbortController | None = None
        self._turn_index = 0
        self._entry_ids: dict[int, tuple[Any, str]] = {}
        self._boundary_dispatched: list[Any] = []
        self._last_assistant_message: Any = None
        self._last_activity_outcome: ev.AgentActivityOutcome = "completed"
        self._is_before_settle = False
        self._abort_during_before_settle = False
        self._is_emitting_agent_settled = False
        self._deferred_settled_actions: list[Callable[[], Awaitable[None]]] = []
        self._settlements = 0
        self._background: set[asyncio.Task[Any]] = set()
        #: Every continuation the session started on its own, in order (Pi has no cap; this shows a loop).
        self.continuations: list[ContinuationRecord] = []
        #: Extensions that failed to load, with Pi's messages.
        self.extension_load_errors: list[Any] = []
        #: The extension factories the session was built with; ``reload()`` runs them again.
        self.extension_factories: list[Any] = []
        #: Every extension error reported so far, in order.
        self.extension_errors: list[ExtensionErrorRecord] = []
        runner.on_error(self.extension_errors.append)
        self._unsubscribe_agent = agent.subscribe(self._handle_agent_event)
        self._install_agent_hooks()
        self._set_active_tools(list(tool_registry))

    # --- state -------------------------------------------------------------------------------------------------

    @property
    def is_streaming(self) -> bool:
        """Whether a prompt's run (or its post-run continuation) is in progress."""
        return self._is_agent_run_active

    @property
    def is_idle(self) -> bool:
        return not self._is_agent_run_active and not self.is_compacting

    @property
    def is_compacting(self) -> bool:
        return self._is_compacting or self._auto_compaction_controller is not None

    @property
    def messages(self) -> list[Any]:
        return list(self.agent.state.messages)

    @property
    def state(self) -> Any:
        return self.agent.state

    @property
    def model(self) -> Any:
        return self.agent.state.model

    @property
    def pending_message_count(self) -> int:
        return len(self._steering_messages) + len(self._follow_up_messages)

    def get_steering_messages(self) -> list[str]:
        return list(self._steering_messages)

    def get_follow_up_messages(self) -> list[str]:
        return list(self._follow_up_messages)

    @property
    def system_prompt(self) -> str:
        """The effective system prompt, including a ``before_agent_start`` override of the running prompt."""
        return self._render_prompt(self._run_prompt_options or self._base_prompt_options)

    def _render_prompt(self, options: SystemPromptOptions) -> str:
        return build_system_prompt(options)

    def _session_agent_end(self, event: Any) -> SessionAgentEndEvent:
        will_retry = self._will_retry_after_agent_end(event.messages)
        return SessionAgentEndEvent(messages=tuple(event.messages), will_retry=will_retry)

    def _emit_session_settled(self, aborted: bool) -> None:
        self._emit(AgentSettledEvent(aborted=aborted))

    # --- listeners -----------------------------------------------------------------------------------------------

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Receive every session event (agent events plus ``queue_update``, ``entry_appended``, ``agent_settled``).

        Listeners are called in order and not awaited, as in Pi: an async listener runs as a separate task.
        """
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, event: Any) -> None:
        for listener in list(self._listeners):
            outcome = listener(event)
            if inspect.isawaitable(outcome):
                self._spawn(outcome)

    def _spawn(self, awaitable: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(awaitable)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _emit_queue_update(self) -> None:
        self._emit(QueueUpdateEvent(steering=tuple(self._steering_messages), follow_up=tuple(self._follow_up_messages)))

    def _entry_appended(self, entry: Any) -> None:
        self._emit(EntryAppendedEvent(entry=entry))

    # --- tools ------------------------------------------------------------------------------------------------

    def get_active_tool_names(self) -> list[str]:
        return [tool.name for tool in self.agent.state.tools]

    def get_all_tools(self) -> list[Any]:
        return list(self._tool_registry.values())

    def set_active_tools_by_name(self, tool_names: Sequence[str]) -> None:
        """Activate registered tools by name (unknown names ignored); kept tools keep their order, new ones append."""
        self._set_active_tools(list(tool_names))

    def _set_active_tools(self, tool_names: list[str]) -> None:
        requested = list(dict.fromkeys(tool_names))
        kept = [name for name in self.get_active_tool_names() if name in requested]
        ordered = list(dict.fromkeys([*kept, *requested]))
        self.agent.state.tools = [self._tool_registry[name] for name in ordered if name in self._tool_registry]
        self._base_prompt_options.selected_tools = [tool.name for tool in self.agent.state.tools]

    # --- prompting -------------------------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        *,
        images: Sequence[Any] | None = None,
        streaming_behavior: StreamingBehavior | Literal["follow_up"] | None = None,
        source: ev.InputSource = "interactive",
        expand_prompt_templates: bool = True,
    ) -> None:
        """Send a prompt and wait until it settles. While a run is active, ``streaming_behavior`` must say how to
        queue it (``"steer"`` or ``"followUp"``); without one this raises Pi's "Agent is already processing" error."""
        if self._is_emitting_agent_settled:
            self._deferred_settled_actions.append(
                lambda: self.prompt(
                    text,
                    images=images,
                    streaming_behavior=streaming_behavior,
                    source=source,
                    expand_prompt_templates=expand_prompt_templates,
                )
            )
            return
        if expand_prompt_templates and text.startswith("/") and await self._try_execute_command(text):
            return
        if self._is_compacting:
            raise UsageError(COMPACTING_ERROR)
        behavior = "followUp" if streaming_behavior == "follow_up" else streaming_behavior
        processed = await self._run_input_handlers(text, images, source, behavior if self.is_streaming else None)
        if processed is None:
            return
        current_text, current_images = processed
        if expand_prompt_templates:
            current_text = expand_prompt_template(self._expand_skill_command(current_text), self.prompt_templates)
        if self.is_streaming:
            if not behavior:
                raise AgentBusyError(BUSY_ERROR)
            if behavior == "followUp":
                self._queue_follow_up(current_text, current_images)
            else:
                self._queue_steer(current_text, current_images)
            return
        await self._start_run({"message_type": "user", "prompt": current_text, "images": current_images})

    async def steer(
        self, text: str, *, images: Sequence[Any] | None = None, source: ev.InputSource = "interactive"
    ) -> str:
        """Queue a steering message: delivered after the current turn's tool calls, before the next request."""
        return await self._queue_user_input(text, images, "steer", source)

    async def follow_up(
        self, text: str, *, images: Sequence[Any] | None = None, source: ev.InputSource = "interactive"
    ) -> str:
        """Queue a follow-up message: delivered when the agent would otherwise stop."""
        return await self._queue_user_input(text, images, "followUp", source)

    async def _queue_user_input(self, text: str, images: Any, behavior: StreamingBehavior, source: str) -> str:
        if text.startswith("/") and self._command_of(text)[0] is not None:
            name = self._command_of(text)[1]
            raise UsageError(
                f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command when not streaming.'
            )
        processed = await self._run_input_handlers(text, images, source, behavior if self.is_streaming else None)
        if processed is None:
            return "handled"
        processed = (
            expand_prompt_template(self._expand_skill_command(processed[0]), self.prompt_templates),
            processed[1],
        )
        if behavior == "steer":
            self._queue_steer(*processed)
        else:
            self._queue_follow_up(*processed)
        return "queued"

    async def _run_input_handlers(
        self, text: str, images: Any, source: str, streaming_behavior: str | None
    ) -> tuple[str, Any] | None:
        runner = self.extension_runner
        if not runner.has_handlers("input"):
            return text, images
        result = await runner.emit_input(text, tuple(images) if images else None, source, streaming_behavior)
        if isinstance(result, rs.InputHandled):
            return None
        if isinstance(result, rs.InputTransform):
            return result.text, result.images if result.images is not None else images
        return text, images

    def _expand_skill_command(self, text: str) -> str:
        """Pi's ``/skill:name args``: the skill's instructions (frontmatter stripped) in a ``<skill>`` block."""
        if not text.startswith("/skill:"):
            return text
        space = text.find(" ")
        name = text[7:] if space == -1 else text[7:space]
        args = "" if space == -1 else text[space + 1 :].strip()
        skill = next((s for s in self._skills if s.name == name), None)
        if skill is None:
            return text
        try:
            if self.workspace is None:
                raise FileNotFoundError(f"ENOENT: no such file or directory, open '{skill.file_path}'")
            body = parse_frontmatter(self.workspace.fs.read_text(skill.file_path))[1].strip()
        except Exception as error:
            self.extension_runner.emit_error(ExtensionErrorRecord(skill.file_path, "skill_expansion", str(error)))
            return text
        block = (
            f'<skill name="{skill.name}" location="{skill.file_path}">\n'
            f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
        )
        return f"{block}\n\n{args}" if args else block

    def _user_message(self, text: str, images: Any) -> UserMessage:
        return UserMessage(content=(TextContent(text=text), *(images or ())))

    def _queue_steer(self, text: str, images: Any) -> None:
        self._steering_messages.append(text)
        self._emit_queue_update()
        self.agent.steer(self._user_message(text, images))

    def _queue_follow_up(self, text: str, images: Any) -> None:
        self._follow_up_messages.append(text)
        self._emit_queue_update()
        self.agent.follow_up(self._user_message(text, images))

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Drop every queued message; returns the steering and follow-up texts."""
        steering, follow_up = list(self._steering_messages), list(self._follow_up_messages)
        self._steering_messages.clear()
        self._follow_up_messages.clear()
        self.agent.clear_all_queues()
        self._emit_queue_update()
        return steering, follow_up

    # --- abort, idle, dispose -----------------------------------------------------------------------------------

    def abort(self) -> Awaitable[None]:
        """Abort the current run; await the result to wait until the session is idle (settled, ``aborted`` true).

        As in Pi, the abort itself happens at the call, even when nobody awaits it: a listener that calls
        ``session.abort()`` without awaiting stops the very next step of the run.
        """
        if self._is_agent_run_active:
            self._agent_run_abort_requested = True
        if self._retry_controller is not None:
            self._retry_controller.abort()
        self.abort_compaction()
        if self._is_before_settle:
            self._abort_during_before_settle = True
        self.agent.abort()
        return _Deferred(self.wait_for_idle)

    async def wait_for_idle(self) -> None:
        if self.is_idle:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle_waiters.append(waiter)
        await waiter

    def _resolve_idle_waiters(self) -> None:
        if not self.is_idle:
            return
        waiters, self._idle_waiters = self._idle_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def shutdown(
        self,
        reason: Literal["quit", "reload", "new", "resume", "fork"] = "quit",
        target_session_file: str | None = None,
    ) -> None:
        """What Pi's runtime does on exit or before replacing the session: abort (so an active response is settled
        and persisted first), emit ``session_shutdown`` (if anyone listens), dispose."""
        await self.abort()
        if self.extension_runner.has_handlers("session_shutdown"):
            event = ev.SessionShutdownEvent(reason=reason, target_session_file=target_session_file)
            await self.extension_runner.emit(event)
        self.dispose()

    async def reload(self) -> None:
        """Pi's ``reload()``: tear the extension runtime down and run the extension factories again."""
        from pinb.app.session_reload import reload_session

        await reload_session(self)

    def dispose(self) -> None:
        """Abort, make every extension ``ctx`` stale, disconnect from the agent and drop listeners."""
        with contextlib.suppress(Exception):  # dispose must succeed even if an abort hook raises
            self.agent.abort()
        self.extension_runner.invalidate()
        self._unsubscribe_agent()
        self._listeners.clear()


# --- construction ----------------------------------------------------------------------------------------------------


@dataclass
class AgentSessionOptions:
    """Everything ``create_agent_session`` needs (Pi's ``createAgentSession`` options that pinb models)."""

    #: The provider's stream function, e.g. ``FauxProvider().stream``.
    stream_fn: Any
    model: Model | None = None
    #: The session's tools; all of them start active (a tool named ``bash`` replaces Pi's built-in one).
    tools: Sequence[AgentTool] = ()
    #: ``(name, factory)`` pairs in load order; the name is what error records call Pi's extension path.
    extensions: Sequence[tuple[str, ExtensionFactory]] = ()
    session_manager: SessionManager | None = None
    cwd: str = "/project"
    #: Replaces Pi's preamble and drops its built-in sections (like a ``SYSTEM.md``).
    system_prompt: str | None = None
    #: What Pi's resource loader found (context files, skills, ``SYSTEM.md``, ``APPEND_SYSTEM.md``).
    resources: LoadedResources | None = None
    #: An in-memory workspace: its resources are loaded (unless ``resources`` is given) and skills read from it.
    workspace: Workspace | None = None
    thinking_level: str = "off"
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    steering_mode: Literal["all", "one-at-a-time"] = "one-at-a-time"
    follow_up_mode: Literal["all", "one-at-a-time"] = "one-at-a-time"
    #: ``None``: no UI (``ctx.has_ui`` false); a ``ScriptedUI`` answers dialogs headlessly.
    ui: ExtensionUI | None = None
    mode: Mode = "print"
    on_error: Callable[[ExtensionErrorRecord], None] | None = None
    #: Pi's automatic retry of transient provider errors (default: on, 3 retries, 2 s doubling).
    retry: RetrySettings = field(default_factory=RetrySettings)
    #: Pi's automatic compaction (default: on, reserve 16384 tokens, keep about 20000 recent tokens).
    compaction: CompactionSettings = DEFAULT_COMPACTION_SETTINGS
    #: Bind extensions (UI, mode, ``session_start``) right away, as Pi's modes do on start.
    bind: bool = True
    #: The provider's other models (an extension's ``ctx.model_registry.find`` and ``set_model`` reach them).
    models: Sequence[Model] = ()


def _extension_tool(tool: RegisteredTool, runner: ExtensionRunner) -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        outcome = tool.execute(tool_call_id, params, signal, on_update, runner.create_context())
        return await outcome if inspect.isawaitable(outcome) else outcome

    return AgentTool(
        name=tool.name,
        parameters=tool.parameters,
        execute=execute,
        description=tool.description,
        label=tool.label or tool.name,
        execution_mode=tool.execution_mode,
    )


async def create_agent_session(options: AgentSessionOptions | None = None, **kwargs: Any) -> AgentSession:
    """Build a session like Pi's SDK: load extensions, record model and thinking level, wire the Agent, bind.

    Extensions that fail to load are reported in ``session.extension_load_errors`` (Pi's messages); the rest load.
    """
    options = options or AgentSessionOptions(**kwargs)
    session_manager = options.session_manager or SessionManager(options.cwd)
    loaded = await load_extensions(list(options.extensions))
    runner = ExtensionRunner(
        loaded.extensions,
        loaded.runtime,
        cwd=options.cwd,
        session_manager=session_manager,
        current_system_message=get_current_system_message,
    )
    model = options.model or DEFAULT_MODEL
    # Pi clamps the thinking level to what the model supports (pi-ai's clampThinkingLevel): a model without
    # reasoning thinks "off", one without an xhigh/max mapping thinks "high" when asked for more.
    thinking_level = clamp_thinking_level(model, options.thinking_level)
    existing = session_manager.build_session_context()
    if existing.messages:
        # Pi restores missing settings metadata for older sessions.
        if not any(entry.type == "thinking_level_change" for entry in session_manager.get_branch()):
            session_manager.append_thinking_level_change(thinking_level)
    else:
        # New sessions record the initial model and thinking level so a resume restores them.
        session_manager.append_model_change(model.provider, model.id)
        session_manager.append_thinking_level_change(thinking_level)
    agent = Agent(
        initial_state=AgentInitialState(
            system_prompt="", model=model, thinking_level=thinking_level, messages=existing.messages
        ),
        stream_fn=options.stream_fn,
        convert_to_llm=convert_to_llm,
        steering_mode=options.steering_mode,
        follow_up_mode=options.follow_up_mode,
        tool_execution=options.tool_execution,
        session_id=session_manager.session_id,
    )
    registry: dict[str, Any] = {tool.name: tool for tool in options.tools}
    for extension in loaded.extensions:
        for tool in extension.tools.values():
            registry.setdefault(tool.name, _extension_tool(tool, runner))
    snippets = {t.name: t.prompt_snippet for e in loaded.extensions for t in e.tools.values() if t.prompt_snippet}
    resources = options.resources
    if resources is None and options.workspace is not None:
        resources = load_resources(options.workspace)
    if resources is not None:
        prompt_options = options_from_resources(resources, options.cwd, list(registry))
    else:
        prompt_options = SystemPromptOptions(cwd=options.cwd, selected_tools=list(registry))
    if options.system_prompt is not None:
        prompt_options.custom_prompt = options.system_prompt
    prompt_options.tool_snippets = {**prompt_options.tool_snippets, **snippets}
    session = AgentSession(
        agent,
        session_manager,
        runner,
        cwd=options.cwd,
        prompt_options=prompt_options,
        tool_registry=registry,
        retry_settings=options.retry,
        compaction_settings=options.compaction,
        workspace=options.workspace,
        skills=resources.skills if resources is not None else (),
        prompt_templates=load_prompt_templates(options.workspace) if options.workspace is not None else (),
    )
    session.extension_load_errors = list(loaded.errors)
    session.extension_factories = list(options.extensions)
    session.available_models = [model, *options.models]
    session.bind_core()
    if options.bind:
        await session.bind_extensions(ui=options.ui, mode=options.mode, on_error=options.on_error)
    return session
