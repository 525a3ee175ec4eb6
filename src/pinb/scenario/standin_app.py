"""The stand-in's layer ``app``: an agent session (``pinb.app``) with extensions built from declarative handlers.

Mirrors what the real-Pi runner does with ``createAgentSession``: in-memory session, the scenario's tools as the only
active tools, extensions in array order, a scripted UI when ``ui.has_ui``, the session's public listener writing
``session`` lines and firing queue triggers, and every handler invocation writing one ``ext`` line when it returns
or throws (fields as the handler saw the event on entry).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, assert_never

from pinb.ai.jsjson import js_slice
from pinb.ai.timers import timer_seconds
from pinb.ai.types import stamp_later_than_now
from pinb.app.extensions import ExtensionAPI, ExtensionErrorRecord
from pinb.app.extensions.events import SessionStartEvent
from pinb.app.js_compat import js_regex, json_stringify
from pinb.app.session import AgentSession, create_agent_session
from pinb.app.session_compaction import DEFAULT_COMPACTION_SETTINGS
from pinb.app.session_runtime import AgentSessionRuntime
from pinb.app.session_tree import SessionManager
from pinb.app.settlement import RetrySettings
from pinb.app.ui import ScriptedUI, UICall
from pinb.scenario.model import (
    AppendEntryAction,
    AppendSystemPromptAction,
    BlockIfMatchAction,
    CancelCompactionAction,
    Command,
    ContinueOnceAction,
    ContinueTimesAction,
    DropMessagesAction,
    Extension,
    Handler,
    InjectMessageAction,
    MutateInputAction,
    RecordAction,
    ReplaceMessageAction,
    ReplaceResultAction,
    ReturnValueAction,
    Scenario,
    SendMessageAction,
    SendUserMessageAction,
    SetActiveToolsAction,
    SetModelAction,
    SetThinkingLevelAction,
    SleepAction,
    SupplySummaryAction,
    ThrowAction,
    TransformInputAction,
    Trigger,
    TrustAction,
    UnsubscribeAction,
)
from pinb.scenario.standin import Triggers, drive_prompts, error_text, make_faux, scripted_responses
from pinb.scenario.standin_project import (
    PI_DIR,
    drive_steps,
    project_cwd,
    request_line,
    resolve_trust,
    scrub,
    scrub_lines,
    workspace,
)
from pinb.scenario.standin_tools import build_tools
from pinb.scenario.trace import TraceWriter, blocks_text, snapshot, to_pi_json

Act = Callable[[Any, Any], Any]


def _fill(template: str, text: str) -> str:
    return text.join(template.split("{text}"))


def _js_string(value: Any) -> str:
    # JavaScript's String(value) for the JSON values a tool input can hold.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return json_stringify(value) or ""
    if isinstance(value, list):
        return ",".join("" if v is None else _js_string(v) for v in value)
    return "[object Object]"


def _get(obj: Any, key: str, attr: str | None = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, attr or key, None)


class _HandlerState:
    def __init__(self) -> None:
        self.invocations = 0
        #: A command's arguments while it runs (``{args}`` in a message text); None for an event handler.
        self.args: str | None = None


def make_action(action: Any, unsubscribers: dict[str, Callable[[], Any]], state: _HandlerState, pi: Any = None) -> Act:
    """One handler's behaviour: what it does and returns (a Pi-shaped dict, or ``None`` for nothing)."""
    match action:
        case RecordAction():
            return lambda _event, _ctx: None
        case ThrowAction():

            def throw(_event: Any, _ctx: Any) -> Any:
                raise RuntimeError(action.message)

            return throw
        case SleepAction():

            async def sleep(_event: Any, _ctx: Any) -> Any:
                await asyncio.sleep(timer_seconds(action.ms))
                return None

            return sleep
        case BlockIfMatchAction():
            return _guard(action)
        case MutateInputAction():

            def mutate(event: Any, _ctx: Any) -> Any:
                event.input.update(copy.deepcopy(action.set))
                return None

            return mutate
        case ReplaceResultAction():
            fields = action.patch_fields()

            def replace_result(event: Any, _ctx: Any) -> Any:
                patch: dict[str, Any] = {}
                if "text" in fields:
                    current = blocks_text(to_pi_json(list(event.content))) or ""
                    patch["content"] = [{"type": "text", "text": _fill(fields["text"], current)}]
                if "isError" in fields:
                    patch["isError"] = fields["isError"]
                if "details" in fields:
                    patch["details"] = copy.deepcopy(fields["details"])
                return patch

            return replace_result
        case TransformInputAction() if action.handled:
            return lambda _event, _ctx: {"action": "handled"}
        case TransformInputAction():
            return lambda event, _ctx: {"action": "transform", "text": _fill(action.text, event.text or "")}
        case InjectMessageAction():
            return lambda _event, _ctx: {
                "message": {"customType": action.custom_type, "content": action.content, "display": action.display}
            }
        case ReplaceMessageAction():
            return _replace_message(action)
        case ContinueOnceAction():

            def continue_once(event: Any, _ctx: Any) -> Any:
                if state.invocations != action.at:
                    return None
                if action.entry is None:
                    return {"continue": True}
                entry = {
                    "type": "custom_message",
                    "customType": action.entry.custom_type,
                    "content": action.entry.content,
                    "display": action.entry.display,
                }
                return {"entries": [*to_pi_json(list(getattr(event, "entries", None) or ())), entry], "continue": True}

            return continue_once
        case UnsubscribeAction():

            def unsubscribe(_event: Any, _ctx: Any) -> Any:
                if state.invocations == 1 and action.target in unsubscribers:
                    unsubscribers[action.target]()
                return None

            return unsubscribe
        case (
            ReturnValueAction()
            | ContinueTimesAction()
            | TrustAction()
            | CancelCompactionAction()
            | SupplySummaryAction()
            | AppendSystemPromptAction()
            | SetActiveToolsAction()
            | SetThinkingLevelAction()
            | DropMessagesAction()
        ):
            return _app_action(action, state, pi)
        case AppendEntryAction() | SendMessageAction() | SendUserMessageAction() | SetModelAction():
            return api_action(action, state, pi)
        case _:
            assert_never(action)


