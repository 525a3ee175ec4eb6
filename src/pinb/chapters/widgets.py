"""Widgets for the chapter notebooks: a timeline explorer and a scenario playground.

Only the ipywidgets API common to versions 7 and 8 is used (VBox, HBox, Text, Textarea, Button, Dropdown,
IntSlider, HTML). A tool's `widget` holds its controls only; what it answers is one ordinary output (`shown()`, a
pure function of its state, so it is tested without a frontend) that `record()` displays once and updates in place
whenever the controls change. So the answer under the controls is always the current one, it is drawn once, and a
headless run (papermill) keeps the answer for the starting values, because widget views need a browser.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

from pinb.chapters import views
from pinb.chapters.display import Shown
from pinb.chapters.properties import EditJudge

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
        self.changed = Changed()
        for control in (self.source, self.stream):
            control.observe(self._refilter, names="value")
        self.step.observe(lambda _change: self.changed(), names="value")
        self.widget = w.VBox([w.HBox([self.source, self.stream]), self.step])

    def html(self) -> str:
        return explorer_html(self.lines, self.step.value, self.source.value, self.stream.value == "show")

    def shown(self) -> Shown:
        return Shown(self.summary(), html=self.html())

    def _refilter(self, _change: Any) -> None:
        count = max(len(filter_lines(self.lines, self.source.value, self.stream.value == "show")), 1)
        self.step.max = count
        self.step.value = min(self.step.value, count)
        self.changed()

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


#: What the playground's verdict says of itself: the run is the reader's edit, never the ledger's evidence.
EDITED = "[edited scenario, not the ledger's experiment]"


def claim_judge(claim_id: str, scenario: str | None = None, knobs: Mapping[str, Any] | None = None) -> EditJudge:
    """The claim's own check applied to one edited run standing in for the ledger's scenario `scenario` (default:
    the one the claim's notebook section draws): its property on the edited witness (NOT EXERCISED when the edit
    removed the premise)."""
    from pinb.chapters.registry import claim

    experiment = claim(claim_id).experiment
    if experiment is None:
        raise ValueError(f"{claim_id} is not checked by scenarios, so an edited scenario cannot be judged for it")
    try:
        return experiment.edit_judge(scenario, dict(knobs or {}))
    except ValueError as exc:
        raise ValueError(f"{claim_id}: {exc}") from None


def verdict_line(claim_id: str, judged: EditJudge, scenario: Mapping[str, Any], lines: Sequence[Any]) -> str:
    """`<claim>: OBSERVED|CONTRADICTED|NOT EXERCISED on the edited run: <evidence> [edited …]`."""
    try:
        status, evidence = judged(scenario, lines)
    except Exception as exc:  # the edit removed what the claim's check reads: it says nothing of the claim
        why = f"{type(exc).__name__}: {exc}"
        return f"{claim_id}: NOT EXERCISED by the edited run: its check cannot read what it needs ({why}) {EDITED}"
    return f"{claim_id}: {status} on the edited run: {evidence} {EDITED}"


class ScenarioPlayground:
    """Edit a scenario's responses and handlers as JSON, rerun it on the stand-in, see the timeline, and (given the
    claim it belongs to and that claim's judge, `claim_judge`) the claim's verdict on the edited run."""

    def __init__(
        self,
        scenario: Mapping[str, Any],
        run: Runner | None = None,
        claim: str | None = None,
        judge: EditJudge | None = None,
    ) -> None:
        w = widgets_module()
        self.scenario = dict(scenario)
        self.run_fn = run or _standin_runner
        self.claim = claim
        self.judge = judge if judge is not None or claim is None else claim_judge(claim)
        self.verdict = ""
        self.responses = w.Textarea(value=json.dumps(self.scenario.get("responses", []), indent=1))
        self.extensions = w.Textarea(value=json.dumps(self.scenario.get("extensions", []), indent=1))
        for area in (self.responses, self.extensions):
            area.layout.width = "48em"
            area.layout.height = "12em"
        self.button = w.Button(description="Run on the stand-in")
        self.status = ""
        self.lines: list[Mapping[str, Any]] = []
        self.changed = Changed()
        self._task: asyncio.Future[Any] | None = None
        self.button.on_click(lambda _button: self._schedule())
        self.widget = w.VBox(
            [
                w.HTML("<b>responses</b> (the faux model's script)"),
                self.responses,
                w.HTML("<b>extensions</b> (handlers, app layer only)"),
                self.extensions,
                self.button,
            ]
        )

    def edited(self) -> dict[str, Any]:
        return apply_edits(self.scenario, self.responses.value, self.extensions.value)

    async def rerun(self) -> list[Mapping[str, Any]]:
        """Run the edited scenario; the answer shows its timeline, or the error instead of the last timeline."""
        self.status = "running…"
        self.changed()
        try:
            result = self.run_fn(self.edited())
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            self.lines, self.verdict = [], ""
            self.status = f"{type(exc).__name__}: {exc}"
            self.changed()
            return []
        self.lines = list(result)
        self.status = f"{len(self.lines)} trace lines"
        if self.claim is not None and self.judge is not None:
            self.verdict = verdict_line(self.claim, self.judge, self.edited(), self.lines)
        self.changed()
        return self.lines

    def shown(self) -> Shown:
        status = f"<div>{escape(self.status)}</div>" if self.status else ""
        verdict = f"<div><b>{escape(self.verdict)}</b></div>" if self.verdict and self.lines else ""
        return Shown(self.summary(), html=status + verdict + (playground_html(self.lines) if self.lines else ""))

    def _schedule(self) -> None:
        self._task = asyncio.ensure_future(self.rerun())

    def summary(self) -> str:
        kinds = [str(line.get("type")) for line in views.visible_lines(self.lines) if line.get("source") != "model"]
        head = f"scenario playground: {self.status or 'not run yet'}"
        verdict = f"\n{self.verdict}" if self.verdict and self.lines else ""
        return (f"{head}; events: {' → '.join(kinds[:40])}" if kinds else head) + verdict


def _standin_runner(scenario: dict[str, Any]) -> Any:
    from pinb.chapters.backends import run_scenario

    return run_scenario(scenario, backend="standin")


# --- showing a widget -------------------------------------------------------------------------------------------


class Changed:
    """The callbacks to run when a tool's answer changes (`record()` registers the one that redraws it)."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[], None]] = []

    def connect(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)

    def __call__(self) -> None:
        for callback in self._callbacks:
            callback()


