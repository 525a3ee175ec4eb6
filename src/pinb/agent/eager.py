"""Start a coroutine the way JavaScript starts an async function: at once, up to its first suspension.

Pi relies on this in two places: a tool's progress update is emitted (and its listeners run) synchronously inside
``onUpdate``, and the calls of a parallel batch start in source order inside ``Promise.all``. A listener that aborts
on a progress update therefore aborts before the next call of the batch has started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


def run_eagerly(coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
    """Run ``coro`` now until it first suspends; the rest runs as a task. Returns a future of its result."""
    loop = asyncio.get_running_loop()
    try:
        yielded = coro.send(None)
    except StopIteration as stop:
        done = loop.create_future()
        done.set_result(stop.value)
        return done
    except Exception as error:
        failed = loop.create_future()
        failed.set_exception(error)
        return failed
    return asyncio.ensure_future(_resume(coro, yielded))


async def _resume(coro: Coroutine[Any, Any, Any], yielded: Any) -> Any:
    while True:
        try:
            if yielded is None:
                await asyncio.sleep(0)  # a bare yield (asyncio.sleep(0)) inside the coroutine
            else:
                yielded._asyncio_future_blocking = False
                await asyncio.wait({yielded})
        except asyncio.CancelledError:
            coro.close()
            raise
        try:
            yielded = coro.send(None)
        except StopIteration as stop:
            return stop.value
