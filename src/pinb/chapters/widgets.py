"""Widgets for the chapter notebooks: a timeline explorer, a guard tester and a scenario playground.

Only the ipywidgets API common to versions 7 and 8 is used (VBox, HBox, Text, Textarea, Button, Dropdown,
IntSlider, HTML, Output). Each widget's content is computed by a pure function of its state (`*_html`), so it can
be tested without a frontend. `record()` also displays what the widget shows for its starting values as a plain
output: executed headlessly (papermill), the notebook keeps that output, because widget views need a browser.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

from pinb.chapters import views

SOURCES: tuple[str, ...] = ("all", "driver", "agent", "session", "ext", "model")


def _widgets() -> Any:
    import ipywidgets

    return ipywidgets


# --- timeline explorer ------------------------------------------------------------------------------------------


def filter_lines(lines: Sequence[Mapping[str, Any]], source: str = "all", include_stream: bool = False) -> list:
    shown = views.visible_lines(lines, include_stream)
    return shown if source == "all" else [line for line in shown if line.get("source") == source]


def explorer_html(
    lines: Sequence[Mapping[str, Any]], step: int, source: str = "all", include_stream: bool = False
) -> str:
    """The timeline with line `step` (1-based, among the filtered lines) highlighted, and that line in full."""
    shown = filter_lines(lines, source, include_stream)
    if not shown:
        return "<i>no lines for this filter</i>"
    step = min(max(step, 1), len(shown))
    current = shown[step - 1]
    sources = None if source == "all" else [source]
    svg = views.timeline_svg(lines, include_stream=include_stream, highlight=current.get("seq"), sources=sources)
    detail = escape(json.dumps(dict(current), indent=1, ensure_ascii=False))
    return (
        f"<div class='pinb-explorer'><div><b>line {step} of {len(shown)}</b> (seq {escape(str(current.get('seq')))}):"
        f" {escape(views.event_label(current))}</div><pre style='max-height:12em;overflow:auto'>{detail}</pre>"
        f"<div style='max-height:40em;overflow:auto'>{svg}</div></div>"
    )


class TimelineExplorer:
    """Step through a trace line by line, optionally showing one source only."""

    def __init__(self, lines: Sequence[Mapping[str, Any]], step: int = 1, source: str = "all") -> None:
        w = _widgets()
        self.lines = list(lines)
        self.source = w.Dropdown(options=list(SOURCES), value=source, description="source")
        self.stream = w.Dropdown(options=["hide", "show"], value="hide", description="stream lines")
        count = max(len(filter_lines(self.lines, source)), 1)
        self.step = w.IntSlider(value=min(max(step, 1), count), min=1, max=count, description="line")
        self.view = w.HTML(value=self.html())
        for control in (self.source, self.stream):
            control.observe(self._refilter, names="value")
        self.step.observe(lambda _change: self._refresh(), names="value")
        self.widget = w.VBox([w.HBox([self.source, self.stream]), self.step, self.view])

    def html(self) -> str:
        return explorer_html(self.lines, self.step.value, self.source.value, self.stream.value == "show")

    def _refilter(self, _change: Any) -> None:
        count = max(len(filter_lines(self.lines, self.source.value, self.stream.value == "show")), 1)
        self.step.max = count
        self.step.value = min(self.step.value, count)
        self._refresh()

    def _refresh(self) -> None:
        self.view.value = self.html()

    def summary(self) -> str:
        shown = filter_lines(self.lines, self.source.value, self.stream.value == "show")
        return f"timeline explorer: {len(shown)} lines (source={self.source.value}), showing line {self.step.value}"


# --- guard tester -----------------------------------------------------------------------------------------------


def guard_html(command: str, tool_name: str = "bash", match_on: str = "json_input", has_ui: bool = False) -> str:
    """The book's guard on one command: verdict, matching pattern, the exact subject it tested, and the outcome."""
    from pinb.app.guard import guard_reason, guard_verdict

    key = "content" if tool_name == "write" else "command"
    verdict = guard_verdict(tool_name, {key: command}, match_on=match_on)  # type: ignore[arg-type]
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
    from pinb.app.guard import guard_verdict

    key = "content" if tool_name == "write" else "command"
    verdict = guard_verdict(tool_name, {key: command}, match_on=match_on)  # type: ignore[arg-type]
    state = "blocked" if verdict.blocked else "allowed"
    return f"guard tester: {tool_name} {command!r} -> {state} (pattern: {verdict.pattern})"