#: What a widget's view shows as plain text where no frontend draws widgets (GitHub, nbviewer, a terminal).
CONTROLS_TEXT = "(interactive controls: they work in Jupyter or Colab with a running kernel)"


def _controls_bundle(widget: Any) -> dict[str, Any]:
    """The widget's view, with a plain-text line instead of its object repr (ipywidgets 7 and 8)."""
    if hasattr(widget, "_repr_mimebundle_"):  # ipywidgets 8
        bundle = dict(widget._repr_mimebundle_() or {})
    else:  # ipywidgets 7 displays this same bundle from `_ipython_display_`
        bundle = {
            "application/vnd.jupyter.widget-view+json": {
                "version_major": 2,
                "version_minor": 0,
                "model_id": widget.model_id,
            }
        }
    bundle["text/plain"] = CONTROLS_TEXT
    return bundle


def record(tool: Any) -> Any:
    """Display the tool's controls, then its answer once, redrawn in place whenever the controls change.

    A tool is anything with `widget` (its controls), `shown()` (its answer) and `changed` (a `Changed`).
    """
    from IPython.display import display

    display(_controls_bundle(tool.widget), raw=True)
    handle = display(tool.shown(), display_id=True)
    if handle is not None:
        tool.changed.connect(lambda: handle.update(tool.shown()))
    return tool


__all__ = [
    "EDITED",
    "Changed",
    "ScenarioPlayground",
    "TimelineExplorer",
    "apply_edits",
    "claim_judge",
    "explorer_html",
    "filter_lines",
    "playground_html",
    "record",
    "verdict_line",
]
