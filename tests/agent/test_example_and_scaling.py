"""Chapter 01's example prints the book's three lines; per-turn bookkeeping does not rescan the transcript."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from pinb.agent import IncrementalConverter, keep_llm_message
from pinb.agent.harness import AgentHarness, word_count_tool
from pinb.ai import faux_assistant_message, faux_tool_call

ROOT = Path(__file__).resolve().parents[2]


def test_chapter_01_example_prints_the_books_lines() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "ch01_agent_core.py")], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == 'stop: toolUse\ntool: word_count {"words":4}\nstop: stop\n'


async def test_a_long_run_converts_and_measures_each_message_once() -> None:
    converted: list[Any] = []

    def counting(message: Any) -> Any:
        converted.append(message)
        return keep_llm_message(message)

    turns = 60
    script = [
        faux_assistant_message([faux_tool_call("word_count", {"text": f"turn {i}"}, id=f"c{i}")], stop_reason="toolUse")
        for i in range(turns)
    ]
    h = AgentHarness(
        [*script, faux_assistant_message("done")],
        tools=[word_count_tool()],
        system_prompt="s",
        convert_to_llm=IncrementalConverter(counting),
    )
    await h.prompt("go")
    transcript = h.agent.state.messages
    assert len(transcript) == 3 + 2 * turns
    # Every message before the final answer was converted exactly once over 61 requests.
    assert len(converted) == len(transcript) - 1
    assert len({id(m) for m in converted}) == len(converted)
    # Each request saw a snapshot of the transcript as it was then.
    assert [len(r.context.messages) for r in h.faux.requests[:3]] == [2, 4, 6]
    assert h.faux.requests[0].context.messages[-1].role == "user"
    h.faux.assert_complete()


async def test_converter_starts_again_when_history_is_rewritten() -> None:
    converter = IncrementalConverter(keep_llm_message)
    h = AgentHarness([faux_assistant_message("a"), faux_assistant_message("b")], convert_to_llm=converter)
    await h.prompt("one")
    h.agent.state.messages = h.agent.state.messages[:1]  # drop the answer: a different history
    await h.prompt("two")
    assert [m.role for m in h.faux.requests[1].context.messages] == ["user", "user"]
