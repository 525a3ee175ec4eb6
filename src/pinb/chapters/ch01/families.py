"""The witnesses chapter 01's sentences quantify over, as hypothesis strategies of scenarios.

A turn is one model request plus its tool calls, so the loop family ranges over 0–3 tool calls per reply, one to
three tool-calling turns before the answer, one or two prompts, sequential and parallel tool execution, replies
with and without text beside their calls, and two kinds of tool (chapter 01's `word_count` and a `lookup` that
returns a given text). The context family ranges over which context files sit in which folder of a project
(AGENTS.md and CLAUDE.md, at the root, in the working directory, in a sibling folder) and the texts they hold.
Every drawn scenario validates against the scenario format.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters.properties import st

WORDS = ("alpha", "brown", "copper", "delta", "ember", "fox", "granite", "harbor", "quick", "lazy")
LOOKUP_TOOL: dict[str, Any] = {
    "name": "lookup",
    "description": "Look something up.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    "behavior": {"kind": "return", "text": "found it", "details": {"hits": 1}},
}


@cache  # a strategy is a value: built once, hypothesis validates it once, not on every draw
def phrase(min_words: int = 1, max_words: int = 5) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(WORDS), min_size=min_words, max_size=max_words).map(" ".join)


@cache
def sentence(prefix: str) -> st.SearchStrategy[str]:
    """A short distinct text (e.g. a rule or a message) that names its role, so it is easy to find in a prompt."""
    return phrase(2, 4).map(lambda words: f"{prefix} {words}.")


@cache
@st.composite
def tool_call(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        return sc.call("word_count", {"text": draw(phrase())})
    return sc.call("lookup", {"q": draw(phrase(1, 2))})


@cache
@st.composite
def tool_reply(draw: st.DrawFn, min_calls: int = 1, max_calls: int = 3, text: bool | None = None) -> dict[str, Any]:
    calls = draw(st.lists(tool_call(), min_size=min_calls, max_size=max_calls))
    with_text = draw(st.booleans()) if text is None else text
    return sc.calls(*calls, preface=draw(sentence("Let me check")) if with_text else None)


@cache
@st.composite
def run_script(draw: st.DrawFn, min_tool_turns: int = 0, max_tool_turns: int = 3) -> list[dict[str, Any]]:
    """One prompt's replies: some tool-calling turns (1–3 calls each), then a text answer."""
    turns = draw(st.integers(min_tool_turns, max_tool_turns))
    replies = [draw(tool_reply()) for _ in range(turns)]
    return [*replies, sc.text(draw(sentence("Answer")))]


@cache
@st.composite
def loop_scenario(
    draw: st.DrawFn,
    layer: str = "agent",
    min_tool_turns: int = 0,
    prompts: tuple[int, int] = (1, 2),
    follow_up: bool = False,
    name: str = "ch01-loop",
) -> dict[str, Any]:
    """A run (or two) of the loop: tool turns with 0–3 calls each, sequential or parallel."""
    n_prompts = draw(st.integers(*prompts))
    texts = draw(st.lists(sentence("Question"), min_size=n_prompts, max_size=n_prompts, unique=True))
    responses: list[dict[str, Any]] = []
    queue: list[dict[str, Any]] = []
    for n in range(n_prompts):
        responses += draw(run_script(min_tool_turns if n == 0 else 0))
        if n == 0 and follow_up:
            queue.append({"when": "turn_start#1", "do": "follow_up", "text": draw(sentence("Also"))})
            responses.append(sc.text(draw(sentence("Follow-up answer"))))
    scenario: dict[str, Any] = {
        "id": name,
        "layer": layer,
        "system_prompt": "You count words." if layer == "agent" else sc.SYSTEM,
        "prompt": texts[0] if n_prompts == 1 else texts,
        "tools": [sc.WORD_COUNT_TOOL, LOOKUP_TOOL],
        "responses": responses,
        "settings": {"tool_execution": draw(st.sampled_from(["sequential", "parallel"]))},
    }
    if queue:
        scenario["queue"] = queue
    return scenario


# --- projects and their context files ----------------------------------------------------------------------------

FOLDERS = ("", "app", "elsewhere")
"""The project root, the working directory (app/, below the root) and a sibling folder of it."""


@st.composite
def context_files(draw: st.DrawFn, at_least_one_on_path: bool = True) -> dict[str, str]:
    """Context files in the project's folders: per folder none, AGENTS.md, CLAUDE.md or both, each with its text."""
    files: dict[str, str] = {}
    for folder in FOLDERS:
        names = draw(st.sampled_from([(), ("AGENTS.md",), ("CLAUDE.md",), ("AGENTS.md", "CLAUDE.md")]))
        for name in names:
            label = f"{folder or 'root'} {name.split('.')[0].lower()}"
            files[f"{folder}/{name}".lstrip("/")] = draw(sentence(f"Rule of {label}:"))
    if at_least_one_on_path and not any(p.rsplit("/", 1)[0] in ("AGENTS.md", "CLAUDE.md", "app") for p in files):
        files["AGENTS.md"] = draw(sentence("Rule of root agents:"))
    return files


def project(id_: str, files: dict[str, str], **fields: Any) -> dict[str, Any]:
    """An app-layer scenario in a project whose working directory is app/, with its requests observed."""
    return {
        "id": id_,
        "layer": "app",
        "prompt": "Hello.",
        "responses": [sc.text("Hi.")],
        "project": {"files": files, "cwd": "app"},
        "observe": {"requests": True},
        **fields,
    }


__all__ = [
    "FOLDERS",
    "LOOKUP_TOOL",
    "WORDS",
    "context_files",
    "loop_scenario",
    "phrase",
    "project",
    "run_script",
    "sentence",
    "tool_call",
    "tool_reply",
]
