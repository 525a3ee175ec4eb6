"""Widgets for the chapter notebooks: a timeline explorer and a scenario playground.

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


def widgets_module() -> Any:
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
        w = widgets_module()
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
        w = widgets_module()
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


def record(tool: Any) -> Any:
    """Display the widget, then what it shows for its starting values as plain output (kept when run headless).

    A widget is anything with `widget` and `summary()`, and `html()` or `lines`.
    """
    from IPython.display import HTML, display

    display(tool.widget)
    static = tool.html() if hasattr(tool, "html") else playground_html(tool.lines)
    display(HTML(f"<details open><summary>{escape(tool.summary())}</summary>{static}</details>"))
    print(tool.summary())
    return tool


__all__ = [
    "ScenarioPlayground",
    "TimelineExplorer",
    "apply_edits",
    "explorer_html",
    "filter_lines",
    "playground_html",
    "record",
]
