"""``AssistantMessageEventStream``: one response's events, then its final message (pi-ai's event stream).

Pull-based: the producer (an async generator) runs only as the consumer iterates, so a response is produced
exactly as fast as the agent loop consumes it. ``result()`` drains what is left and returns the final message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pinb.ai.types import AssistantMessage, DoneEvent, ErrorEvent


class AssistantMessageEventStream:
    """Async-iterable stream of ``AssistantMessageEvent`` ending in ``done`` or ``error``."""

    __slots__ = ("_events", "_final", "_finished")

    def __init__(self, events: AsyncIterator[Any]) -> None:
        self._events = events
        self._final: AssistantMessage | None = None
        self._finished = False

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        if self._finished:
            return
        try:
            async for event in self._events:
                if isinstance(event, DoneEvent):
                    self._final = event.message
                elif isinstance(event, ErrorEvent):
                    self._final = event.error
                yield event
                if self._final is not None:
                    break
        finally:
            if self._final is not None:
                self._finished = True
                close = getattr(self._events, "aclose", None)
                if close is not None:
                    await close()

    async def result(self) -> AssistantMessage:
        """The final message (drains any events not consumed yet)."""
        if self._final is None and not self._finished:
            async for _ in self._iterate():
                pass
        if self._final is None:
            raise RuntimeError("the response stream ended without a final message")
        return self._final

    @classmethod
    def of_message(cls, message: AssistantMessage) -> AssistantMessageEventStream:
        """A stream with no deltas: just the final ``done``/``error`` event of ``message``."""

        async def events() -> AsyncIterator[Any]:
            if message.stop_reason in ("error", "aborted"):
                yield ErrorEvent(reason=message.stop_reason, error=message)  # type: ignore[arg-type]
            else:
                yield DoneEvent(reason=message.stop_reason, message=message)  # type: ignore[arg-type]

        return cls(events())
