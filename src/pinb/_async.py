"""Running pinb's async API from synchronous code."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from pinb.errors import UsageError

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T], *, loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None) -> T:
    """Run ``coro`` to completion from synchronous code (scripts, the CLI), on a new loop (``loop_factory``'s).

    Inside a running event loop (Jupyter, an async test) this refuses: use ``await`` there instead.
    pinb never patches the loop (no ``nest_asyncio``).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            return runner.run(coro)
    coro.close()
    raise UsageError("an event loop is already running here (Jupyter?): use `await ...` instead of run_sync(...)")
