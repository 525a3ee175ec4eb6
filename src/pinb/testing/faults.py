"""Named faults: small, realistic deviations of the stand-in from Pi, switched on one at a time by tests.

Each fault is what a plausible bug in Pi (or in a port of it) would do: handlers dispatched in reverse order, a
throwing `tool_call` handler that lets the call run, `agent_settled` sent at the first `agent_end`, ... A judge that
can fail says CONTRADICTED when one of the faults its claim names is on (`pinb claims check-judges`).

Most faults swap a function of the stand-in for a faulty wrapper while they are on (`injected`), so the layers
carry no hook at all; the few that sit in the middle of a function are flags the layer reads from
`pinb._faults.ACTIVE`. Nothing is patched and `ACTIVE` stays empty unless a fault is injected.

A chapter folder may declare its own faults in a `faults.py` beside its ledger, with this module's switchboard:
`@fault(name, deviation)` over a function returning the patches (or `flag(...)`), or a `FAULTS` dict of `Fault`s
of its own filled by `fault = registrar(FAULTS)`. `load_chapter_faults()` imports them (every lookup here does),
so an author never edits this module; `FAULT_CHAPTER` says which chapter declared a fault.
"""

from __future__ import annotations

import asyncio
import dataclasses
import posixpath
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pinb import _faults
from pinb.errors import UsageError

#: (owner, attribute, replacement built from the original): `replacement(original) -> new value`.
Patch = tuple[Any, str, Callable[[Any], Any]]


@dataclass(frozen=True)
class Fault:
    """One named deviation from Pi: what the stand-in does instead while the fault is on."""

    name: str
    deviation: str
    patches: Callable[[], list[Patch]] | None = None
    """Built when the fault is injected (imports stay lazy); None for a flag the layers read."""


FAULTS: dict[str, Fault] = {}
#: A fault declared by a chapter folder's `faults.py` → that chapter's id (pinb's own faults are not listed).
FAULT_CHAPTER: dict[str, str] = {}
_loaded: set[str] = set()


Register = Callable[[str, str], Callable[[Callable[[], list[Patch]]], Callable[[], list[Patch]]]]


def registrar(table: dict[str, Fault]) -> Register:
    """`@fault(name, deviation)` over a function returning the patches, registering into `table`: pinb's own
    faults go into `FAULTS`; a chapter's `faults.py` makes its own (`fault = registrar(FAULTS)`)."""

    def fault(name: str, deviation: str) -> Callable[[Callable[[], list[Patch]]], Callable[[], list[Patch]]]:
        def register(patches: Callable[[], list[Patch]]) -> Callable[[], list[Patch]]:
            table[name] = Fault(name, deviation, patches)
            return patches

        return register

    return fault


fault = registrar(FAULTS)


def flag(name: str, deviation: str) -> None:
    FAULTS[name] = Fault(name, deviation, None)


def load_chapter_faults() -> dict[str, Fault]:
    """Import every chapter folder's `faults.py` once (their faults join `FAULTS`); every fault by name."""
    from pinb.chapters.registry import folders

    for chapter_id, found in folders().items():
        if chapter_id in _loaded:
            continue
        before = set(FAULTS)
        module = found.module("faults")
        _loaded.add(chapter_id)
        if module is None:
            continue
        own = getattr(module, "FAULTS", None)
        if isinstance(own, dict) and own is not FAULTS:
            for name, item in own.items():
                if not isinstance(item, Fault):
                    raise UsageError(f"{found.folder}/faults.py: FAULTS[{name!r}] is not a Fault")
                FAULTS.setdefault(name, item)
        for name in set(FAULTS) - before:
            FAULT_CHAPTER[name] = chapter_id
    return FAULTS


def forget_chapter_faults() -> None:
    """Drop the chapters' own faults (after the chapter folders changed in this process)."""
    for name in FAULT_CHAPTER:
        FAULTS.pop(name, None)
    FAULT_CHAPTER.clear()
    _loaded.clear()


def get(name: str) -> Fault:
    if name not in FAULTS:
        load_chapter_faults()
    try:
        return FAULTS[name]
    except KeyError:
        raise UsageError(f"unknown fault {name!r}; known: {', '.join(sorted(FAULTS))}") from None


