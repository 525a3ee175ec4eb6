"""Chapter 16's guard tester: type a command and see the book's guard decide, with JavaScript's JSON and regex
semantics. Its content is a pure function of its state (`guard_html`), so it is tested without a frontend.
"""

from __future__ import annotations

from html import escape

from pinb.app.guard import guard_reason, guard_verdict
from pinb.chapters.ch16.guard import pattern_sources
from pinb.chapters.widgets import widgets_module


def guard_html(command: str, tool_name: str = "bash", match_on: str = "json_input", has_ui: bool = False) -> str:
    """The book's guard on one command: verdict, matching pattern, the exact subject it tested, and the outcome."""
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
        f"<br>matching pattern: {pattern}<br>tested text ({escape(match_on)}): {subject}</div>"
    )


def guard_text(command: str, tool_name: str = "bash", match_on: str = "json_input") -> str:
    key = "content" if tool_name == "write" else "command"
    verdict = guard_verdict(tool_name, {key: command}, pattern_sources(), match_on=match_on)  # type: ignore[arg-type]
    state = "blocked" if verdict.blocked else "allowed"
    return f"guard tester: {tool_name} {command!r} -> {state} (pattern: {verdict.pattern})"


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
        self.result = w.HTML(value=self.html())
        self.button.on_click(lambda _button: self._refresh())
        for control in (self.command, self.tool, self.match_on, self.has_ui):
            control.observe(lambda _change: self._refresh(), names="value")
        self.widget = w.VBox(
            [w.HBox([self.command, self.button]), w.HBox([self.tool, self.match_on, self.has_ui]), self.result]
        )

    def html(self) -> str:
        return guard_html(self.command.value, self.tool.value, self.match_on.value, self.has_ui.value == "UI")

    def _refresh(self) -> None:
        self.result.value = self.html()

    def summary(self) -> str:
        return guard_text(self.command.value, self.tool.value, self.match_on.value)


__all__ = ["GuardTester", "guard_html", "guard_text"]
