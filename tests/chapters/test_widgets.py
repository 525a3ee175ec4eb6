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
    assert ("→ blocked by " in text.splitlines()[0]) == blocked
    if pattern_part:
        assert pattern_part in html


def test_guard_with_ui_asks() -> None:
    assert ">asks<" in guard_widgets.guard_html("git push -f", has_ui=True)


def test_guard_tester_widget_updates() -> None:
    tester = guard_widgets.GuardTester("git status")
    assert "no pattern matched" in tester.shown().html
    tester.command.value = "git clean -fdx"
    assert "blocked" in tester.shown().html and "clean" in tester.shown().html
    assert tester.summary().startswith("guard tester: bash git·clean·-fdx → blocked by \\bgit\\s+clean\\b")


def test_the_guard_tester_says_what_the_books_own_command_does() -> None:
    tester = guard_widgets.GuardTester("git status")
    book = "the book's own command, git·push·--force through bash: blocked by "
    assert tester.summary().splitlines()[1].startswith(book) and "git\\s+push" in tester.summary()
    assert book in tester.shown().html.replace("&#x27;", "'")
    tester.match_on.value = "command"  # the same regexes on the raw command still catch it
    assert tester.summary().splitlines()[1].startswith(book)


def test_guard_tester_says_when_allowed_is_a_miss() -> None:
    """`git push origin +main` force-pushes; the book's patterns let it through, and the tester says so."""
    missed = guard_widgets.guard_html("git push origin +main")
    assert "data-blocked='false'" in missed and "a miss" in missed and "destructive" in missed
    caught = guard_widgets.guard_html("git push --force")
    assert "data-blocked='true'" in caught and "a miss" not in caught
    assert "not in the chapter&#x27;s corpus" in guard_widgets.guard_html("echo hello")


class _Handle:
    def __init__(self, shown: object) -> None:
        self.shown = [shown]

    def update(self, shown: object) -> None:
        self.shown.append(shown)


def test_record_draws_one_answer_and_redraws_it_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first answer never stays under the tester after the input changes, and nothing is printed twice."""
    import IPython.display

    shown: list[object] = []
    handles: list[_Handle] = []

    def fake_display(obj: object, raw: bool = False, display_id: bool = False) -> _Handle | None:
        shown.append(obj)
        if display_id:
            handles.append(_Handle(obj))
            return handles[-1]
        return None

    monkeypatch.setattr(IPython.display, "display", fake_display)
    tester = widgets.record(guard_widgets.GuardTester("git push --force origin main"))
    controls, answer = shown
    assert controls["text/plain"] == widgets.CONTROLS_TEXT and "application/vnd.jupyter.widget-view+json" in controls
    assert "data-blocked='true'" in answer.html
    tester.command.value = "git push origin +main"
    assert len(shown) == 2 and len(handles) == 1  # no second output: the one answer was redrawn
    assert "data-blocked='false'" in handles[0].shown[-1].html and "a miss" in handles[0].shown[-1].html


def test_explorer_draws_its_timeline_once() -> None:
    explorer = widgets.TimelineExplorer(guard_trace())
    assert explorer.shown().html.count("<svg") == 1
    assert not any("HTML" in type(child).__name__ for child in explorer.widget.children)


def test_explorer_steps_and_filters() -> None:
    explorer = widgets.TimelineExplorer(guard_trace())
    assert "line 1 of" in explorer.shown().html
    explorer.source.value = "ext"
    assert explorer.step.max == 1 and "review-guard" in explorer.shown().html
    explorer.source.value = "all"
    explorer.step.value = 5
    assert "line 5 of" in explorer.shown().html
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
    assert "<svg" in playground.shown().html and "trace lines" in playground.status
    playground.responses.value = "not json"
    assert asyncio.run(playground.rerun()) == [] and "ValueError" in playground.status
    assert "<svg" not in playground.shown().html  # the old timeline does not stay under the error


def test_the_playground_gives_the_verdict_of_its_claim_on_the_edited_run() -> None:
    from pinb.chapters import scenarios
    from pinb.chapters.ch16.guard import guard_extension

    def scenario(command: str) -> dict:
        script = [scenarios.calls(scenarios.call("bash", {"command": command})), scenarios.text("Done.")]
        return scenarios.app(
            "playground-guard", "Push.", script, tools=[scenarios.bash_tool()], extensions=[guard_extension()]
        )

    claim = "pi-16.guard.blocks-force-push"
    playground = widgets.ScenarioPlayground(scenario("git push --force"), claim=claim)  # the claim's property
    asyncio.run(playground.rerun())
    verdict = playground.summary().splitlines()[-1]
    assert verdict.startswith(f"{claim}: OBSERVED on the edited run: ") and verdict.endswith(widgets.EDITED)
    assert playground.verdict in playground.shown().html.replace("&#x27;", "'")
    playground.responses.value = "not json"
    assert asyncio.run(playground.rerun()) == [] and playground.verdict == ""  # no run, no verdict

    playground.responses.value = json.dumps(scenario("ls")["responses"])  # a harmless command: no premise
    asyncio.run(playground.rerun())
    assert playground.verdict.startswith(f"{claim}: NOT EXERCISED on the edited run: not exercised: ")

    def unreadable(edited: dict, lines: list) -> tuple[str, str]:
        raise KeyError("no-ui")

    playground.judge = unreadable
    asyncio.run(playground.rerun())
    assert playground.verdict == (
        f"{claim}: NOT EXERCISED by the edited run: its check cannot read what it needs (KeyError: 'no-ui') "
        f"{widgets.EDITED}"
    )
    with pytest.raises(ValueError, match="not checked by scenarios"):
        widgets.claim_judge("pi-16.guard.has-ui-docs", "x")