@contextmanager
def injected(*names: str) -> Iterator[None]:
    """Switch the named faults on for the block; everything is restored when it ends (even on error)."""
    chosen = [get(name) for name in names]
    undo: list[Callable[[], None]] = []
    before = _faults.ACTIVE
    _faults.ACTIVE = before | {f.name for f in chosen}
    try:
        for item in chosen:
            for owner, attribute, build in item.patches() if item.patches is not None else []:
                undo.extend(_swap(owner, attribute, build))
        yield
    finally:
        for restore in reversed(undo):
            restore()
        _faults.ACTIVE = before


def _swap(owner: Any, attribute: str, build: Callable[[Any], Any]) -> list[Callable[[], None]]:
    """Replace `owner.attribute`; for a module function, also every `from … import` binding of it in pinb."""
    original = getattr(owner, attribute)
    replacement = build(original)
    targets: list[tuple[Any, str]] = [(owner, attribute)]
    # A function rebound by `from … import` elsewhere is swapped there too, when patched where it is defined.
    if not isinstance(owner, type) and getattr(original, "__module__", None) == owner.__name__:
        for module_name, module in list(sys.modules.items()):
            if module_name.startswith("pinb.") and module is not owner:
                targets.extend((module, name) for name, value in list(vars(module).items()) if value is original)
    undo = []
    for target, name in targets:
        undo.append(_restorer(target, name))
        setattr(target, name, replacement)
    return undo


def _restorer(target: Any, name: str) -> Callable[[], None]:
    if name in vars(target):
        saved = vars(target)[name]
        return lambda: setattr(target, name, saved)
    return lambda: delattr(target, name)  # inherited from a base class: remove the override


def _runner() -> Any:
    from pinb.app.extensions.runner import ExtensionRunner

    return ExtensionRunner


def _session() -> Any:
    from pinb.app.session import AgentSession

    return AgentSession


# --- extension dispatch -------------------------------------------------------------------------------------------


@fault("handlers-reverse-order", "extension handlers run last-registered first instead of in registration order")
def _reverse() -> list[Patch]:
    return [(_runner(), "_snapshot", lambda orig: lambda self, t: list(reversed(orig(self, t))))]


@fault(
    "dispatch-without-snapshot",
    "a dispatch walks the live handler lists, so unsubscribing during a dispatch changes that dispatch",
)
def _live() -> list[Patch]:
    def live(orig: Any) -> Any:
        def walk(self: Any, event_type: str) -> Iterator[Any]:
            for ext in self.extensions:
                for handler in ext.handlers.get(event_type, ()):
                    yield ext, handler

        return walk

    return [(_runner(), "_snapshot", live)]


@fault("handlers-not-awaited", "an async handler is started but not awaited: dispatch goes on before it finishes")
def _not_awaited() -> list[Patch]:
    from pinb.app.extensions import runner

    started: set[asyncio.Future[Any]] = set()

    def build(orig: Any) -> Any:
        async def call(handler: Any, event: Any, ctx: Any) -> Any:
            value = handler(event, ctx)
            if asyncio.iscoroutine(value):
                task = asyncio.ensure_future(value)
                started.add(task)
                # Its outcome is never looked at (that is the fault); retrieve it so nothing is logged.
                task.add_done_callback(lambda done: (started.discard(done), done.cancelled() or done.exception()))
                return None
            return value

        return call

    return [(runner, "call_handler", build)]


@fault("unsubscribe-does-nothing", "the function pi.on returns does not unregister the handler")
def _no_unsubscribe() -> list[Patch]:
    from pinb.app.extensions.api import ExtensionAPI

    def build(orig: Any) -> Any:
        def on(self: Any, event: str, handler: Any) -> Any:
            orig(self, event, handler)
            return lambda: None

        return on

    return [(ExtensionAPI, "on", build)]


@fault("throwing-tool-call-lets-call-run", "a tool_call handler that raises is skipped and the call runs")
def _throw_runs() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_tool_call(self: Any, event: Any) -> Any:
            try:
                return await orig(self, event)
            except Exception:
                return None

        return emit_tool_call

    return [(_runner(), "emit_tool_call", build)]


@fault("tool-call-block-ignored", "tool_call handlers run but their { block: true } is ignored: the call runs")
def _block_ignored() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_tool_call(self: Any, event: Any) -> Any:
            await orig(self, event)
            return None

        return emit_tool_call

    return [(_runner(), "emit_tool_call", build)]


