"""Trace queries: small pure helpers the checks use to read trace lines (see the trace format)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Line = Mapping[str, Any]
COMPARED = ("agent", "session", "ext", "model")


def core(lines: Iterable[Line]) -> list[Line]:
    """Compared, non-stream lines (what conformance looks at), in order."""
    return [line for line in lines if line.get("source") in COMPARED and not line.get("stream")]


def listener(lines: Iterable[Line]) -> list[Line]:
    """The public listener's lines: `agent` on the agent layer, `session` on the app layer (non-stream)."""
    kept = core(lines)
    source = "session" if any(line.get("source") == "session" for line in kept) else "agent"
    return [line for line in kept if line.get("source") == source]


def events(lines: Iterable[Line], type_: str, source: str | None = None) -> list[Line]:
    return [
        line for line in core(lines) if line.get("type") == type_ and (source is None or line.get("source") == source)
    ]


def dialogs(lines: Iterable[Line]) -> list[Line]:
    """The dialogs the scripted UI was shown (`driver` `ui` lines: kind, title, message, answer), in order."""
    return [line for line in lines if line.get("source") == "driver" and line.get("type") == "ui"]


def index(lines: Sequence[Line], predicate: Callable[[Line], bool], start: int = 0) -> int:
    """Position of the first line from `start` matching `predicate`, or -1."""
    for i in range(start, len(lines)):
        if predicate(lines[i]):
            return i
    return -1


def indexes(lines: Sequence[Line], predicate: Callable[[Line], bool]) -> list[int]:
    return [i for i, line in enumerate(lines) if predicate(line)]


def is_(type_: str, source: str | None = None, **fields: Any) -> Callable[[Line], bool]:
    """A predicate: line of this type (and source), with these field values."""

    def predicate(line: Line) -> bool:
        if line.get("type") != type_ or (source is not None and line.get("source") != source):
            return False
        return all(line.get(key) == value for key, value in fields.items())

    return predicate


def requests(lines: Iterable[Line]) -> list[Line]:
    return [line for line in lines if line.get("source") == "model" and line.get("type") == "request"]


def request_texts(request: Line) -> list[str]:
    return [str(message.get("text", "")) for message in request.get("messages", ())]


def mentions(request: Line, text: str) -> bool:
    """Whether any message of this model request contains `text`."""
    return any(text in message_text for message_text in request_texts(request))


def ext_lines(lines: Iterable[Line], type_: str | None = None) -> list[Line]:
    return [
        line for line in core(lines) if line.get("source") == "ext" and (type_ is None or line.get("type") == type_)
    ]


def tool_end(lines: Iterable[Line], tool_call_id: str) -> Line | None:
    for line in listener(lines):
        if line.get("type") == "tool_execution_end" and line.get("toolCallId") == tool_call_id:
            return line
    return None


def assistant_ends(lines: Iterable[Line]) -> list[Line]:
    return [line for line in listener(lines) if line.get("type") == "message_end" and line.get("role") == "assistant"]


def turn_windows(lines: Sequence[Line]) -> list[tuple[int, int]]:
    """(turn_start index, turn_end index) pairs in the listener's lines, in order (end -1 when never closed)."""
    windows: list[tuple[int, int]] = []
    start = -1
    for i, line in enumerate(lines):
        if line.get("type") == "turn_start":
            start = i
        elif line.get("type") == "turn_end" and start >= 0:
            windows.append((start, i))
            start = -1
    if start >= 0:
        windows.append((start, -1))
    return windows


# --- what a request was built from, the session tree, the driver's steps ---------------------------------------------


def driver(lines: Iterable[Line], type_: str | None = None) -> list[Line]:
    """The runner's own lines (`prompt`, `step`, `step_resolved`, `ui`, …), optionally of one type, in order."""
    return [line for line in lines if line.get("source") == "driver" and (type_ is None or line.get("type") == type_)]


def inputs(lines: Iterable[Line]) -> list[Line]:
    """The `request` `inputs` lines (with `observe.requests`): what each request was built from, in order."""
    return [line for line in lines if line.get("source") == "request" and line.get("type") == "inputs"]


