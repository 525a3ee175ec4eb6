"""Helpers for app-layer tests: load factories into a runner, collect reported errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pinb.app.extensions import ExtensionErrorRecord, ExtensionRunner, load_extensions


async def make_runner(
    *factories: tuple[str, Any], ui: Any = None
) -> tuple[ExtensionRunner, list[ExtensionErrorRecord]]:
    """A runner over ``(name, factory)`` pairs in load order, and the list its reported errors land in."""
    loaded = await load_extensions(list(factories))
    assert not loaded.errors, loaded.errors
    runner = ExtensionRunner(loaded.extensions, loaded.runtime)
    runner.set_ui(ui)
    errors: list[ExtensionErrorRecord] = []
    runner.on_error(errors.append)
    return runner, errors


def error_summary(errors: Sequence[ExtensionErrorRecord]) -> list[tuple[str, str, str]]:
    return [(e.extension_path, e.event, e.error) for e in errors]


# --- sessions ------------------------------------------------------------------------------------------------------


def summarize(event: Any) -> str:
    """One short line per session event: type plus what tells events apart in a sequence."""
    from pinb.ai import message_text

    kind = event.type
    if kind in ("message_start", "message_end"):
        message = event.message
        role = message.role
        extra = ""
        if role == "assistant":
            extra = f":{message.stop_reason}"
        elif role in ("user", "custom", "toolResult"):
            extra = f":{message_text(message) or ''}"
        return f"{kind}:{role}{extra}"
    if kind == "message_update":
        return "message_update"
    if kind in ("tool_execution_start", "tool_execution_end"):
        return f"{kind}:{event.tool_name}"
    if kind == "queue_update":
        return f"queue_update:{list(event.steering)}|{list(event.follow_up)}"
    if kind == "entry_appended":
        return f"entry_appended:{event.entry.type}"
    if kind == "agent_settled":
        return f"agent_settled:{event.aborted}"
    if kind == "agent_end":
        return f"agent_end:{[m.role for m in event.messages]}"
    return kind


class Recorder:
    """Collects one line per session event and per extension handler invocation, in observed order."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def session(self, event: Any) -> None:
        if event.type != "message_update":
            self.lines.append("session " + summarize(event))

    def ext(self, label: str, result: Any = None):
        def handler(event: Any, ctx: Any) -> Any:
            self.lines.append(f"ext {label} {event.type}")
            return result

        return handler


def bash_tool(stdout: str = "", calls: list[str] | None = None) -> Any:
    """A simulated bash: records the command, runs nothing, returns ``stdout`` or ``(no output)``."""
    from pinb.agent import AgentTool, text_result

    def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        if calls is not None:
            calls.append(params["command"])
        return text_result(stdout or "(no output)", {})

    schema = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
    return AgentTool(name="bash", parameters=schema, execute=execute, description="Run a command.")


async def make_session(responses: Sequence[Any], *extensions: tuple[str, Any], **options: Any) -> tuple[Any, Any]:
    """A session over a faux provider scripted with ``responses``; returns ``(session, faux)``."""
    from pinb.ai.faux import FauxProvider
    from pinb.app.session import create_agent_session

    faux = FauxProvider()
    faux.set_responses(list(responses))
    options.setdefault("tools", [bash_tool()])
    extensions_list = list(extensions)
    session = await create_agent_session(stream_fn=faux.stream, model=faux.model, extensions=extensions_list, **options)
    return session, faux


def traced(recorder: Recorder, label: str, handler: Any) -> Any:
    """Wrap ``handler`` so the recorder gets ``ext <label> <event type>`` when it returns (as trace ``ext`` lines)."""
    import inspect

    async def wrapper(event: Any, ctx: Any) -> Any:
        result = handler(event, ctx)
        if inspect.isawaitable(result):
            result = await result
        recorder.lines.append(f"ext {label} {event.type}")
        return result

    return wrapper


class TracingAPI:
    """An ``ExtensionAPI`` stand-in for a factory: every ``on`` registration is traced under ``label``."""

    def __init__(self, pi: Any, recorder: Recorder, label: str) -> None:
        self._pi = pi
        self._recorder = recorder
        self._label = label

    def on(self, event: str, handler: Any) -> Any:
        return self._pi.on(event, traced(self._recorder, self._label, handler))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pi, name)


def traced_factory(factory: Any, recorder: Recorder, label: str) -> Any:
    """``factory`` with each of its handlers traced."""

    def wrapped(pi: Any) -> Any:
        return factory(TracingAPI(pi, recorder, label))

    return wrapped
