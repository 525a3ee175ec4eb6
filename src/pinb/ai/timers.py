"""Time in the stand-in: Node's ``setTimeout`` delay rule, and the wall-clock limit of a run.

Node clamps a timer delay above 2**31 - 1 ms (about 24.8 days) to 1 ms, so a scenario asking real Pi to sleep
``1e12`` ms, or a faux stream at ``tokens_per_second: 1e-9``, does not wait at all; ``timer_seconds`` applies the
same rule so the stand-in does what Pi does.

``time_limit(seconds)`` bounds a run. Awaited work is bounded by cancelling it from outside (``asyncio.wait_for``);
CPU-bound work that never yields to the event loop, such as a regular expression backtracking catastrophically,
asks ``remaining()`` and stops itself with ``TimeLimitExceeded``. That exception derives from ``BaseException`` on
purpose: Pi's error paths (a throwing handler blocks its tool call, a failing validation becomes an error result)
catch ``Exception`` and turn it into data, and a run that ran out of time must end instead.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "NODE_TIMEOUT_MAX_MS",
    "DeadlineExceeded",
    "TimeLimit",
    "TimeLimitExceeded",
    "hard_deadline",
    "remaining",
    "time_limit",
    "timer_seconds",
]

NODE_TIMEOUT_MAX_MS: Final = 2**31 - 1


def timer_seconds(ms: float) -> float:
    """The seconds a ``setTimeout(fn, ms)`` in Node waits: a delay above 2**31 - 1 ms (or NaN) becomes 1 ms."""
    if isinstance(ms, int):
        if ms > NODE_TIMEOUT_MAX_MS:
            return 0.001
        return ms / 1000
    if math.isnan(ms) or ms > NODE_TIMEOUT_MAX_MS:
        return 0.001
    return ms / 1000


class TimeLimitExceeded(BaseException):
    """A run went past its wall-clock limit; the message says what was running (one line)."""


@dataclass
class TimeLimit:
    """One run's limit: ``seconds`` from ``started`` (``time.monotonic``); ``reason`` once it was exceeded."""

    seconds: float
    started: float
    reason: str | None = None

    def remaining(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def exceeded(self, what: str) -> TimeLimitExceeded:
        """Record (first reason wins) and return the exception that ends the run."""
        if self.reason is None:
            self.reason = what
        return TimeLimitExceeded(self.reason)


_LIMIT: ContextVar[TimeLimit | None] = ContextVar("pinb_time_limit", default=None)


def current_limit() -> TimeLimit | None:
    return _LIMIT.get()


def remaining() -> float | None:
    """Seconds left in the current run's limit (possibly <= 0), or ``None`` outside a limited run."""
    limit = _LIMIT.get()
    return None if limit is None else limit.remaining()


@contextmanager
def time_limit(seconds: float) -> Iterator[TimeLimit]:
    """Bound the work done inside (in this context and the tasks it starts) to ``seconds`` of wall-clock time."""
    limit = TimeLimit(seconds=seconds, started=time.monotonic())
    token = _LIMIT.set(limit)
    try:
        yield limit
    finally:
        _LIMIT.reset(token)


class DeadlineExceeded(BaseException):
    """Raised into a thread whose `hard_deadline` passed (a `BaseException`, for the reason above)."""


@contextmanager
def hard_deadline(seconds: float) -> Iterator[None]:
    """End the work done in this thread inside after `seconds`, even work that never yields and never asks
    `remaining()` (a loop over 200,000 scripted responses): a watchdog thread raises `DeadlineExceeded` into this
    thread, which Python delivers between two bytecodes. Work inside one long C call ends when the call returns.

    For synchronous callers (the command line): inside an event loop that others share (Jupyter) the exception
    could land in their code, so `arun_on_standin` keeps to `time_limit` there.
    """
    import ctypes
    import threading

    target = ctypes.c_ulong(threading.get_ident())
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def fire() -> None:
        while True:
            with lock:
                if state["done"]:
                    return
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(target, ctypes.py_object(DeadlineExceeded))
            time.sleep(0.2)  # again, until the work is over: a handler or a finalizer may have swallowed it

    previous_hook = sys.unraisablehook

    def unraisable(info: Any) -> None:
        # one that landed in a finalizer is dropped silently (the next one ends the work), never printed
        if not isinstance(info.exc_value, DeadlineExceeded):
            previous_hook(info)

    watchdog = threading.Timer(seconds, fire)
    watchdog.daemon = True
    sys.unraisablehook = unraisable
    watchdog.start()
    try:
        yield
    finally:
        watchdog.cancel()
        with lock:
            state["done"] = True
            if state["fired"]:  # one may be pending still, not yet delivered: withdraw it
                ctypes.pythonapi.PyThreadState_SetAsyncExc(target, None)
        sys.unraisablehook = previous_hook
