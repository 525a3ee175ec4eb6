"""The ``standin`` backend: run a scenario on pinb's own agent core or application layer and trace it.

Layer ``agent`` builds an ``Agent`` over the faux provider, like the book's first program; layer ``app`` builds an agent
session with the scenario's extensions (``standin_app``). Both write the same lines the real-Pi runner writes:
``meta`` first, ``driver`` lines for what the runner did, a ``model`` line per provider request and one line per
event the public listener receives; queue triggers fire inside that listener right after the event's line.
"""

from __future__ import annotations

import asyncio
import math
import platform
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from pinb import __version__
from pinb._async import run_sync
from pinb.ai import FauxProvider, TextContent, UserMessage, faux_assistant_message, faux_text, faux_thinking
from pinb.ai.faux import FauxRequest, faux_tool_call
from pinb.ai.timers import DeadlineExceeded, TimeLimitExceeded, VirtualClockLoop, hard_deadline, time_limit
from pinb.errors import ScenarioError, UsageError
from pinb.scenario.model import Response, Scenario, TextBlock, ThinkingBlock, ToolCallBlock, Trigger
from pinb.scenario.trace import TraceWriter

__all__ = ["DEFAULT_TIMEOUT_S", "arun_on_standin", "check_timeout", "run_on_standin"]

#: The time limit of one scenario run on the stand-in (``--timeout`` changes it); the corpus needs < 1 s each.
DEFAULT_TIMEOUT_S = 60.0


def check_timeout(seconds: float) -> float:
    """A usable time limit: finite and positive (``nan`` or ``inf`` would mean no limit at all)."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"a time limit must be a positive number of seconds, not {seconds!r}")
    return float(seconds)


#: How long past its limit a run that never yields is given before it is stopped from outside (`hard_deadline`).
_HARD_GRACE_S = 0.2


def run_on_standin(scenario: Scenario, *, timeout: float = DEFAULT_TIMEOUT_S) -> list[dict[str, Any]]:
    """Run ``scenario`` on the stand-in and return its trace lines (synchronous; use ``arun_on_standin`` in Jupyter).

    The run keeps time on its own clock, which jumps over idle waits (``VirtualClockLoop``): a tool that sleeps
    30 ms ends after the timers due before it and before those due after it, at once. Past ``timeout`` seconds,
    of that clock or of the wall clock, the run ends with one ``ScenarioError`` line: naming the regular expression
    when a match backtracked past it, else saying the scenario did not finish (a long sleep, a slow stream, a loop).
    Work that never yields to the event loop (CPU-bound) is stopped from outside.
    """
    seconds = check_timeout(timeout)
    try:
        with hard_deadline(seconds + _HARD_GRACE_S):
            return run_sync(_limited(scenario, seconds), loop_factory=VirtualClockLoop)
    except DeadlineExceeded:
        raise ScenarioError(_late(scenario, seconds)) from None


def _late(scenario: Scenario, seconds: float) -> str:
    return f"scenario {scenario.id} did not finish within its {seconds:g} s time limit (--timeout)"


async def arun_on_standin(scenario: Scenario, *, timeout: float = DEFAULT_TIMEOUT_S) -> list[dict[str, Any]]:
    """``run_on_standin`` from a running event loop (Jupyter): the run keeps its own loop and clock in a thread."""
    return await asyncio.to_thread(run_on_standin, scenario, timeout=timeout)


async def _limited(scenario: Scenario, seconds: float) -> list[dict[str, Any]]:
    with time_limit(seconds) as limit:
        try:
            lines = await asyncio.wait_for(_run(scenario), seconds)
        except TimeLimitExceeded as exc:
            raise ScenarioError(f"scenario {scenario.id}: {exc}") from None
        except TimeoutError:
            raise ScenarioError(_late(scenario, seconds)) from None
    if limit.reason is not None:  # exceeded where an error path swallowed it; the run is not evidence
        raise ScenarioError(f"scenario {scenario.id}: {limit.reason}")
    return lines


async def _run(scenario: Scenario) -> list[dict[str, Any]]:
    writer = TraceWriter()
    writer.write(
        "meta",
        "scenario",
        {
            "id": scenario.id,
            "layer": scenario.layer,
            "backend": "standin",
            "versions": {"pinb": __version__},
            "python": platform.python_version(),
        },
    )
    if scenario.layer == "agent":
        await _run_agent_layer(scenario, writer)
    else:
        from pinb.scenario.standin_app import run_app_layer

        await run_app_layer(scenario, writer)
    return writer.lines


# --- shared by both layers ---------------------------------------------------------------------------------------


def scripted_responses(scenario: Scenario) -> list[Any]:
    """The faux script; a tool call without an id gets the same made-up id the real runner gives it."""
    return [_scripted(response, index) for index, response in enumerate(scenario.responses)]


def _scripted(response: Response, index: int) -> Any:
    blocks: list[Any] = []
    for block_index, block in enumerate(response.content):
        match block:
            case TextBlock():
                blocks.append(faux_text(block.text))
            case ThinkingBlock():
                blocks.append(faux_thinking(block.thinking))
            case ToolCallBlock():
                call_id = block.id if block.id is not None else f"scripted-{index + 1}-{block_index + 1}"
                blocks.append(faux_tool_call(block.name, dict(block.arguments), id=call_id))
    return faux_assistant_message(
        blocks, stop_reason=response.stop_reason, error_message=response.error_message, timestamp=0
    )


def make_faux(scenario: Scenario, writer: TraceWriter) -> FauxProvider:
    """The faux provider with the scenario's chunking, writing one ``model`` line per request it takes."""
    stream = scenario.effective_settings.stream
    token_size = stream.token_size if stream is not None and stream.token_size is not None else 1000
    rate = stream.tokens_per_second if stream is not None else None

    observe = scenario.layer == "agent" and scenario.observe is not None and scenario.observe.requests

    def on_request(request: FauxRequest) -> None:
        writer.model_request(request.n, request.context.messages, None, exhausted=request.exhausted)
        if observe:  # the application layer writes its own request lines, with the session's branch
            from pinb.scenario.standin_project import request_line

            request_line(writer, request, None)

    faux = FauxProvider(token_size=token_size, tokens_per_second=rate, on_request=on_request)
    faux.set_responses(scripted_responses(scenario))
    return faux


