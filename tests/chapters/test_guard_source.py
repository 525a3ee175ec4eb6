"""The book's review-guard code travels with the guard scenarios, so the pi backend runs it as written."""

from __future__ import annotations

import pytest

from pinb.chapters.ch16.guard import extension_source, guard_extension, runnable_source
from pinb.scenario.model import parse_scenario


def test_a_line_comment_is_closed_before_the_next_statement() -> None:
    one_line = "if (!ok) { // No way to ask. Refuse. return { block: true }; } const x = 1;"
    assert runnable_source(one_line) == "if (!ok) { /* No way to ask. Refuse. */ return { block: true }; } const x = 1;"
    assert runnable_source("const re = /a\\/b/; return re;") == "const re = /a\\/b/; return re;"


def test_the_guard_scenario_carries_the_chapters_code_when_the_text_is_there() -> None:
    source = extension_source()
    if source is None:
        pytest.skip("the chapter text is not available")
    extension = guard_extension()
    assert extension["source"] == runnable_source(source)
    assert "//" not in extension["source"].replace("https://", "")
    assert [h["label"] for h in extension["handlers"]] == ["guard"]


def test_the_scenario_format_accepts_a_source_and_the_standin_runs_the_port() -> None:
    from pinb.chapters.backends import run_standin_sync

    scenario = {
        "id": "guard-with-source",
        "layer": "app",
        "prompt": "Push.",
        "tools": [{"name": "bash", "behavior": {"kind": "simulated_bash", "stdout": "pushed"}}],
        "responses": [
            {
                "content": [{"type": "toolCall", "name": "bash", "arguments": {"command": "git push -f"}}],
                "stopReason": "toolUse",
            },
            {"content": [{"type": "text", "text": "ok"}], "stopReason": "stop"},
        ],
        "extensions": [{**guard_extension(), "source": "export default function (pi) { throw new Error('no'); }"}],
    }
    assert parse_scenario(scenario, source="test").extensions[0].source is not None
    ends = [line for line in run_standin_sync(scenario) if line.get("type") == "tool_execution_end"]
    assert ends and ends[0]["isError"] is True