@fault("tool-result-patch-ignored", "tool_result handlers run but the result patch they return is dropped")
def _result_ignored() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_tool_result(self: Any, event: Any) -> Any:
            await orig(self, event)
            return None

        return emit_tool_result

    return [(_runner(), "emit_tool_result", build)]


@fault("message-end-replacement-ignored", "message_end handlers run but a replacement message is dropped")
def _message_end_ignored() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_message_end(self: Any, event: Any, validate_message: Any = None) -> Any:
            await orig(self, event, validate_message)
            return None

        return emit_message_end

    return [(_runner(), "emit_message_end", build)]


@fault("input-transform-ignored", "input handlers run but a transformed text is dropped")
def _input_ignored() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_input(self: Any, *args: Any, **kwargs: Any) -> Any:
            from pinb.app.extensions import results

            outcome = await orig(self, *args, **kwargs)
            return results.InputContinue() if isinstance(outcome, results.InputTransform) else outcome

        return emit_input

    return [(_runner(), "emit_input", build)]


@fault("input-not-dispatched", "input handlers are never called: the prompt goes straight to before_agent_start")
def _input_skipped() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_input(self: Any, *args: Any, **kwargs: Any) -> Any:
            from pinb.app.extensions import results

            return results.InputContinue()

        return emit_input

    return [(_runner(), "emit_input", build)]


@fault("input-handled-ignored", 'an input handler\'s { action: "handled" } is ignored: the prompt runs anyway')
def _handled_ignored() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_input(self: Any, *args: Any, **kwargs: Any) -> Any:
            from pinb.app.extensions import results

            outcome = await orig(self, *args, **kwargs)
            return results.InputContinue() if isinstance(outcome, results.InputHandled) else outcome

        return emit_input

    return [(_runner(), "emit_input", build)]


@fault("message-end-role-unchecked", "a message_end replacement of another role is accepted instead of refused")
def _role_unchecked() -> list[Patch]:
    from pinb.app.extensions import runner

    def build(orig: Any) -> Any:
        async def emit_message_end(self: Any, event: Any, validate_message: Any = None) -> Any:
            real = runner.role_of
            runner.role_of = lambda message: "any"  # every role compares equal for this dispatch
            try:
                return await orig(self, event, validate_message)
            finally:
                runner.role_of = real

        return emit_message_end

    return [(_runner(), "emit_message_end", build)]


@fault("before-agent-start-messages-dropped", "messages a before_agent_start handler injects never reach the run")
def _bas_messages() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_before_agent_start(self: Any, *args: Any, **kwargs: Any) -> Any:
            outcome = await orig(self, *args, **kwargs)
            return dataclasses.replace(outcome, messages=())

        return emit_before_agent_start

    return [(_runner(), "emit_before_agent_start", build)]


@fault("continue-ignored", "a turn_end / agent_before_settle handler's { continue: true } is ignored")
def _continue_ignored() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_boundary(self: Any, *args: Any, **kwargs: Any) -> Any:
            outcome = await orig(self, *args, **kwargs)
            return dataclasses.replace(outcome, continue_=False)

        return emit_boundary

    return [(_runner(), "emit_boundary", build)]


@fault("boundary-entries-dropped", "entries a turn_end / agent_before_settle handler proposes are discarded")
def _entries_dropped() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_boundary(self: Any, *args: Any, **kwargs: Any) -> Any:
            outcome = await orig(self, *args, **kwargs)
            return dataclasses.replace(outcome, entries=())

        return emit_boundary

    return [(_runner(), "emit_boundary", build)]


# --- settlement -------------------------------------------------------------------------------------------------


def _drop_settled(orig_emit: Any) -> Any:
    async def emit(self: Any, event: Any) -> Any:
        if getattr(event, "type", None) == "agent_settled":
            return None
        return await orig_emit(self, event)

    return emit


@fault("agent-settled-never-sent", "agent_settled is never emitted (to extensions or session listeners)")
def _never_settled() -> list[Patch]:
    return [
        (_runner(), "emit", _drop_settled),
        (_session(), "_emit_session_settled", lambda orig: lambda self, aborted: None),
    ]


