"""Scenario tools for the stand-in: ``AgentTool`` s built from ``behavior`` (scenario-format.md "Tools").

Nothing here touches the host: ``simulated_bash`` records the command and answers with the scripted output.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any, assert_never

from pinb.agent import AgentTool, AgentToolResult
from pinb.ai import AbortError, AbortSignal, TextContent, sleep_or_abort
from pinb.ai.timers import timer_seconds
from pinb.scenario.model import (
    ReturnBehavior,
    SimulatedBashBehavior,
    SleepBehavior,
    SleepThen,
    ThrowBehavior,
    Tool,
    WordCountBehavior,
)

# JavaScript's \s (ECMAScript WhiteSpace + LineTerminator), which differs from Python's str.split().
_JS_SPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")


def js_word_count(text: str) -> int:
    """``text.trim().split(/\\s+/).filter(Boolean).length`` in JavaScript."""
    return len([w for w in _JS_SPACE.split(text) if w])


def _text_result(text: str, details: Any, is_error: bool) -> AgentToolResult:
    # JavaScript's `details ?? {}`: an explicit null is replaced too.
    return AgentToolResult(
        content=(TextContent(text=text),),
        details={} if details is None else details,
        is_error=True if is_error else None,
    )


def _terminating(result: AgentToolResult, terminate: bool | None) -> AgentToolResult:
    # A result's `terminate` (as given): Pi ends the run after a batch whose every result terminates.
    return result if terminate is None else result.model_copy(update={"terminate": terminate})


Execute = Callable[[str, Any, AbortSignal | None, Callable[[AgentToolResult], Any]], Any]


def make_execute(tool: Tool, commands: list[str]) -> Execute:
    """``execute()`` for one scenario tool; ``commands`` collects what ``simulated_bash`` was asked to run."""
    behavior = tool.behavior
    match behavior:
        case WordCountBehavior():

            async def word_count(_id: str, params: Any, _signal: Any, _on_update: Any) -> AgentToolResult:
                text = params.get("text") if isinstance(params, dict) else None
                if not isinstance(text, str):
                    raise RuntimeError("word_count: text must be a string")
                n = js_word_count(text)
                return AgentToolResult(content=(TextContent(text=str(n)),), details={"words": n})

            return word_count
        case ReturnBehavior():

            async def fixed(_id: str, _params: Any, _signal: Any, _on_update: Any) -> AgentToolResult:
                return _terminating(
                    _text_result(behavior.text, behavior.details, behavior.is_error), behavior.terminate
                )

            return fixed
        case ThrowBehavior():

            async def throw(_id: str, _params: Any, _signal: Any, _on_update: Any) -> AgentToolResult:
                raise RuntimeError(behavior.message)

            return throw
        case SleepBehavior():
            return _sleeper(tool.name, behavior)
        case SimulatedBashBehavior():

            async def bash(_id: str, params: Any, _signal: Any, _on_update: Any) -> AgentToolResult:
                commands.append(params.get("command") if isinstance(params, dict) else None)
                text = behavior.stdout if behavior.stdout else "(no output)"
                if behavior.exit_code != 0:
                    text += f"\n\nCommand exited with code {behavior.exit_code}"
                    return AgentToolResult(content=(TextContent(text=text),), is_error=True)
                return AgentToolResult(content=(TextContent(text=text),))

            return bash
        case _:
            assert_never(behavior)


def _sleeper(name: str, behavior: SleepBehavior) -> Execute:
    then: SleepThen = behavior.then

    async def sleep(_id: str, _params: Any, signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise RuntimeError(f"{name} aborted")
        for update in behavior.updates:
            outcome = on_update(AgentToolResult(content=(TextContent(text=update),), details={}))
            if asyncio.iscoroutine(outcome):
                await outcome
        await sleep_or_abort_named(behavior.ms, signal, name)
        return _terminating(_text_result(then.text, then.details, then.is_error), then.terminate)

    return sleep


async def sleep_or_abort_named(ms: int, signal: AbortSignal | None, name: str) -> None:
    """Wait ``ms``; an abort meanwhile (or before) raises ``Error("<name> aborted")`` at once."""
    try:
        await sleep_or_abort(timer_seconds(ms), signal, f"{name} aborted")
    except AbortError as exc:
        raise RuntimeError(f"{name} aborted") from exc


def build_tools(tools: tuple[Tool, ...], commands: list[str]) -> list[AgentTool]:
    """One ``AgentTool`` per scenario tool, in declaration order."""
    return [
        AgentTool(
            name=tool.name,
            label=tool.name,
            description=tool.effective_description(),
            parameters=tool.effective_parameters(),
            execute=make_execute(tool, commands),
            execution_mode=tool.execution_mode,
        )
        for tool in tools
    ]