def user_message(text: str) -> UserMessage:
    return UserMessage(content=(TextContent(text=text),), timestamp=0)


class Triggers:
    """The scenario's queue: counts events by type and names the triggers due on each occurrence."""

    def __init__(self, queue: tuple[Trigger, ...], writer: TraceWriter) -> None:
        self._queue = queue
        self._writer = writer
        self._counts: dict[str, int] = {}

    def due(self, event_type: str) -> list[Trigger]:
        """Count one more ``event_type`` event; the triggers it fires, each announced by a ``driver`` line."""
        count = self._counts.get(event_type, 0) + 1
        self._counts[event_type] = count
        return [t for t in self._queue if t.event_type == event_type and t.occurrence == count]

    def announce(self, trigger: Trigger) -> None:
        fields = {"when": trigger.when, "do": trigger.do, "text": trigger.text}
        self._writer.write("driver", "queue", {**fields, "streamingBehavior": trigger.streaming_behavior})

    def fire(self, event_type: str, act: Callable[[Trigger], None]) -> None:
        """Count the event; announce and act on each trigger it fires (called from the public listener)."""
        for trigger in self.due(event_type):
            self.announce(trigger)
            act(trigger)

    def rejected(self, error: BaseException) -> None:
        self._writer.write("driver", "queue_rejected", {"error": error_text(error)})


def error_text(error: BaseException) -> str:
    return str(error)


async def drive_prompts(prompts: Iterable[str], prompt: Callable[[str], Awaitable[Any]], writer: TraceWriter) -> None:
    """Send each scripted prompt as the real runner does: a ``prompt`` line, then resolved or rejected."""
    for text in prompts:
        writer.write("driver", "prompt", {"text": text})
        try:
            await prompt(text)
        except Exception as exc:
            writer.write("driver", "prompt_rejected", {"error": error_text(exc)})
        else:
            writer.write("driver", "prompt_resolved")


# --- layer agent ---------------------------------------------------------------------------------------------------


async def _run_agent_layer(scenario: Scenario, writer: TraceWriter) -> None:
    from pinb.agent import Agent
    from pinb.scenario.standin_hooks import agent_hook_options
    from pinb.scenario.standin_tools import build_tools

    faux = make_faux(scenario, writer)
    settings = scenario.effective_settings
    commands: list[str] = []
    initial_state: dict[str, Any] = {"model": faux.get_model(), "tools": build_tools(scenario.tools, commands)}
    if scenario.system_prompt is not None:
        initial_state["system_prompt"] = scenario.system_prompt
    agent = Agent(
        initial_state=initial_state,
        stream_fn=faux.stream,
        tool_execution=settings.tool_execution,
        steering_mode=settings.steering_mode,
        follow_up_mode=settings.follow_up_mode,
        **agent_hook_options(scenario.hooks),
    )
    triggers = Triggers(scenario.queue, writer)

    def act(trigger: Trigger) -> None:
        try:
            if trigger.do == "steer":
                agent.steer(user_message(trigger.text or ""))
            elif trigger.do == "follow_up":
                agent.follow_up(user_message(trigger.text or ""))
            else:
                agent.abort()
        except Exception as exc:
            triggers.rejected(exc)

    def listener(event: Any, _signal: Any) -> None:
        writer.event("agent", event)
        triggers.fire(event.type, act)

    agent.subscribe(listener)
    triggers.fire("start", act)  # queued before the first prompt (`when: "start"`)
    await drive_prompts(scenario.prompts, agent.prompt, writer)
    writer.write("driver", "dispose")