@fault(
    "agent-settled-at-agent-end",
    "agent_settled is emitted as soon as the first low-level run ends, before agent_before_settle and any "
    "continuation (and not again at the real settlement)",
)
def _early_settled() -> list[Patch]:
    from pinb.app.extensions import events as ev

    session = _session()
    runner = _runner()
    orig_emit = runner.emit
    orig_session_settled = session._emit_session_settled

    def before_settle(orig: Any) -> Any:
        async def run(self: Any) -> Any:
            if not self.__dict__.get("_fault_settled_early"):
                self._fault_settled_early = True
                await orig_emit(self.extension_runner, ev.AgentSettledEvent(aborted=False))
                orig_session_settled(self, False)
            return await orig(self)

        return run

    def settled(orig: Any) -> Any:
        async def run(self: Any) -> Any:
            if not self.__dict__.pop("_fault_settled_early", False):
                return await orig(self)
            self._emit_session_settled = lambda aborted: None
            extension_runner = self.extension_runner
            extension_runner.emit = _drop_settled(orig_emit).__get__(extension_runner)
            try:
                return await orig(self)
            finally:
                del self._emit_session_settled
                del extension_runner.emit

        return run

    return [(session, "_run_before_settle_boundary", before_settle), (session, "_emit_agent_settled", settled)]


@fault("auto-retry-never", "a transient provider error (503, overloaded) ends the run: no automatic retry")
def _no_retry() -> list[Patch]:
    from pinb.app import settlement

    return [(settlement, "is_retryable_error", lambda orig: lambda message, context_window=0: False)]


@fault("overflow-not-recovered", "a context-overflow error ends the run: no compaction and no retry")
def _no_overflow_recovery() -> list[Patch]:
    from pinb.app import settlement

    overflow = settlement.is_context_overflow  # the real test, taken before it is swapped below

    def build(orig: Any) -> Any:
        def retryable(message: Any, context_window: int = 0) -> bool:
            if overflow(message, context_window):
                return False
            return orig(message, context_window)

        return retryable

    return [
        (settlement, "is_context_overflow", lambda orig: lambda message, context_window=0: False),
        (settlement, "is_retryable_error", build),
    ]


@fault(
    "settled-continue-honoured", "a { continue: true } returned at agent_settled starts another run with its entries"
)
def _settled_continues() -> list[Patch]:
    from pinb.app.extensions import runner

    proposals: list[dict[str, Any]] = []

    def call_build(orig: Any) -> Any:
        async def call(handler: Any, event: Any, ctx: Any) -> Any:
            value = await orig(handler, event, ctx)
            if getattr(event, "type", None) == "agent_settled" and isinstance(value, dict) and value.get("continue"):
                proposals.append(value)
            return value

        return call

    def settled_build(orig: Any) -> Any:
        async def run(self: Any) -> Any:
            await orig(self)
            while proposals:
                entries = proposals.pop(0).get("entries") or []
                await self.prompt(" ".join(str(e.get("content", "")) for e in entries) or "Continue.")

        return run

    return [(runner, "call_handler", call_build), (_session(), "_emit_agent_settled", settled_build)]


# --- the agent loop -----------------------------------------------------------------------------------------------


flag("turn-end-before-tool-results", "turn_end is emitted before the turn's tool calls run (with no tool results)")


def _loop_config(change: Callable[[Any], dict[str, Any]]) -> list[Patch]:
    """Patch the loop so it runs with `change(config)` applied to its config."""
    from pinb.agent import loop

    def build(orig: Any) -> Any:
        async def run(current: Any, new_messages: Any, config: Any, *args: Any) -> Any:
            return await orig(current, new_messages, dataclasses.replace(config, **change(config)), *args)

        return run

    return [(loop, "_run_loop", build)]


async def _poll(getter: Any) -> list[Any]:
    if getter is None:
        return []
    value = getter()
    if asyncio.iscoroutine(value):
        value = await value
    return list(value or [])


@fault("steering-delivered-late", "steering messages wait until the agent would stop, like follow-ups")
def _steer_late() -> list[Patch]:
    def change(config: Any) -> dict[str, Any]:
        steering, follow_ups = config.get_steering_messages, config.get_follow_up_messages

        async def late() -> list[Any]:
            return [*await _poll(steering), *await _poll(follow_ups)]

        async def none() -> list[Any]:
            return []

        return {"get_steering_messages": none, "get_follow_up_messages": late}

    return _loop_config(change)