def system_prompts(lines: Iterable[Line]) -> list[str]:
    """The system prompt each observed request carried, in request order."""
    return [str(line.get("systemPrompt", "")) for line in inputs(lines)]


def snapshots(lines: Iterable[Line]) -> list[Line]:
    """The `tree` `snapshot` lines (one per `snapshot` step), in order."""
    return [line for line in lines if line.get("source") == "tree" and line.get("type") == "snapshot"]


def snapshot(lines: Iterable[Line], which: int = -1) -> Line:
    """One tree snapshot (default the last); an empty mapping when the trace has none."""
    found = snapshots(lines)
    return found[which] if -len(found) <= which < len(found) else {}


def tree_entries(tree: Line, type_: str | None = None, **fields: Any) -> list[Line]:
    """A snapshot's entries in append order, optionally of one type and with these field values."""
    return [
        entry
        for entry in tree.get("entries", ())
        if (type_ is None or entry.get("type") == type_) and all(entry.get(k) == v for k, v in fields.items())
    ]


def branch_entries(tree: Line) -> list[Line]:
    """The entries of a snapshot's active branch, root first."""
    by_id = {entry.get("id"): entry for entry in tree.get("entries", ())}
    return [by_id[label] for label in tree.get("branch", ()) if label in by_id]


@dataclass(frozen=True)
class StepOutcome:
    """One scenario step as the trace shows it: its `step` line, the line that ended it, and where they are
    (indexes into the trace; `end` is the trace's length when the step never ended)."""

    step: Line
    start: int
    result: Line | None
    end: int

    @property
    def outcome(self) -> str:
        """`resolved`, `rejected`, or `unfinished` when the trace ended first."""
        return "unfinished" if self.result is None else str(self.result.get("type", "")).removeprefix("step_")

    @property
    def error(self) -> str | None:
        return None if self.result is None else self.result.get("error")


def steps(lines: Sequence[Line]) -> list[StepOutcome]:
    """Each driver `step` paired with the `step_resolved` / `step_rejected` line that ended it, in order."""
    found: list[StepOutcome] = []
    for i, line in enumerate(lines):
        if line.get("source") != "driver" or line.get("type") != "step":
            continue
        end = index(lines, lambda ln: ln.get("source") == "driver" and ln.get("type") in STEP_ENDS, i + 1)
        found.append(StepOutcome(line, i, lines[end] if end >= 0 else None, end if end >= 0 else len(lines)))
    return found


STEP_ENDS = ("step_resolved", "step_rejected")


def requests_in_step(lines: Sequence[Line], step: int) -> list[Line]:
    """The `model` requests made while the `step`-th step (0-based, in trace order) ran."""
    outcome = steps(lines)[step]
    return requests(lines[outcome.start : outcome.end])


def request_after(lines: Sequence[Line], step: int) -> Line | None:
    """The first `model` request after the `step`-th step (0-based) began: the request it made, or the next one."""
    outcome = steps(lines)[step]
    later = requests(lines[outcome.start :])
    return later[0] if later else None


def inputs_after(lines: Sequence[Line], step: int) -> Line | None:
    """The `request` `inputs` line of :func:`request_after` (with `observe.requests`)."""
    outcome = steps(lines)[step]
    later = inputs(lines[outcome.start :])
    return later[0] if later else None


def summary(lines: Iterable[Line], limit: int = 60) -> str:
    """`source:type` of the core lines, joined, for evidence strings."""
    parts = [f"{line.get('source')}:{line.get('type')}" for line in core(lines)]
    text = " ".join(parts[:limit])
    return text + (" …" if len(parts) > limit else "")


__all__ = [
    "StepOutcome",
    "assistant_ends",
    "branch_entries",
    "core",
    "driver",
    "events",
    "ext_lines",
    "index",
    "indexes",
    "inputs",
    "inputs_after",
    "is_",
    "listener",
    "mentions",
    "request_after",
    "request_texts",
    "requests",
    "requests_in_step",
    "snapshot",
    "snapshots",
    "steps",
    "summary",
    "system_prompts",
    "tool_end",
    "tree_entries",
    "turn_windows",
]
