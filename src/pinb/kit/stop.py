"""Stop requests: SIGINT, SIGTERM and SIGHUP turned into a flag the executing code checks, never an exception.

An exception raised by a signal lands wherever the main thread happens to be — on Python 3.11 inside
`Thread.join`, where it marks a still-running thread as finished — so while a run is being written the signals
only ask it to stop, and the run ends in order: kernel stopped, executed notebook final, record written.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType

#: The signals that ask a run to stop (SIGHUP: the terminal went away).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@dataclass
class StopRequest:
    signum: int | None = None
    event: threading.Event = field(default_factory=threading.Event)

    def __bool__(self) -> bool:
        return self.signum is not None

    def reason(self) -> str:
        if self.signum == signal.SIGINT:
            return "interrupted (Ctrl-C)"
        name = signal.Signals(self.signum).name if self.signum is not None else "a signal"
        return f"interrupted ({name})"


@contextmanager
def stop_requests() -> Iterator[StopRequest]:
    """While inside, the stop signals only set the request; on leaving, the previous handlers are back.

    Outside the main thread (where no handler can be installed) the request is never set.
    """
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        if request.signum is None:
            request.signum = signum
        request.event.set()

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield request
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def ignore_stop_signals() -> None:
    """For a worker process: a stop reaches it through the process that started it, and only while it writes a
    run; idle, a Ctrl-C at the terminal would kill it and break the pool under the workers still writing."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def redeliver(request: StopRequest) -> None:
    """Send the stop signal again, now to the handler that was there before (Ctrl-C: KeyboardInterrupt)."""
    if request.signum is not None:
        os.kill(os.getpid(), request.signum)