def _entry_draft(entry: Any) -> dict[str, Any]:
    return {
        "type": "custom_message",
        "customType": entry.custom_type,
        "content": entry.content,
        "display": entry.display,
    }


def _app_action(action: Any, state: _HandlerState, pi: Any) -> Act:
    """pinb's application-layer actions (scenarios/README.md)."""
    match action:
        case ReturnValueAction():
            return lambda _event, _ctx: copy.deepcopy(action.value)
        case ContinueTimesAction():

            def continue_times(event: Any, _ctx: Any) -> Any:
                if state.invocations > action.times:
                    return None
                if action.entry is None:
                    return {"continue": True}
                entries = [*to_pi_json(list(event.entries or ())), _entry_draft(action.entry)]
                return {"entries": entries, "continue": True}

            return continue_times
        case TrustAction():
            trust: dict[str, Any] = {"trusted": action.trusted}
            if action.remember is not None:
                trust["remember"] = action.remember
            return lambda _event, _ctx: dict(trust)
        case CancelCompactionAction():
            return lambda _event, _ctx: {"cancel": True}
        case SupplySummaryAction():

            def supply(event: Any, _ctx: Any) -> Any:
                prep = event.preparation
                compaction = {"summary": action.summary, "firstKeptEntryId": prep.first_kept_entry_id}
                return {"compaction": {**compaction, "tokensBefore": prep.tokens_before}}

            return supply
        case AppendSystemPromptAction():

            def append(event: Any, _ctx: Any) -> Any:
                if state.invocations != action.at:
                    return None
                return {"systemPrompt": event.system_prompt + action.text}

            return append
        case SetActiveToolsAction():

            def set_active(_event: Any, _ctx: Any) -> Any:
                if state.invocations == action.at:
                    pi.set_active_tools(list(action.tools))
                return None

            return set_active
        case SetThinkingLevelAction():

            def set_level(_event: Any, _ctx: Any) -> Any:
                if state.invocations == action.at:
                    pi.set_thinking_level(action.level)
                return None

            return set_level
        case DropMessagesAction():

            def drop(event: Any, _ctx: Any) -> Any:
                kept = [m for m in event.messages if blocks_text(to_pi_json(m).get("content")) != action.text]
                return {"messages": kept}

            return drop
    raise AssertionError(action)


