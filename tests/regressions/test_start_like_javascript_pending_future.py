"""``start_like_javascript`` ran a coroutine up to a pending future (``session.abort()`` waiting for idle) and then
awaited that future again in a task: the first await had set the future's blocking flag, which only a Task resets,
so the second await raised "await wasn't used with future" and the scenario's queued abort was reported rejected."""

from __future__ import annotations

import asyncio

from pinb.scenario.standin_app import start_like_javascript


async def test_a_coroutine_suspended_on_a_pending_future_resumes_when_it_resolves() -> None:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    async def waits() -> str:
        return await future

    task = start_like_javascript(waits())
    assert task is not None
    await asyncio.sleep(0)  # the task is now waiting on the future
    future.set_result("idle")
    assert await task == "idle"