@fault("follow-up-delivered-early", "follow-up messages are delivered after the current turn, like steering")
def _follow_up_early() -> list[Patch]:
    def change(config: Any) -> dict[str, Any]:
        steering, follow_ups = config.get_steering_messages, config.get_follow_up_messages

        async def early() -> list[Any]:
            return [*await _poll(steering), *await _poll(follow_ups)]

        return {"get_steering_messages": early}

    return _loop_config(change)


@fault(
    "prepare-request-throw-swallowed", "an exception from the prepare_request hook is ignored and the request goes out"
)
def _prepare_swallowed() -> list[Patch]:
    def change(config: Any) -> dict[str, Any]:
        hook = config.prepare_request
        if hook is None:
            return {}

        async def safe(*args: Any) -> Any:
            try:
                value = hook(*args)
                return await value if asyncio.iscoroutine(value) else value
            except Exception:
                return None

        return {"prepare_request": safe}

    return _loop_config(change)


@fault("thinking-level-not-sent", "the request goes out without the session's thinking level (always off)")
def _no_thinking() -> list[Patch]:
    return _loop_config(lambda config: {"reasoning": None})


@fault("tool-batches-sequential", "a batch of tool calls always runs one after another, never concurrently")
def _sequential() -> list[Patch]:
    from pinb.agent import tool_execution as te

    return [(te, "_parallel", lambda orig: te._sequential)]


@fault("tool-results-not-in-context", "tool results are emitted but left out of the context of the next request")
def _results_lost() -> list[Patch]:
    from pinb.agent import loop
    from pinb.agent.tool_execution import ToolBatch

    def build(orig: Any) -> Any:
        async def execute(*args: Any) -> Any:
            batch = await orig(*args)
            return ToolBatch([], batch.terminate)

        return execute

    return [(loop, "execute_tool_calls", build)]


@fault("tool-calls-not-executed", "tool calls in a response are recorded but never executed")
def _not_executed() -> list[Patch]:
    from pinb.agent import loop
    from pinb.agent.tool_execution import ToolBatch

    def build(orig: Any) -> Any:
        async def execute(*args: Any) -> Any:
            return ToolBatch([], terminate=True)

        return execute

    return [(loop, "execute_tool_calls", build)]


@fault("before-tool-call-mutation-lost", "the tool runs with the model's original arguments, not the hook's edit")
def _mutation_lost() -> list[Patch]:
    import copy

    from pinb.agent import tool_execution as te

    def build(orig: Any) -> Any:
        async def prepare(context: Any, assistant: Any, call: Any, config: Any, *rest: Any) -> Any:
            pristine = copy.deepcopy(call.arguments)
            prepared = await orig(context, assistant, call, config, *rest)
            if isinstance(prepared, te._Prepared):
                return te._Prepared(prepared.tool_call, prepared.tool, pristine)
            return prepared

        return prepare

    return [(te, "_prepare", build)]


@fault("abort-clears-queues", "abort() also empties the steering and follow-up queues")
def _abort_clears() -> list[Patch]:
    from pinb.agent.agent import Agent

    def build(orig: Any) -> Any:
        def abort(self: Any) -> Any:
            self.clear_all_queues()
            return orig(self)

        return abort

    return [(Agent, "abort", build)]


# --- context, resources and the request ------------------------------------------------------------------------


@fault("build-context-ignores-compaction", "the model's context is the whole branch: compactions hide nothing")
def _ignore_compaction() -> list[Patch]:
    from pinb.app import session_context

    return [
        (
            session_context,
            "build_context_entries",
            lambda orig: (
                lambda entries, leaf_id=session_context.LAST_ENTRY, by_id=None: session_context._session_path(
                    entries, leaf_id, by_id
                )
            ),
        )
    ]


@fault("context-from-all-entries", "the model's context is every entry in file order, not the active branch")
def _all_entries() -> list[Patch]:
    from pinb.app import session_context

    return [(session_context, "_session_path", lambda orig: lambda entries, leaf_id, by_id: list(entries))]


@fault("agents-md-not-loaded", "AGENTS.md context files are not loaded into the system prompt")
def _no_agents_md() -> list[Patch]:
    from pinb.app import resources

    def build(orig: Any) -> Any:
        def load(*args: Any, **kwargs: Any) -> Any:
            return [f for f in orig(*args, **kwargs) if posixpath.basename(f.path) != "AGENTS.md"]

        return load

    return [(resources, "load_project_context_files", build)]