def _with_args(text: str, args: str | None) -> str:
    return text if args is None else args.join(text.split("{args}"))


def api_action(action: Any, state: _HandlerState, pi: Any) -> Act:
    """The extension API actions (docs/scenario-format.md "Extension API actions"): on the ``at``-th invocation
    one ``pi`` call, as the runner makes it; nothing returned. In a command, ``{args}`` is the arguments."""

    def due() -> bool:
        return bool(state.invocations == action.at)

    match action:
        case AppendEntryAction():

            def append(_event: Any, _ctx: Any) -> Any:
                if due():
                    pi.append_entry(action.custom_type, copy.deepcopy(action.data))
                return None

            return append
        case SendMessageAction():

            def send(_event: Any, _ctx: Any) -> Any:
                if due():
                    message: dict[str, Any] = {
                        "customType": action.custom_type,
                        "content": _with_args(action.content, state.args),
                        "display": action.display,
                    }
                    if "details" in action.model_fields_set:
                        message["details"] = copy.deepcopy(action.details)
                    pi.send_message(message, trigger_turn=action.trigger_turn, deliver_as=action.deliver_as)
                return None

            return send
        case SendUserMessageAction():

            def send_user(_event: Any, _ctx: Any) -> Any:
                if due():
                    pi.send_user_message(
                        _with_args(action.text, state.args),
                        deliver_as=action.deliver_as,
                        expand_prompt_templates=bool(action.expand_prompt_templates),
                    )
                return None

            return send_user
        case SetModelAction():

            async def set_model(_event: Any, ctx: Any) -> Any:
                if due():
                    model = ctx.model_registry.find("faux", action.model)
                    if model is None:
                        raise RuntimeError(f"no model faux/{action.model}")
                    await pi.set_model(model)
                return None

            return set_model
    raise AssertionError(action)


def _guard(action: BlockIfMatchAction) -> Act:
    # Each pattern is compiled when the handler reaches it, as `patterns.find(s => new RegExp(s).test(subject))`
    # does: an invalid one throws inside the handler (which blocks the call), and only once it is reached.
    async def guard(event: Any, ctx: Any) -> Any:
        if event.tool_name not in action.tool_names:
            return None
        if action.match_on == "command":
            command = event.input.get("command") if isinstance(event.input, dict) else None
            subject = _js_string(command)
        else:
            subject = json_stringify(event.input) or ""
        pattern = next((source for source in action.patterns if js_regex(source).search(subject)), None)
        if pattern is None:
            return None
        if action.confirm_with_ui and ctx.has_ui:
            allowed = await ctx.ui.confirm(action.confirm_title, js_slice(subject, 0, 200))
            if allowed:
                return None
            return {"block": True, "reason": action.denied_reason}
        return {"block": True, "reason": pattern.join(action.reason_template.split("{pattern}"))}

    return guard


def _replace_message(action: ReplaceMessageAction) -> Act:
    def fill_block(block: Any) -> Any:
        if _get(block, "type") != "text":
            return block
        if isinstance(block, dict):
            return {**block, "text": _fill(action.text, block["text"])}
        return block.model_copy(update={"text": _fill(action.text, block.text)})

    def replace(event: Any, _ctx: Any) -> Any:
        message = event.message
        if _get(message, "role") != action.role:
            return None
        content = _get(message, "content")
        new_content = _fill(action.text, content) if isinstance(content, str) else tuple(fill_block(b) for b in content)
        role = {"role": action.as_role} if action.as_role is not None else {}
        if isinstance(message, dict):
            return {"message": {**message, "content": list(new_content), **role}}
        return {"message": message.model_copy(update={"content": new_content, **role})}

    return replace