class GuardTester:
    """Type a command, see the book's guard decide (JavaScript JSON and regex semantics)."""

    def __init__(self, command: str = "git push --force origin main", tool_name: str = "bash") -> None:
        w = _widgets()
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


# --- scenario playground ----------------------------------------------------------------------------------------

Runner = Callable[[dict[str, Any]], Any]


def apply_edits(scenario: Mapping[str, Any], responses_json: str, extensions_json: str) -> dict[str, Any]:
    """The scenario with its `responses` and `extensions` replaced by the edited JSON (ValueError on bad JSON)."""
    edited = dict(scenario)
    try:
        edited["responses"] = json.loads(responses_json)
    except json.JSONDecodeError as exc:
        raise ValueError(f"responses: {exc}") from None
    try:
        extensions = json.loads(extensions_json)
    except json.JSONDecodeError as exc:
        raise ValueError(f"extensions: {exc}") from None
    if extensions or "extensions" in scenario:
        edited["extensions"] = extensions
    return edited


def playground_html(lines: Sequence[Mapping[str, Any]]) -> str:
    return views.timeline_svg(lines) + views.request_inspector_html(views.request_inputs(lines))


class ScenarioPlayground:
    """Edit a scenario's responses and handlers as JSON, rerun it on the stand-in, see the timeline."""

    def __init__(self, scenario: Mapping[str, Any], run: Runner | None = None) -> None:
        w = _widgets()
        self.scenario = dict(scenario)
        self.run_fn = run or _standin_runner
        self.responses = w.Textarea(value=json.dumps(self.scenario.get("responses", []), indent=1))
        self.extensions = w.Textarea(value=json.dumps(self.scenario.get("extensions", []), indent=1))
        for area in (self.responses, self.extensions):
            area.layout.width = "48em"
            area.layout.height = "12em"
        self.button = w.Button(description="Run on the stand-in")
        self.status = w.HTML(value="")
        self.view = w.HTML(value="")
        self.lines: list[Mapping[str, Any]] = []
        self._task: asyncio.Future[Any] | None = None
        self.button.on_click(lambda _button: self._schedule())
        self.widget = w.VBox(
            [
                w.HTML("<b>responses</b> (the faux model's script)"),
                self.responses,
                w.HTML("<b>extensions</b> (handlers, app layer only)"),
                self.extensions,
                w.HBox([self.button, self.status]),
                self.view,
            ]
        )

    def edited(self) -> dict[str, Any]:
        return apply_edits(self.scenario, self.responses.value, self.extensions.value)

    async def rerun(self) -> list[Mapping[str, Any]]:
        """Run the edited scenario; shows the timeline, or the error in the status line."""
        self.status.value = "running…"
        try:
            result = self.run_fn(self.edited())
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            self.status.value = f"<span style='color:#cf222e'>{escape(type(exc).__name__)}: {escape(str(exc))}</span>"
            return []
        self.lines = list(result)
        self.status.value = f"{len(self.lines)} trace lines"
        self.view.value = playground_html(self.lines)
        return self.lines

    def _schedule(self) -> None:
        self._task = asyncio.ensure_future(self.rerun())

    def summary(self) -> str:
        kinds = [str(line.get("type")) for line in views.visible_lines(self.lines) if line.get("source") != "model"]
        return f"scenario playground: {len(self.lines)} trace lines; events: {', '.join(kinds[:40])}"


def _standin_runner(scenario: dict[str, Any]) -> Any:
    from pinb.chapters.backends import run_scenario

    return run_scenario(scenario, backend="standin")


# --- showing a widget -------------------------------------------------------------------------------------------


def record(tool: TimelineExplorer | GuardTester | ScenarioPlayground) -> Any:
    """Display the widget, then what it shows for its starting values as plain output (kept when run headless)."""
    from IPython.display import HTML, display

    display(tool.widget)
    static = tool.html() if hasattr(tool, "html") else playground_html(tool.lines)
    display(HTML(f"<details open><summary>{escape(tool.summary())}</summary>{static}</details>"))
    print(tool.summary())
    return tool


__all__ = [
    "GuardTester",
    "ScenarioPlayground",
    "TimelineExplorer",
    "apply_edits",
    "explorer_html",
    "filter_lines",
    "guard_html",
    "guard_text",
    "playground_html",
    "record",
]