@fault("prompt-templates-not-expanded", "a /name prompt is sent as typed although a prompt template has that name")
def _templates_not_expanded() -> list[Patch]:
    from pinb.app import prompt_templates

    return [(prompt_templates, "expand_prompt_template", lambda orig: lambda text, templates: text)]


@fault(
    "agent-core-loads-context-files",
    "the agent core, run on its own in a project folder, loads the folder's AGENTS.md into its system prompt",
)
def _core_loads_context() -> list[Patch]:
    from pinb.app.resources import load_project_context_files
    from pinb.scenario import standin, standin_project

    def build(orig: Any) -> Any:
        async def run(scenario: Any, writer: Any) -> None:
            if scenario.project is not None:
                space = standin_project.workspace(scenario.project, True)
                found = load_project_context_files(space.fs, space.cwd, space.agent_dir)
                prompt = "\n\n".join([scenario.system_prompt or "", *(f.content for f in found)]).strip()
                scenario = scenario.model_copy(update={"system_prompt": prompt})
            await orig(scenario, writer)

        return run

    return [(standin, "_run_agent_layer", build)]


@fault("agents-md-cwd-only", "only the working directory's AGENTS.md is loaded, not its ancestors'")
def _cwd_only() -> list[Patch]:
    from pinb.app import resources

    def build(orig: Any) -> Any:
        def load(fs: Any, cwd: str, agent_dir: str) -> Any:
            found = orig(fs, cwd, agent_dir)
            here = resources._norm(cwd)
            return [f for f in found if posixpath.dirname(f.path) in (here, resources._norm(agent_dir))]

        return load

    return [(resources, "load_project_context_files", build)]


@fault("system-md-ignored", "SYSTEM.md is not discovered: the base prompt is never replaced")
def _no_system_md() -> list[Patch]:
    from pinb.app import resources

    return [(resources, "discover_system_prompt_file", lambda orig: lambda workspace: None)]


@fault("append-system-md-ignored", "APPEND_SYSTEM.md is not discovered: nothing is appended")
def _no_append() -> list[Patch]:
    from pinb.app import resources

    return [(resources, "discover_append_system_prompt_file", lambda orig: lambda workspace: None)]


@fault("skills-not-listed", "skill names and descriptions are left out of the system prompt")
def _no_skills() -> list[Patch]:
    from pinb.app import system_prompt

    return [(system_prompt, "format_skills_for_prompt", lambda orig: lambda *a, **k: "")]


def _drop_event(event_type: str) -> Patch:
    def build(orig: Any) -> Any:
        async def emit(self: Any, event: Any) -> Any:
            if getattr(event, "type", None) == event_type:
                return None
            return await orig(self, event)

        return emit

    return (_runner(), "emit", build)


@fault("session-start-not-emitted", "extensions never receive session_start")
def _no_session_start() -> list[Patch]:
    return [_drop_event("session_start")]


@fault("session-shutdown-not-emitted", "extensions never receive session_shutdown")
def _no_session_shutdown() -> list[Patch]:
    return [_drop_event("session_shutdown")]


@fault("message-update-not-dispatched", "extensions never receive message_update while a reply streams")
def _no_message_update() -> list[Patch]:
    return [_drop_event("message_update")]


@fault(
    "notify-results-honoured",
    "a value returned from a notification-only handler has an effect: { block: true } from turn_start aborts the run",
)
def _notify_honoured() -> list[Patch]:
    from pinb.app.extensions import runner

    def build(orig: Any) -> Any:
        async def call(handler: Any, event: Any, ctx: Any) -> Any:
            value = await orig(handler, event, ctx)
            if getattr(event, "type", None) == "turn_start" and isinstance(value, dict) and value.get("block"):
                ctx.abort()
            return value

        return call

    return [(runner, "call_handler", build)]


@fault("system-prompt-override-ignored", "a system prompt returned by before_agent_start is ignored")
def _override_ignored() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_before_agent_start(self: Any, *args: Any, **kwargs: Any) -> Any:
            outcome = await orig(self, *args, **kwargs)
            outcome.system_prompt_options.force_system_prompt = None
            return outcome

        return emit_before_agent_start

    return [(_runner(), "emit_before_agent_start", build)]