def inline_extension(
    extension: Extension, writer: TraceWriter, unsubscribers: dict[str, Callable[[], Any]]
) -> Callable[[ExtensionAPI], None]:
    """The extension factory for one scenario extension: one ``pi.on`` per handler, in array order."""

    def factory(pi: ExtensionAPI) -> None:
        for handler in extension.handlers:
            _register(pi, extension.name, handler, writer, unsubscribers)
        for command in extension.commands:
            register_command(pi, extension.name, command, writer)

    return factory


def _register(
    pi: ExtensionAPI,
    extension_name: str,
    handler: Handler,
    writer: TraceWriter,
    unsubscribers: dict[str, Callable[[], Any]],
) -> None:
    state = _HandlerState()
    # With `occurrences` the action acts on each listed occurrence as on its `at`-th invocation.
    act_state = state if handler.occurrences is None else _HandlerState()
    act = make_action(handler.action, unsubscribers, act_state, pi)

    async def registered(event: Any, ctx: Any) -> Any:
        state.invocations += 1
        on_entry = snapshot(event)
        # `occurrences`: the action runs only on those invocations; on the others the handler returns nothing.
        due = handler.occurrences is None or state.invocations in handler.occurrences
        if due and act_state is not state:
            act_state.invocations = getattr(handler.action, "at", 1)
        try:
            result = act(event, ctx) if due else None
            if asyncio.iscoroutine(result):
                result = await result
        except Exception as exc:
            writer.ext(extension_name, handler.label, on_entry, error=error_text(exc))
            raise
        traced = result
        if isinstance(result, dict) and isinstance(result.get("systemPrompt"), str):
            traced = {**result, "systemPrompt": scrub(result["systemPrompt"])}
        writer.ext(extension_name, handler.label, on_entry, result=traced)
        return result

    unsubscribe = pi.on(handler.event, registered)  # type: ignore[call-overload]
    if handler.label is not None:
        unsubscribers[handler.label] = unsubscribe


def register_command(pi: ExtensionAPI, extension_name: str, command: Command, writer: TraceWriter) -> None:
    """``extensions[].commands[]``: ``pi.registerCommand(name, …)`` whose handler performs the command's action and
    writes one ``ext`` line ``command`` (``{args}`` in a message text is the command's arguments)."""
    state = _HandlerState()
    act = make_action(command.action, {}, state, pi)

    async def run(args: str, ctx: Any) -> None:
        state.invocations += 1
        state.args = args
        try:
            result = act({}, ctx)
            if asyncio.iscoroutine(result):
                result = await result
        except Exception as exc:
            writer.command(extension_name, command.name, args, error=error_text(exc))
            raise
        writer.command(extension_name, command.name, args, result=result)

    pi.register_command(command.name, handler=run, description=command.description)


def _stamped_at_request(message: Any) -> Callable[[], Any]:
    # As the real-Pi runner does on layer app: the reply is stamped when the request is made, strictly after
    # everything before it (Pi compares reply and compaction times).
    return lambda: message.model_copy(update={"timestamp": stamp_later_than_now()})


def _recovery_options(scenario: Scenario, faux: Any) -> dict[str, Any]:
    """The faux model's limits and Pi's compaction and retry settings the scenario sets (others: Pi's defaults)."""
    if scenario.model is not None:
        limits = {"context_window": scenario.model.context_window, "max_tokens": scenario.model.max_tokens}
        faux.model = faux.model.model_copy(update={k: v for k, v in limits.items() if v is not None})
    settings = scenario.effective_settings
    compaction = settings.compaction.model_dump(exclude_none=True) if settings.compaction else {}
    retry = settings.retry.model_dump(exclude_none=True) if settings.retry else {}
    return {
        "compaction": replace(DEFAULT_COMPACTION_SETTINGS, **compaction),
        "retry": replace(RetrySettings(), **retry),
    }


