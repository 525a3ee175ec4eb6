from __future__ import annotations

import asyncio
import json

import pytest

from pinb.chapters import widgets
from pinb.chapters.ch16 import widgets as guard_widgets

from .traces import guard_trace, word_count_trace


@pytest.mark.parametrize(
    ("command", "tool", "blocked", "pattern_part"),
    [
        ("git push --force origin main", "bash", True, "git\\s+push"),
        ("git reset --hard", "powershell", True, "reset"),
        ("git status", "bash", False, None),
        ("git\tpush --force", "bash", False, None),  # JSON.stringify turns the tab into \t
        ("git push --force", "write", False, None),  # the guard does not inspect this tool
    ],
)
def test_guard_html_and_text(command: str, tool: str, blocked: bool, pattern_part: str | None) -> None:
    html = guard_widgets.guard_html(command, tool)
    assert f"data-blocked='{str(blocked).lower()}'" in html
    text = guard_widgets.guard_text(command, tool)
    assert ("-> blocked" in text) == blocked
    if pattern_part:
        assert pattern_part in html


def test_guard_with_ui_asks() -> None:
    assert ">asks<" in guard_widgets.guard_html("git push -f", has_ui=True)


def test_guard_tester_widget_updates() -> None:
    tester = guard_widgets.GuardTester("git status")
    assert "no pattern matched" in tester.result.value
    tester.command.value = "git clean -fdx"
    assert "blocked" in tester.result.value and "clean" in tester.result.value
    assert tester.summary().startswith("guard tester: bash 'git clean -fdx' -> blocked")


def test_explorer_steps_and_filters() -> None:
    explorer = widgets.TimelineExplorer(guard_trace())
    assert "line 1 of" in explorer.view.value
    explorer.source.value = "ext"
    assert explorer.step.max == 1 and "review-guard" in explorer.view.value
    explorer.source.value = "all"
    explorer.step.value = 5
    assert "line 5 of" in explorer.view.value
    assert widgets.explorer_html([], 1) == "<i>no lines for this filter</i>"


def test_apply_edits_replaces_responses_and_extensions() -> None:
    scenario = {"id": "x", "layer": "app", "prompt": "p", "responses": [], "extensions": []}
    edited = widgets.apply_edits(scenario, json.dumps([{"content": []}]), json.dumps([{"name": "e", "handlers": []}]))
    assert edited["responses"] == [{"content": []}] and edited["extensions"] == [{"name": "e", "handlers": []}]
    with pytest.raises(ValueError, match="responses"):
        widgets.apply_edits(scenario, "[", "[]")


def test_playground_reruns_with_a_given_runner_and_reports_errors() -> None:
    seen: list[dict] = []

    def runner(scenario: dict) -> list[dict]:
        seen.append(scenario)
        return word_count_trace()

    playground = widgets.ScenarioPlayground({"id": "x", "layer": "agent", "prompt": "p", "responses": []}, runner)
    playground.responses.value = '[{"content": [], "stopReason": "stop"}]'
    lines = asyncio.run(playground.rerun())
    assert len(lines) == len(word_count_trace()) and seen[0]["responses"] == [{"content": [], "stopReason": "stop"}]
    assert "<svg" in playground.view.value and "trace lines" in playground.status.value
    playground.responses.value = "not json"
    assert asyncio.run(playground.rerun()) == [] and "ValueError" in playground.status.value