@fault(
    "system-prompt-override-sticks",
    "a system prompt returned by before_agent_start becomes the base prompt for every later run",
)
def _override_sticks() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def prepare(self: Any, trigger: Any) -> Any:
            messages = await orig(self, trigger)
            forced = getattr(self._run_prompt_options, "force_system_prompt", None)
            if forced is not None:
                self._base_prompt_options.force_system_prompt = forced
            return messages

        return prepare

    return [(_session(), "_prepare_run", build)]


@fault("user-message-not-in-branch", "a submitted user message is never appended to the session's active branch")
def _user_not_in_branch() -> list[Patch]:
    from pinb.app.session_tree import SessionManager

    def build(orig: Any) -> Any:
        def append_message(self: Any, message: Any) -> str:
            if getattr(message, "role", None) == "user":
                return self._next_id()
            return orig(self, message)

        return append_message

    return [(SessionManager, "append_message", build)]


@fault("text-dropped-beside-tool-calls", "an assistant reply that calls tools loses its text blocks")
def _text_dropped() -> list[Patch]:
    from pinb.agent import loop

    def build(orig: Any) -> Any:
        def replace(message: Any, **fields: Any) -> Any:
            result = orig(message, **fields)
            blocks = tuple(getattr(result, "content", ()) or ())
            if any(getattr(b, "type", None) == "toolCall" for b in blocks):
                kept = tuple(b for b in blocks if getattr(b, "type", None) != "text")
                result = orig(result, content=kept)
            return result

        return replace

    return [(loop, "replace_fields", build)]


@fault("tool-results-end-the-run", "tool results never trigger another model request: the run ends after the tools")
def _results_end_run() -> list[Patch]:
    from pinb.agent import loop
    from pinb.agent.tool_execution import ToolBatch

    def build(orig: Any) -> Any:
        async def execute(*args: Any) -> Any:
            batch = await orig(*args)
            return ToolBatch(batch.messages, terminate=True)

        return execute

    return [(loop, "execute_tool_calls", build)]


@fault("tool-details-dropped", "a tool's result details are dropped on the way to tool_execution_end")
def _details_dropped() -> list[Patch]:
    from pinb.agent import tool_execution as te

    def build(orig: Any) -> Any:
        async def emit_end(finalized: Any, emit: Any) -> Any:
            result = finalized.result.model_copy(update={"details": None})
            return await orig(dataclasses.replace(finalized, result=result), emit)

        return emit_end

    return [(te, "_emit_end", build)]


@fault("stream-fn-ignored", "an Agent keeps the first provider it was ever given instead of its own streamFn")
def _stream_fn_ignored() -> list[Patch]:
    from pinb.agent.agent import Agent

    first: list[Any] = []

    def build(orig: Any) -> Any:
        def init(self: Any, *args: Any, **kwargs: Any) -> Any:
            if "stream_fn" in kwargs:
                first.append(kwargs["stream_fn"])
                kwargs["stream_fn"] = first[0]
            return orig(self, *args, **kwargs)

        return init

    return [(Agent, "__init__", build)]


@fault("tools-not-declared", "the tool definitions (and later changes to them) never reach the model's request")
def _changes_undeclared() -> list[Patch]:
    from pinb.agent.transcript_state import ToolLedger

    return [(ToolLedger, "declare_tool_changes", lambda orig: lambda self, context, pending: pending)]


@fault("edit-truncates-history", "branching from an earlier entry deletes the entries after it, like a linear chat")
def _truncate() -> list[Patch]:
    from pinb.app.session_tree import SessionManager

    def build(orig: Any) -> Any:
        def branch(self: Any, branch_from_id: str) -> None:
            orig(self, branch_from_id)
            keep = {e.id for e in self.get_branch(branch_from_id)}
            self._entries = [e for e in self._entries if e.id in keep or branch_from_id not in _ancestors(self, e)]
            self._rebuild_index()
            self._leaf_id = branch_from_id

        return branch

    return [(SessionManager, "branch", build)]


def _ancestors(manager: Any, entry: Any) -> set[str]:
    return {e.id for e in manager.get_branch(entry.id)}