async def run_app_layer(scenario: Scenario, writer: TraceWriter) -> None:
    faux = make_faux(scenario, writer)
    faux.set_responses([_stamped_at_request(message) for message in scripted_responses(scenario)])
    recovery = _recovery_options(scenario, faux)
    settings = scenario.effective_settings
    ui = scenario.effective_ui
    commands: list[str] = []
    unsubscribers: dict[str, Callable[[], Any]] = {}

    def on_error(record: ExtensionErrorRecord) -> None:
        writer.write(
            "error",
            "extension_error",
            {"extension": record.extension_path, "event": record.event, "error": record.error},
        )

    model_settings = scenario.model
    if model_settings is not None and (model_settings.id is not None or model_settings.reasoning is not None):
        update = {"id": model_settings.id or faux.model.id, "reasoning": bool(model_settings.reasoning)}
        faux.model = faux.model.model_copy(update=update)
    others = other_models(scenario, faux)
    session: Any = None
    if scenario.observe is not None and scenario.observe.requests:
        previous = faux.on_request

        def on_request(request: Any) -> None:
            if previous is not None:
                previous(request)
            request_line(writer, request, session)

        faux.on_request = on_request
    extensions = [(ext.name, inline_extension(ext, writer, unsubscribers)) for ext in scenario.extensions]
    project = scenario.project
    cwd = project_cwd(project)

    async def start_session(manager: SessionManager | None = None, start: SessionStartEvent | None = None) -> Any:
        # One session built, bound and listened to, as the runner's startSession builds it; the runtime's
        # create_runtime builds each replacement the same way (trust asked again, extensions loaded afresh).
        nonlocal session
        space = None
        if project is not None:
            trusted = True
            if project.trust == "ask":
                # Pi asks the project_trust handlers of a bootstrap load of the same extensions.
                trusted = await _ask_trust(project, extensions, writer)
            else:
                trusted = project.trust == "trusted"
            space = workspace(project, trusted)
        created: AgentSession = await create_agent_session(
            stream_fn=faux.stream,
            model=faux.get_model(),
            tools=build_tools(scenario.tools, commands),
            extensions=extensions,
            cwd=cwd,
            workspace=space,
            system_prompt=scenario.system_prompt,
            thinking_level=model_settings.thinking_level or "off" if model_settings is not None else "off",
            tool_execution=settings.tool_execution,
            steering_mode=settings.steering_mode,
            follow_up_mode=settings.follow_up_mode,
            session_manager=manager or SessionManager(cwd),
            bind=False,
            models=others,
            **recovery,
        )
        options = created._base_prompt_options
        options.package_dir = PI_DIR
        for tool in scenario.tools:
            # Scenario tools are custom tools (the runner's customTools): one that takes a built-in tool's name
            # replaces its definition, prompt snippet and guidelines included.
            options.tool_snippets.pop(tool.name, None)
            options.tool_guidelines.pop(tool.name, None)
            if tool.prompt_snippet is not None:
                options.tool_snippets[tool.name] = tool.prompt_snippet
            if tool.prompt_guidelines is not None:
                options.tool_guidelines[tool.name] = list(tool.prompt_guidelines)
        session = created
        await created.bind_extensions(
            ui=ScriptedUI(confirm=ui.confirm, on_call=lambda call: _record_dialog(writer, call)) if ui.has_ui else None,
            on_error=on_error,
            session_start_reason=start.reason if start is not None else "startup",
        )
        created.subscribe(listener)
        return created

    triggers = Triggers(scenario.queue, writer)
    pending: set[asyncio.Task[Any]] = set()

    def work_of(trigger: Trigger) -> Any:
        if trigger.do == "steer":
            return session.steer(trigger.text or "")
        if trigger.do == "follow_up":
            return session.follow_up(trigger.text or "")
        if trigger.do == "prompt":
            return session.prompt(trigger.text or "", streaming_behavior=trigger.streaming_behavior)
        return None

    async def fire_all(due: list[Trigger]) -> None:
        # The runner's `fire`: the triggers of one event one after another, each awaited (`await session.steer`)
        # but an abort, which is fired without awaiting it (`void session.abort()`).
        for trigger in due:
            triggers.announce(trigger)
            work = work_of(trigger)
            if work is None:
                spawn(start_like_javascript(_reporting(session.abort(), triggers)))
                continue
            try:
                await work
            except Exception as exc:
                triggers.rejected(exc)

    def spawn(task: asyncio.Task[Any] | None) -> None:
        if task is not None:
            pending.add(task)
            task.add_done_callback(pending.discard)

    def listener(event: Any) -> None:
        writer.event("session", event)
        due = triggers.due(event.type)
        if due:
            # Real Pi's listener fires these without awaiting them (`void`): they complete a few ticks later.
            spawn(start_like_javascript(fire_all(due)))

    await start_session()
    runtime = AgentSessionRuntime(session, lambda manager, start: start_session(manager, start))
    # Queued before the first prompt (`when: "start"`): each action runs to its end first.
    await fire_all(triggers.due("start"))
    await drive_prompts(scenario.prompts, session.prompt, writer)
    shut_down = await drive_steps(scenario, runtime, writer)
    if not shut_down:
        await session.wait_for_idle()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    writer.write("driver", "dispose")
    session.dispose()
    scrub_lines(writer.lines)


