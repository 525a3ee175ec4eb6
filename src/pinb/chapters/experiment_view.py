"""A claim's experiment as a reader sees it in the notebook, before it runs.

For a scenario experiment that is the scenarios themselves, built from the notebook's knobs: data the reader may
edit (`experiment.scenarios["order"]["responses"][0]`) before the next cell runs them. For the other kinds it is
what the check will do: the stand-in probe's source, the package facts it reads, or the book's program it runs.
Everything here renders to a short readable table with a plain-text twin, never a wall of JSON.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape
from typing import Any

from pinb.chapters.display import Shown, code, table_html


def _short(value: Any, limit: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _block(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "toolCall":
        return f"call {block.get('name')}({_short(block.get('arguments', {}), 70)})"
    if kind == "thinking":
        return f"thinking {_short(block.get('thinking', ''), 50)!r}"
    return repr(_short(str(block.get("text", "")), 70))


def response_line(response: Mapping[str, Any]) -> str:
    blocks = "; ".join(_block(b) for b in response.get("content", ()))
    stop = response.get("stopReason", "stop")
    error = f" ({_short(response['errorMessage'], 50)})" if "errorMessage" in response else ""
    return f"{blocks or '(no content)'} → {stop}{error}"


def _action(action: Mapping[str, Any]) -> str:
    rest = {k: v for k, v in action.items() if k != "kind"}
    return f"{action.get('kind')} {_short(rest, 110)}" if rest else str(action.get("kind"))


def scenario_rows(scenario: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(what, value) rows that say what a scenario does, in the order it happens."""
    rows: list[tuple[str, str]] = [("layer", str(scenario.get("layer")))]
    prompts = scenario.get("prompt")
    for n, prompt in enumerate(prompts if isinstance(prompts, list) else [prompts], 1):
        rows.append((f"prompt {n}" if isinstance(prompts, list) else "prompt", _short(prompt)))
    for tool in scenario.get("tools", ()):
        behavior = dict(tool.get("behavior", {}))
        kind = behavior.pop("kind", "?")
        mode = f", {tool['execution_mode']}" if "execution_mode" in tool else ""
        rows.append((f"tool {tool.get('name')}", f"{kind} {_short(behavior, 80) if behavior else ''}{mode}".strip()))
    for extension in scenario.get("extensions", ()):
        for handler in extension.get("handlers", ()):
            label = f" [{handler['label']}]" if "label" in handler else ""
            what = f"{extension.get('name')}{label} on {handler.get('event')}"
            rows.append((what, _action(handler.get("action", {}))))
    for n, response in enumerate(scenario.get("responses", ()), 1):
        rows.append((f"model reply {n}", response_line(response)))
    for item in scenario.get("queue", ()):
        text = f" {_short(item['text'], 60)!r}" if "text" in item else ""
        rows.append((f"at {item.get('when')}", f"{item.get('do')}{text}"))
    known = {"id", "description", "layer", "prompt", "tools", "extensions", "responses", "queue"}
    for key, value in scenario.items():
        if key not in known:
            rows.append((key, _short(value, 110)))
    return rows


def scenario_shown(name: str, scenario: Mapping[str, Any]) -> tuple[str, str]:
    """One scenario as (plain text, HTML)."""
    rows = scenario_rows(scenario)
    title = f"scenario {name!r} ({scenario.get('id')})"
    text = "\n".join([title, *(f"  {what}: {value}" for what, value in rows)])
    full = escape(json.dumps(scenario, indent=1, ensure_ascii=False))
    html = (
        f"<details class='pinb-details'><summary><b>{escape(title)}</b>: {len(rows)} steps</summary>"
        + table_html(("step", "what"), ((code(what), escape(value)) for what, value in rows))
        + f"<details><summary>the scenario as JSON</summary><pre>{full}</pre></details></details>"
    )
    return text, html


@dataclass
class ExperimentView:
    """What `run.experiment(claim_id)` hands the notebook: the experiment, editable where it is data."""

    claim_id: str
    kind: str
    """`scenarios`, `probe`, `package facts` or `book program`."""
    scenarios: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The scenarios the check will run (scenario experiments): edit them, then run the check cell again."""
    built: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    """The scenarios as the ledger's experiment builds them from the knobs, to tell an edited run apart."""
    description: str = ""
    source: str = ""
    unrun: str | None = None
    witness: str = ""
    """The name the check gives the witness these scenarios make (default: `edited` when they differ from the
    built ones, else `hand`); `pinb claims check` names the reader's files `given`."""

    @property
    def edited(self) -> bool:
        return self.kind == "scenarios" and self.scenarios != self.built

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        return self.shown()._repr_mimebundle_()

    def shown(self) -> Shown:
        head = f"experiment for {self.claim_id}: {self.description}"
        if self.unrun is not None:
            head += f"\n(not run on this backend: {self.unrun})"
        texts, htmls = [head], [f"<div><b>Experiment</b>: {escape(self.description)}"]
        if self.unrun is not None:
            htmls.append(f"<br><i>not run on this backend: {escape(self.unrun)}</i>")
        htmls.append("</div>")
        for name, scenario in self.scenarios.items():
            text, html = scenario_shown(name, scenario)
            texts.append(text)
            htmls.append(html)
        if self.source:
            htmls.append(f"<details><summary>the experiment's code</summary><pre>{escape(self.source)}</pre></details>")
        return Shown("\n".join(texts), html="".join(htmls))


def scenarios_view(claim_id: str, built: dict[str, dict[str, Any]], unrun: str | None) -> ExperimentView:
    names = ", ".join(built)
    description = (
        f"{len(built)} scenario{'s' if len(built) != 1 else ''} ({names}), run on the chosen backend; "
        "edit `experiment.scenarios[...]` and re-run the next cell to see the verdict change"
    )
    return ExperimentView(
        claim_id, "scenarios", copy.deepcopy(built), built, description=description, source="", unrun=unrun
    )


def code_view(claim_id: str, kind: str, function: Any, description: str, unrun: str | None) -> ExperimentView:
    """A probe, a package-facts judge or a book-program judge: its description and its source."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        source = ""
    return ExperimentView(claim_id, kind, description=description, source=source, unrun=unrun)


__all__ = ["ExperimentView", "code_view", "response_line", "scenario_rows", "scenario_shown", "scenarios_view"]
