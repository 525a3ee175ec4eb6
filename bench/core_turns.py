"""Per-turn cost of the agent core as a run grows: N turns of one tool call each, at N = 100, 1,000 and 3,000.

A benchmark, not a test. Prints the total and per-turn wall time for each N and the 3,000/100 per-turn ratio
(target: at most 1.2, i.e. a turn costs the same late in a long run as early on).

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


async def run(turns: int) -> float:
    """Seconds one prompt takes to run ``turns`` tool-call turns plus the final answer."""
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
    started = time.perf_counter()
    await agent.prompt("Count the words, turn after turn.")
    elapsed = time.perf_counter() - started
    faux.assert_complete()
    assert len(agent.state.messages) == 3 + 2 * (turns - 1)  # system, user, N-1 call+result pairs, answer
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; the fastest counts")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 3000])
    args = parser.parse_args()
    per_turn: dict[int, float] = {}
    print(f"{'turns':>6} {'total s':>9} {'per turn ms':>12}")
    for n in args.sizes:
        best = min(asyncio.run(run(n)) for _ in range(args.repeat))
        per_turn[n] = best / n
        print(f"{n:>6} {best:>9.3f} {per_turn[n] * 1000:>12.3f}")
    if 100 in per_turn and 3000 in per_turn:
        print(f"per-turn ratio 3000/100: {per_turn[3000] / per_turn[100]:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
