"""The stand-in's clock (`VirtualClockLoop`): timers fire in the order they are due, without the wait, and
anything that can wake the loop from outside (a thread, a socket) is still waited for in wall-clock time."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from pathlib import Path

import pytest

from pinb._async import run_sync
from pinb.ai.timers import VirtualClockLoop
from pinb.errors import ScenarioError
from pinb.scenario.corpus import read_recorded
from pinb.scenario.model import load_scenario, parse_scenario
from pinb.scenario.standin import _limited, run_on_standin
from pinb.scenario.trace import first_difference, project

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_timers_fire_in_the_order_they_are_due_without_the_wait() -> None:
    async def main() -> tuple[list[int], float]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        order: list[int] = []

        async def sleeper(seconds: int) -> None:
            await asyncio.sleep(seconds)
            order.append(seconds)

        await asyncio.gather(*(sleeper(seconds) for seconds in (30, 10, 20)))
        return order, loop.time() - started

    began = time.monotonic()
    order, kept = run_sync(main(), loop_factory=VirtualClockLoop)
    assert order == [10, 20, 30]
    assert kept >= 30
    assert time.monotonic() - began < 5


def test_work_in_a_thread_is_waited_for_before_a_later_timer() -> None:
    async def main() -> list[str]:
        order: list[str] = []

        async def timer() -> None:
            await asyncio.sleep(1)
            order.append("timer")

        task = asyncio.create_task(timer())
        await asyncio.wait_for(asyncio.to_thread(time.sleep, 0.05), 0.5)  # no jump to the wait_for's limit
        order.append("thread")
        await task
        return order

    assert run_sync(main(), loop_factory=VirtualClockLoop) == ["thread", "timer"]


def test_a_socket_is_waited_for_before_a_later_timer() -> None:
    async def main() -> list[str]:
        order: list[str] = []
        reading, writing = socket.socketpair()
        try:
            reader, _writer = await asyncio.open_connection(sock=reading)
            threading.Timer(0.05, writing.send, args=(b"x",)).start()

            async def timer() -> None:
                await asyncio.sleep(1)
                order.append("timer")

            task = asyncio.create_task(timer())
            order.append((await reader.read(1)).decode())
            await task
            _writer.close()
        finally:
            writing.close()
        return order

    assert run_sync(main(), loop_factory=VirtualClockLoop) == ["x", "timer"]


# Scenarios whose outcome rests on timers: sleeping and parallel tools, slow handlers, a throttled stream, an abort
# or a queued message landing while something waits.
TIMED = [
    "agent-parallel-batch",
    "agent-sleep-updates",
    "agent-abort-mid-stream",
    "agent-abort-mid-tool",
    "agent-follow-up",
    "app-handler-sleep-order",
    "app-queue-prompt-while-streaming",
]


@pytest.mark.parametrize("scenario_id", TIMED)
def test_a_timed_scenario_traces_alike_on_both_clocks_and_as_pi_recorded_it(scenario_id: str) -> None:
    scenario = load_scenario(SCENARIOS / f"{scenario_id}.json")
    on_wall_clock = asyncio.run(_limited(scenario, 60.0))
    kept = run_on_standin(scenario)
    assert project(kept, projection="full") == project(on_wall_clock, projection="full")
    recorded = read_recorded(scenario.id, "1.6.0", SCENARIOS)
    assert recorded is not None
    assert first_difference(kept, recorded) is None


def test_a_long_sleep_still_ends_at_the_time_limit_at_once() -> None:
    data = json.loads((SCENARIOS / "agent-sleep-updates.json").read_text(encoding="utf-8"))
    data["tools"][0]["behavior"]["ms"] = 600_000
    began = time.monotonic()
    with pytest.raises(ScenarioError, match=r"did not finish within its 30 s time limit"):
        run_on_standin(parse_scenario(data), timeout=30)
    assert time.monotonic() - began < 10
