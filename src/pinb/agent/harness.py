"""A test harness for the agent core: scripted responses in; events, ``events_of_type()`` and a summary out.

Like the harness of Pi's own suite: an ``Agent`` over the faux provider with one recording listener. Actions can
be attached to the n-th event of a type (``on("tool_execution_start", 1, lambda h: h.agent.steer("..."))``),
which run inside that listener call, right after the event is recorded, like a scenario's queue.

By default each content block streams as a single delta (``token_size=1000``), as in a scenario; pass
``token_size``/``tokens_per_second`` to slow streaming down. ``summary()`` renders each event as one line, for
exact-sequence assertions that read well in a diff::

    message_end assistant/toolUse calls=[word_count]
    tool_execution_end word_count error=false "4" {"words":4}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pinb.agent.agent import Agent, AgentInitialState
from pinb.agent.types import AgentTool, AgentToolResult, ToolExecutionMode, resolve, text_result
from pinb.ai.abort import AbortSignal, sleep_or_abort
from pinb.ai.faux import FauxProvider
from pinb.ai.jsjson import js_stringify
from pinb.ai.types import SystemMessage, TextContent, ToolCall, message_text

Action = Callable[["AgentHarness"], Any]

WORD_COUNT_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class AgentHarness:
    """An ``Agent`` over a ``FauxProvider``, recording every event its listener receives."""

    def __init__(
        self,
        responses: Sequence[Any] = (),
        *,
        tools: Sequence[AgentTool] = (),
        system_prompt: str | None = None,
        token_size: int | tuple[int, int] | None = 1000,
        tokens_per_second: float | None = None,
        **agent_options: Any,
    ) -> None:
        self.faux = FauxProvider(token_size=token_size, tokens_per_second=tokens_per_second)
        self.faux.set_responses(responses)
        initial = AgentInitialState(system_prompt=system_prompt, model=self.faux.get_model(), tools=tools)
        self.agent = Agent(initial_state=initial, stream_fn=self.faux.stream, **agent_options)
        self.events: list[Any] = []
        #: Lines of ``summary`` interleaved with notes (``note()``), in order.
        self.log: list[str] = []
        self._counts: dict[str, int] = {}
        self._actions: list[tuple[str, int, Action]] = []
        self.unsubscribe = self.agent.subscribe(self._record)

    def set_responses(self, responses: Sequence[Any]) -> None:
        self.faux.set_responses(responses)

    def on(self, event_type: str, n: int, action: Action) -> AgentHarness:
        """Run ``action(harness)`` (sync or async) inside the listener call of the ``n``-th ``event_type`` event."""
        self._actions.append((event_type, n, action))
        return self

    def note(self, text: str) -> None:
        """Add a line to ``log`` (for example from an action), to see where it happened."""
        self.log.append(f"# {text}")

    async def prompt(self, input: Any) -> None:
        await self.agent.prompt(input)

    async def continue_(self) -> None:
        await self.agent.continue_()

    async def _record(self, event: Any, signal: AbortSignal) -> None:
        self.events.append(event)
        self._counts[event.type] = self._counts.get(event.type, 0) + 1
        if event.type != "message_update":
            self.log.append(describe(event))
        for event_type, n, action in self._actions:
            if event_type == event.type and self._counts[event.type] == n:
                await resolve(action(self))

    def events_of_type(self, *types: str) -> list[Any]:
        """The recorded events of the given types, in order."""
        return [e for e in self.events if e.type in types]

    def types(self, *, updates: bool = False) -> list[str]:
        """The recorded event types (``message_update`` left out unless ``updates``)."""
        return [e.type for e in self.events if updates or e.type != "message_update"]

    def summary(self, *, updates: bool = False) -> list[str]:
        """One line per recorded event (``message_update`` left out unless ``updates``)."""
        return [describe(e) for e in self.events if updates or e.type != "message_update"]


def describe(event: Any) -> str:
    """One line for an agent event: type, then what identifies it (see the module docstring)."""
    line = event.type
    message = getattr(event, "message", None)
    if message is not None:
        line += " " + _describe_message(message, final=event.type != "message_start")
    if event.type.startswith("tool_execution"):
        line += f" {event.tool_name}"
        if event.type == "tool_execution_start":
            line += f" {js_stringify(event.args)}"
        elif event.type == "tool_execution_update":
            line += f' "{message_text(event.partial_result) or ""}"'
        else:
            result = event.result
            line += f' error={"true" if event.is_error else "false"} "{message_text(result) or ""}"'
            line += f" {js_stringify(result.details)}" + (" terminate" if result.terminate else "")
    if event.type == "turn_end":
        line += f" results={len(event.tool_results)}"
    if event.type == "agent_end":
        line += f" [{','.join(m.role for m in event.messages)}]"
    return line


def _describe_message(message: Any, final: bool) -> str:
    role = getattr(message, "role", "?")
    text = f"{role}/{message.stop_reason}" if role == "assistant" else role
    if isinstance(message, SystemMessage):
        if message.tools_added:
            text += f" +[{','.join(t.name for t in message.tools_added)}]"
        if message.tools_removed:
            text += f" -[{','.join(t.name for t in message.tools_removed)}]"
        return text
    if role == "assistant":
        if not final:
            return text
        calls = [b.name for b in message.content if isinstance(b, ToolCall)]
        body = message_text(message)
        if body:
            text += f' "{body}"'
        if calls:
            text += f" calls=[{','.join(calls)}]"
        if message.error_message:
            text += f" err={message.error_message}"
        return text
    body = message_text(message)
    if role == "toolResult":
        text += f" {message.tool_name}" + (" error" if message.is_error else "")
    return text + (f' "{body}"' if body is not None else "")


# --- tools for tests and examples (nothing here touches the host) ----------------------------------------------


def word_count_tool(*, execution_mode: ToolExecutionMode | None = None) -> AgentTool:
    """A word-count tool: counts ``text``'s whitespace-separated words; details ``{"words": n}``."""

    def execute(tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        n = len(params["text"].split())
        return text_result(str(n), {"words": n})

    return AgentTool(
        name="word_count",
        label="Word Count",
        description="Count the words in a string.",
        parameters=WORD_COUNT_SCHEMA,
        execute=execute,
        execution_mode=execution_mode,
    )


def return_tool(
    name: str,
    text: str = "",
    details: Any = None,
    *,
    is_error: bool = False,
    terminate: bool | None = None,
    execution_mode: ToolExecutionMode | None = None,
    parameters: dict[str, Any] | None = None,
) -> AgentTool:
    """A tool returning a fixed result."""

    def execute(tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        return AgentToolResult(
            content=(TextContent(text=text),),
            details={} if details is None else details,
            is_error=is_error,
            terminate=terminate,
        )

    return AgentTool(
        name=name,
        parameters=parameters or {"type": "object", "properties": {}},
        execute=execute,
        execution_mode=execution_mode,
    )


def throw_tool(name: str, message: str) -> AgentTool:
    """A tool that raises ``RuntimeError(message)``."""

    def execute(tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        raise RuntimeError(message)

    return AgentTool(name=name, parameters={"type": "object", "properties": {}}, execute=execute)


def sleep_tool(
    name: str,
    ms: float,
    text: str = "",
    *,
    updates: Sequence[str] = (),
    details: Any = None,
    execution_mode: ToolExecutionMode | None = None,
) -> AgentTool:
    """Reports each of ``updates``, waits ``ms``, returns ``text``; raises ``"<name> aborted"`` at once on abort."""

    async def execute(tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        for update in updates:
            on_update(text_result(update, {}))
        await sleep_or_abort(ms / 1000, signal, f"{name} aborted")
        return text_result(text, {} if details is None else details)

    return AgentTool(
        name=name, parameters={"type": "object", "properties": {}}, execute=execute, execution_mode=execution_mode
    )
