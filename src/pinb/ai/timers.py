"""Time in the stand-in: Node's ``setTimeout`` delay rule, the clock a run keeps, and the limits of a run.

Node clamps a timer delay above 2**31 - 1 ms (about 24.8 days) to 1 ms, so a scenario asking real Pi to sleep
``1e12`` ms, or a faux stream at ``tokens_per_second: 1e-9``, does not wait at all; ``timer_seconds`` applies the
same rule so the stand-in does what Pi does.

``time_limit(seconds)`` bounds a run. Awaited work is bounded by cancelling it from outside (``asyncio.wait_for``);
CPU-bound work that never yields to the event loop, such as a regular expression backtracking catastrophically,
asks ``remaining()`` and stops itself with ``TimeLimitExceeded``. That exception derives from ``BaseException`` on
purpose: Pi's error paths (a throwing handler blocks its tool call, a failing validation becomes an error result)
catch ``Exception`` and turn it into data, and a run that ran out of time must end instead.

``VirtualClockLoop`` is the event loop a run keeps time on: when every task waits for a timer, the clock jumps to
the earliest one instead of sleeping. Timers fire in the order of their due times as they would in wall-clock time
(a sleeping tool, a slow handler, a faux stream's chunks, a queued action's wait), so a trace is the same, without
the waits.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, TypeVar, TypeVarTuple

__all__ = [
    "NODE_TIMEOUT_MAX_MS",
    "DeadlineExceeded",
    "TimeLimit",
    "TimeLimitExceeded",
    "VirtualClockLoop",
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


#: How often a fired deadline is raised again while the work has not ended (a handler may have swallowed it).
_REFIRE_S: Final = 0.2


class _Armed:
    """One `hard_deadline`: the thread it ends, and whether it fired and whether the work is over."""

    def __init__(self, target: int) -> None:
        import threading

        self.target = target
        self.lock = threading.Lock()
        self.done = False
        self.fired = False

    def fire(self) -> None:
        import ctypes

        with self.lock:
            if self.done:
                return
            self.fired = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.target), ctypes.py_object(DeadlineExceeded))

    def disarm(self) -> None:
        import ctypes

        with self.lock:
            self.done = True
            if self.fired:  # one may be pending still, not yet delivered: withdraw it
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.target), None)


class _Watchdog:
    """One thread for every `hard_deadline` of the process (a thread started per run cost more than short runs):
    it sleeps until the earliest deadline, fires it, and fires it again every `_REFIRE_S` until it is disarmed."""

    def __init__(self) -> None:
        import threading

        self._cond = threading.Condition()
        self._due: list[tuple[float, int, _Armed]] = []
        self._count = 0
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, armed: _Armed) -> None:
        import threading

        with self._cond:
            self._push(time.monotonic() + seconds, armed)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="pinb-hard-deadline", daemon=True)
                self._thread.start()
            elif self._due[0][2] is armed:
                # Woken only when this deadline comes first: waking it for every run handed the interpreter
                # lock back and forth between the run and the watchdog.
                self._cond.notify()

    def _push(self, when: float, armed: _Armed) -> None:
        import heapq

        self._count += 1
        heapq.heappush(self._due, (when, self._count, armed))

    def _run(self) -> None:
        import heapq

        with self._cond:
            while True:
                while self._due and self._due[0][2].done:
                    heapq.heappop(self._due)
                if not self._due:
                    self._cond.wait()
                    continue
                when, _, armed = self._due[0]
                left = when - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                heapq.heappop(self._due)
                armed.fire()
                self._push(time.monotonic() + _REFIRE_S, armed)


_WATCHDOG = _Watchdog()


@contextmanager
def hard_deadline(seconds: float) -> Iterator[None]:
    """End the work done in this thread inside after `seconds`, even work that never yields and never asks
    `remaining()` (a loop over 200,000 scripted responses): a watchdog thread raises `DeadlineExceeded` into this
    thread, which Python delivers between two bytecodes. Work inside one long C call ends when the call returns.

    For a thread whose work is all inside: in an event loop that others share (Jupyter) the exception could land
    in their code, so `arun_on_standin` runs the scenario in a thread of its own.
    """
    import threading

    armed = _Armed(threading.get_ident())
    previous_hook = sys.unraisablehook

    def unraisable(info: Any) -> None:
        # one that landed in a finalizer is dropped silently (the next one ends the work), never printed
        if not isinstance(info.exc_value, DeadlineExceeded):
            previous_hook(info)

    sys.unraisablehook = unraisable
    _WATCHDOG.arm(seconds, armed)
    try:
        yield
    finally:
        armed.disarm()
        sys.unraisablehook = previous_hook


_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")


class _SkippingSelector:
    """A loop's selector, except that waiting for a timer with nothing ready moves the loop's clock to the timer."""

    def __init__(self, inner: selectors.BaseSelector, loop: VirtualClockLoop) -> None:
        self._inner = inner
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None or timeout <= 0 or self._loop.awaits_outside():
            return self._inner.select(timeout)
        ready = self._inner.select(0)
        if not ready:
            self._loop.skipped += timeout
        return ready

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock jumps over idle waits (``skipped`` seconds so far): when every task waits for a
    timer, the earliest timer fires at once. While something outside the loop can still wake it (work in a thread,
    a socket or a pipe), it waits in wall-clock time like any loop. A run's limits count wall-clock time as well:
    work that never waits is ended by ``time_limit`` and ``hard_deadline``."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped = 0.0
        self._in_threads = 0
        self._own = len(self._selector.get_map())  # the loop's own wake-up pipe
        # asyncio's selector loop asks `_selector.select(timeout)` to sleep until its next timer
        self._selector: selectors.BaseSelector = _SkippingSelector(self._selector, self)  # type: ignore[assignment]

    def time(self) -> float:
        return super().time() + self.skipped

    def run_in_executor(self, executor: Executor | None, func: Callable[[*_Ts], _T], *args: *_Ts) -> asyncio.Future[_T]:
        future = super().run_in_executor(executor, func, *args)
        self._in_threads += 1
        future.add_done_callback(self._thread_done)
        return future

    def _thread_done(self, _future: asyncio.Future[Any]) -> None:
        self._in_threads -= 1

    def awaits_outside(self) -> bool:
        """Whether work in a thread or a registered file (a socket, a pipe) may still wake the loop."""
        return self._in_threads > 0 or len(self._selector.get_map()) > self._own
