"""Per-turn cost of the agent core as a run grows: N turns of one tool call each, at N = 100, 1,000 and 3,000.

A benchmark, not a test. Prints total and per-turn wall and CPU time for each N (fastest of ``--repeat`` runs)
and the 3,000/100 per-turn ratio (target: at most 1.2, i.e. a turn costs the same late in a long run as early
on). CPU time is the steadier figure on a busy machine.

    python bench/core_turns.py [--repeat 3] [--sizes 100 1000 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

from pinb.agent import Agent, AgentInitialState, AgentTool, text_result
from pinb.ai import FauxProvider, faux_assistant_message, faux_tool_call

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def count_words(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> Any:
    n = len(params["text"].split())
    return text_result(str(n), {"words": n})


async def run(turns: int) -> tuple[float, float]:
    """(wall, CPU) seconds one prompt takes to run ``turns`` tool-call turns plus the final answer."""
    faux = FauxProvider()
    script = [
        faux_assistant_message([faux_tool_call("word_count", {"text": f"turn {i} of the run"})], stop_reason="toolUse")
        for i in range(turns - 1)
    ]
    faux.set_responses([*script, faux_assistant_message("done")])
    tool = AgentTool(name="word_count", description="Count words.", parameters=SCHEMA, execute=count_words)
    agent = Agent(
        initial_state=AgentInitialState(system_prompt="You count words.", model=faux.get_model(), tools=[tool]),
        stream_fn=faux.stream,
    )
    seen = 0

    def listener(event: Any, signal: Any) -> None:
        nonlocal seen
        seen += 1

    agent.subscribe(listener)
    gc.collect()
    started, cpu_started = time.perf_counter(), time.process_time()
    await agent.prompt("Count the words, turn after turn.")
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    faux.assert_complete()
    assert len(agent.state.messages) == 3 + 2 * (turns - 1)  # system, user, N-1 call+result pairs, answer
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; the fastest counts")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 3000])
    args = parser.parse_args()
    per_turn: dict[int, float] = {}
    per_turn_cpu: dict[int, float] = {}
    asyncio.run(run(50))  # warm-up: imports, first-call caches
    print(f"{'turns':>6} {'wall s':>8} {'wall ms/turn':>13} {'cpu s':>8} {'cpu ms/turn':>12}")
    for n in args.sizes:
        repeat = max(args.repeat, min(10, 3000 // n))  # short runs are noisier: take the best of more
        runs = [asyncio.run(run(n)) for _ in range(repeat)]
        wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
        per_turn[n], per_turn_cpu[n] = wall / n, cpu / n
        print(f"{n:>6} {wall:>8.3f} {per_turn[n] * 1000:>13.3f} {cpu:>8.3f} {per_turn_cpu[n] * 1000:>12.3f}")
    if 100 in per_turn and 3000 in per_turn:
        wall_ratio = per_turn[3000] / per_turn[100]
        cpu_ratio = per_turn_cpu[3000] / per_turn_cpu[100]
        print(f"per-turn ratio 3000/100: wall {wall_ratio:.2f}, cpu {cpu_ratio:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
