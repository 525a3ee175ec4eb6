"""Abort signals, like the web platform's ``AbortController`` / ``AbortSignal`` that Pi passes everywhere.

A signal is aborted once and for ever. Code reacts by polling ``signal.aborted``, by registering a listener
(``add_listener``), or by awaiting ``signal.wait()`` (which returns when the signal aborts), for example racing it
against a sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

AbortListener = Callable[[], Any]


class AbortError(Exception):
    """Raised by helpers such as ``sleep_or_abort`` when the signal aborts; its message is the abort reason."""


class AbortSignal:
    """Read-only view of an abort controller's state."""

    __slots__ = ("_aborted", "_listeners", "_reason", "_waiters")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[AbortListener] = []
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def aborted(self) -> bool:
        """True once the controller aborted."""
        return self._aborted

    @property
    def reason(self) -> Any:
        """What ``abort(reason)`` was given (``None`` when nothing)."""
        return self._reason

    def add_listener(self, listener: AbortListener) -> Callable[[], None]:
        """Call ``listener()`` once when the signal aborts (at once if it already has). Returns a remover."""
        if self._aborted:
            listener()
            return lambda: None
        self._listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove

    async def wait(self) -> None:
        """Return when the signal aborts (at once if it already has)."""
        if self._aborted:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(future)

    def __await__(self) -> Any:
        return self.wait().__await__()

    def _abort(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()
        for future in self._waiters:
            if not future.done():
                future.set_result(None)


class AbortController:
    """Owns one ``AbortSignal`` and aborts it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = None) -> None:
        """Abort the signal (idempotent): listeners run synchronously, waiters wake on their next tick."""
        self.signal._abort(reason)


async def sleep_or_abort(seconds: float, signal: AbortSignal | None, message: str = "aborted") -> None:
    """Sleep ``seconds``; raise ``AbortError(message)`` as soon as ``signal`` aborts (at once if it already has)."""
    if signal is None:
        await asyncio.sleep(seconds)
        return
    if signal.aborted:
        raise AbortError(message)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=seconds)
    finally:
        if not waiter.done():
            waiter.cancel()
    if done:
        raise AbortError(message)
