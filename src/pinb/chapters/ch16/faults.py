"""Chapter 16's own named faults: stand-in bugs its sentences speak of that the chapter's first judges missed.

The same switchboard as `pinb.testing.faults` (a `Fault` per name, patches built when it is injected): each of
these passed the old single-scenario judge and is caught by the claim's property on its witness family (and, where
the hand witness now reaches the path, on that one too). `pinb.testing.faults` loads them (`injected`, `claims
faults`, `check-judges`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pinb.testing.faults import Fault, Patch, registrar

FAULTS: dict[str, Fault] = {}
fault = registrar(FAULTS)


def _runner() -> Any:
    from pinb.app.extensions.runner import ExtensionRunner

    return ExtensionRunner


#: Events whose handlers' results Pi uses; the others only notify.
_ACTING = {
    "tool_call",
    "tool_result",
    "input",
    "before_agent_start",
    "message_end",
    "context",
    "context_with_system",
    "turn_end",
    "agent_before_settle",
    "resources_discover",
    "session_before_compact",
    "project_trust",
}


@fault(
    "handlers-sorted-by-extension-name",
    "handlers run in the alphabetical order of their extensions' names instead of the order they were loaded in",
)
def _by_name() -> list[Patch]:
    def build(orig: Any) -> Any:
        return lambda self, event_type: sorted(orig(self, event_type), key=lambda pair: pair[0].path)

    return [(_runner(), "_snapshot", build)]


@fault(
    "notify-handlers-not-awaited",
    "a notification-only event's async handlers are started and not awaited (tool_call and the other acting "
    "events still await theirs)",
)
def _notify_not_awaited() -> list[Patch]:
    import asyncio

    from pinb.app.extensions import runner

    started: set[asyncio.Future[Any]] = set()

    def build(orig: Any) -> Any:
        async def call(handler: Any, event: Any, ctx: Any) -> Any:
            if getattr(event, "type", None) in _ACTING:
                return await orig(handler, event, ctx)
            value = handler(event, ctx)
            if asyncio.iscoroutine(value):
                task = asyncio.ensure_future(value)
                started.add(task)
                task.add_done_callback(lambda done: (started.discard(done), done.cancelled() or done.exception()))
                return None
            return value

        return call

    return [(runner, "call_handler", build)]


@fault(
    "execution-start-block-honoured",
    "a { block: true } returned by a tool_execution_start handler (an event that declares no result) aborts the run, "
    "as if it were tool_call's",
)
def _execution_block() -> list[Patch]:
    from pinb.app.extensions import runner

    def build(orig: Any) -> Any:
        async def call(handler: Any, event: Any, ctx: Any) -> Any:
            value = await orig(handler, event, ctx)
            if (
                getattr(event, "type", None) == "tool_execution_start"
                and isinstance(value, dict)
                and value.get("block")
            ):
                ctx.abort()
            return value

        return call

    return [(runner, "call_handler", build)]


@fault(
    "js-slice-by-code-point",
    "the stand-in's JavaScript String.prototype.slice counts code points instead of UTF-16 code units",
)
def _slice_code_points() -> list[Patch]:
    from pinb.ai import jsjson

    return [(jsjson, "js_slice", lambda orig: lambda text, start, end: text[start:end])]


@fault(
    "js-regex-python-semantics",
    "the stand-in compiles JavaScript regexes as Python ones: Unicode \\b, \\w and \\s instead of JavaScript's",
)
def _python_regex() -> list[Patch]:
    import regex

    from pinb.ai import jsregex

    def build(orig: Any) -> Any:
        def compile_(source: str, flags: str = "") -> Any:
            return jsregex.JsPattern(source, "u", regex.compile(source, regex.IGNORECASE if "i" in flags else 0))

        return compile_

    return [(jsregex, "js_regex", build)]


@fault(
    "turn-end-entries-dropped-after-tools",
    "entries a turn_end handler proposes are discarded when the turn ran tool calls (only a text-only turn's count)",
)
def _turn_end_entries() -> list[Patch]:
    def build(orig: Any) -> Any:
        async def emit_boundary(self: Any, event_model: Any, base: dict[str, Any], build_context: Any) -> Any:
            outcome = await orig(self, event_model, base, build_context)
            if base.get("tool_results"):
                return dataclasses.replace(outcome, entries=())
            return outcome

        return emit_boundary

    return [(_runner(), "emit_boundary", build)]


@fault(
    "auto-retry-once",
    "a transient provider error is retried once, not up to settings.retry.maxRetries (3) times",
)
def _retry_once() -> list[Patch]:
    from pinb.app.session import AgentSession

    def build(orig: Any) -> Any:
        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            orig(self, *args, **kwargs)
            self.retry_settings = dataclasses.replace(self.retry_settings, max_retries=1)

        return init

    return [(AgentSession, "__init__", build)]


__all__ = ["FAULTS", "fault"]