def other_models(scenario: Scenario, faux: Any) -> list[Any]:
    """``model.others``: the faux provider's other models (faux defaults where a field is absent)."""
    if scenario.model is None:
        return []
    models = []
    for other in scenario.model.others:
        fields = {"context_window": other.context_window, "max_tokens": other.max_tokens}
        update = {"id": other.id, "name": other.id, "reasoning": bool(other.reasoning)}
        update.update({k: v for k, v in fields.items() if v is not None})
        models.append(faux.model.model_copy(update={**_FAUX_DEFAULT_LIMITS, **update}))
    return models


_FAUX_DEFAULT_LIMITS = {"context_window": 128000, "max_tokens": 16384}


def _record_dialog(writer: TraceWriter, call: UICall) -> None:
    """A `driver` `ui` line: what the scripted person was asked and answered (Pi's events carry the title only)."""
    if call.kind in DIALOG_KINDS:
        writer.write(
            "driver", "ui", {"kind": call.kind, "title": call.title, "message": call.message, "answer": call.answer}
        )


DIALOG_KINDS = frozenset({"select", "confirm", "input", "editor"})


async def _ask_trust(project: Any, extensions: list[Any], writer: TraceWriter) -> bool:
    """Pi's bootstrap pass: the same extensions loaded on their own, asked ``project_trust``, then dropped."""
    from pinb.app.extensions.api import load_extensions
    from pinb.app.extensions.runner import ExtensionRunner
    from pinb.app.session_tree import SessionManager

    loaded = await load_extensions(list(extensions))
    cwd = project_cwd(project)
    runner = ExtensionRunner(loaded.extensions, loaded.runtime, cwd=cwd, session_manager=SessionManager())
    return await resolve_trust(project, runner, writer)


def start_like_javascript(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
    """Call ``coro`` the way JavaScript calls an async function: its body runs at once, up to its first real
    suspension, and the rest continues as a task (``None`` when it finished without suspending).

    Real Pi's listener fires ``void session.abort()``, whose synchronous part aborts the agent before the listener
    returns; a plain ``asyncio`` task would start one loop iteration later, when a tool may already have started.
    (Python 3.12's eager tasks do the same; pinb supports 3.11.)
    """
    try:
        first = coro.send(None)
    except StopIteration:
        return None

    async def rest(waiting: Any) -> Any:
        while True:
            if waiting is None:  # a bare yield: asyncio.sleep(0)
                await asyncio.sleep(0)
            else:
                if asyncio.isfuture(waiting):
                    # The future came out of coro.send(), not a Task's step, so nobody reset the flag its await
                    # set; awaiting it again while pending would raise "await wasn't used with future".
                    waiting._asyncio_future_blocking = False
                try:
                    await waiting
                except asyncio.CancelledError:
                    if not waiting.done():  # this task was cancelled, not the awaited future
                        coro.close()
                        raise
                except BaseException:  # the coroutine sees the outcome when it resumes
                    pass
            try:
                waiting = coro.send(None)
            except StopIteration as stop:
                return stop.value

    return asyncio.ensure_future(rest(first))


async def _reporting(work: Any, triggers: Triggers) -> None:
    try:
        await work
    except Exception as exc:
        triggers.rejected(exc)