@fault("entries-chain-in-file-order", "a new entry's parent is the last entry written, not the current leaf")
def _file_order() -> list[Patch]:
    from pinb.app.session_tree import SessionManager

    def build(orig: Any) -> Any:
        def base(self: Any) -> dict[str, Any]:
            fields = orig(self)
            if self._entries:
                fields["parent_id"] = self._entries[-1].id
            return fields

        return base

    return [(SessionManager, "_base", build)]


@fault("agent-layer-runs-in-a-session", "the agent core only runs inside an application session")
def _core_needs_app() -> list[Patch]:
    from pinb.scenario import standin

    def build(orig: Any) -> Any:
        async def run(scenario: Any, writer: Any) -> None:
            from pinb.scenario.standin_app import run_app_layer

            await run_app_layer(scenario, writer)

        return run

    return [(standin, "_run_agent_layer", build)]


@fault("skill-command-not-expanded", "a /skill:name prompt is sent as typed: the skill's instructions never enter")
def _skill_not_expanded() -> list[Patch]:
    return [(_session(), "_expand_skill_command", lambda orig: lambda self, text: text)]


# --- the chapter 16 guard extension (the scenario harness's port of the book's code) -----------------------------


def _standin_app() -> Any:
    from pinb.scenario import standin_app

    return standin_app


def _guard_built_with(update: Callable[[Any], dict[str, Any]]) -> list[Patch]:
    """The guard port built from its declared action with ``update(action)``'s fields changed."""
    return [(_standin_app(), "_guard", lambda orig: lambda action: orig(action.model_copy(update=update(action))))]


@fault("guard-case-insensitive", "the guard's regexes are compiled case-insensitively (/…/i), unlike the book's")
def _guard_i() -> list[Patch]:
    return [(_standin_app(), "js_regex", lambda orig: lambda source, flags="": orig(source, flags + "i"))]


@fault("guard-matches-raw-command", "the guard tests the raw command string instead of JSON.stringify(input)")
def _guard_raw() -> list[Patch]:
    return _guard_built_with(lambda action: {"match_on": "command"})


class _Everything(list[str]):
    def __contains__(self, item: object) -> bool:
        return True


@fault("guard-inspects-every-tool", "the guard inspects every tool's input, not only bash and powershell")
def _guard_all_tools() -> list[Patch]:
    return _guard_built_with(lambda action: {"tool_names": _Everything()})


@fault("guard-ignores-ui", "the guard blocks without asking even when a UI is present")
def _guard_no_ui() -> list[Patch]:
    return _guard_built_with(lambda action: {"confirm_with_ui": False})


@fault("guard-asks-another-question", "the guard's confirm dialog asks a question other than the book's")
def _guard_title() -> list[Patch]:
    return _guard_built_with(lambda action: {"confirm_title": "Run this command?"})


@fault("guard-dialog-message-unsliced", "the guard's confirm dialog shows the whole input, not raw.slice(0, 200)")
def _guard_unsliced() -> list[Patch]:
    return [(_standin_app(), "js_slice", lambda orig: lambda text, start, end: text)]


@fault(
    "guard-slices-code-points",
    "the guard cuts the dialog's message after 200 code points, not 200 UTF-16 code units as JavaScript's slice does",
)
def _guard_code_points() -> list[Patch]:
    return [(_standin_app(), "js_slice", lambda orig: lambda text, start, end: text[start:end])]


@fault("guard-drops-first-pattern", "the guard's pattern list lost the book's first (force-push) pattern")
def _guard_drift() -> list[Patch]:
    return _guard_built_with(lambda action: {"patterns": list(action.patterns[1:])})


@fault(
    "guard-mutates-input",
    "the guard writes into event.input (it tags the call it inspected) instead of only reading it",
)
def _guard_mutates() -> list[Patch]:
    return [(_standin_app(), "_guard", _tagging_guard)]


def _tagging_guard(orig: Any) -> Any:
    def guard(action: Any) -> Any:
        decide = orig(action)

        async def tagging(event: Any, ctx: Any) -> Any:
            result = await decide(event, ctx)
            if isinstance(event.input, dict):
                event.input["inspected"] = True
            return result

        return tagging

    return guard


__all__ = [
    "FAULTS",
    "FAULT_CHAPTER",
    "Fault",
    "fault",
    "flag",
    "forget_chapter_faults",
    "get",
    "injected",
    "load_chapter_faults",
]
