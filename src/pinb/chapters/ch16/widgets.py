"""Chapter 16's guard tester: type a command and see the book's guard decide, with JavaScript's JSON and regex
semantics. Its content is a pure function of its state (`guard_html`), so it is tested without a frontend.
"""

from __future__ import annotations

from html import escape

from pinb.app.guard import guard_reason, guard_verdict
from pinb.chapters.ch16.guard import EVASION_CORPUS, EvasionCase, pattern_sources
from pinb.chapters.display import Shown
from pinb.chapters.views import visible_whitespace
from pinb.chapters.widgets import Changed, widgets_module


def corpus_case(command: str, tool_name: str) -> EvasionCase | None:
    """The chapter corpus's entry for this command through this tool, if it has one."""
    return next((c for c in EVASION_CORPUS if c.command == command and c.tool_name == tool_name), None)


def guard_html(command: str, tool_name: str = "bash", match_on: str = "json_input", has_ui: bool = False) -> str:
    """The book's guard on one command: verdict, matching pattern, the exact subject it tested, and the outcome,
    beside what the chapter's corpus says the command destroys (so "allowed" for a force push shows as a miss)."""
    key = "content" if tool_name == "write" else "command"
    verdict = guard_verdict(tool_name, {key: command}, pattern_sources(), match_on=match_on)  # type: ignore[arg-type]
    if verdict.subject is None:
        headline = f"<b style='color:#1a7f37'>allowed</b>: the guard does not inspect the {escape(tool_name)} tool"
    elif verdict.blocked and has_ui:
        headline = "<b style='color:#9a6700'>asks</b>: with a UI the guard asks to confirm (allowed on yes)"
    elif verdict.blocked:
        headline = f"<b style='color:#cf222e'>blocked</b>: {escape(guard_reason(verdict) or '')}"
    else:
        headline = "<b style='color:#1a7f37'>allowed</b>: no pattern matched"
    pattern = f"<code>{escape(verdict.pattern)}</code>" if verdict.pattern else "none"
    subject = f"<code>{escape(verdict.subject)}</code>" if verdict.subject is not None else "—"
    return (
        f"<div class='pinb-guard' data-blocked='{str(verdict.blocked).lower()}'>{headline}"
        f"<br>{escape(corpus_note(command, tool_name, verdict.blocked))}"
        f"<br>matching pattern: {pattern}<br>tested text ({escape(match_on)}): {subject}"
        f"<br><i>{escape(book_command_line(match_on))}</i></div>"
    )


def book_case() -> EvasionCase:
    """The corpus entry of the chapter's own command (the force push the guard was written for)."""
    return next(c for c in EVASION_CORPUS if c.note == "the book's own example")


def corpus_note(command: str, tool_name: str, blocked: bool) -> str:
    """What the chapter's corpus says of the command, and whether this verdict is then a miss."""
    case = corpus_case(command, tool_name)
    if case is None:
        return "not in the chapter's corpus of destructive commands"
    if case.destroys.startswith("nothing"):
        return f"the corpus marks it harmless ({case.destroys})" + (": a false positive" if blocked else "")
    miss = "" if blocked else ": a miss, the guard lets a destructive command through"
    return f"the corpus marks it destructive: {case.destroys}{miss}"


def book_command_line(match_on: str = "json_input") -> str:
    """What the guard does with the book's own command, as a reference beside whatever the reader typed."""
    case = book_case()
    verdict = guard_verdict(case.tool_name, case.input, pattern_sources(), match_on=match_on)  # type: ignore[arg-type]
    does = f"blocked by {verdict.pattern}" if verdict.blocked else "allowed: no pattern matches it"
    return f"the book's own command, {visible_whitespace(case.command)} through {case.tool_name}: {does}"


def guard_text(command: str, tool_name: str = "bash", match_on: str = "json_input") -> str:
    key = "content" if tool_name == "write" else "command"
    verdict = guard_verdict(tool_name, {key: command}, pattern_sources(), match_on=match_on)  # type: ignore[arg-type]
    state = f"blocked by {verdict.pattern}" if verdict.blocked else "allowed: no pattern matched"
    note = corpus_note(command, tool_name, verdict.blocked)
    return f"guard tester: {tool_name} {visible_whitespace(command)} → {state}; {note}\n{book_command_line(match_on)}"


class GuardTester:
    """Type a command, see the book's guard decide (JavaScript JSON and regex semantics)."""

    def __init__(self, command: str = "git push --force origin main", tool_name: str = "bash") -> None:
        w = widgets_module()
        self.command = w.Text(value=command, description="command", continuous_update=False)
        self.command.layout.width = "40em"
        self.tool = w.Dropdown(options=["bash", "powershell", "write"], value=tool_name, description="tool")
        self.match_on = w.Dropdown(options=["json_input", "command"], value="json_input", description="tests")
        self.has_ui = w.Dropdown(options=["no UI", "UI"], value="no UI", description="session")
        self.button = w.Button(description="Check")
        self.changed = Changed()
        self.button.on_click(lambda _button: self.changed())
        for control in (self.command, self.tool, self.match_on, self.has_ui):
            control.observe(lambda _change: self.changed(), names="value")
        self.widget = w.VBox([w.HBox([self.command, self.button]), w.HBox([self.tool, self.match_on, self.has_ui])])

    def html(self) -> str:
        return guard_html(self.command.value, self.tool.value, self.match_on.value, self.has_ui.value == "UI")

    def shown(self) -> Shown:
        return Shown(self.summary(), html=self.html())

    def summary(self) -> str:
        return guard_text(self.command.value, self.tool.value, self.match_on.value)


__all__ = ["GuardTester", "book_case", "book_command_line", "corpus_case", "corpus_note", "guard_html", "guard_text"]
