"""Trace queries: small pure helpers the checks use to read trace lines (see the trace format)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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


def summary(lines: Iterable[Line], limit: int = 60) -> str:
    """`source:type` of the core lines, joined, for evidence strings."""
    parts = [f"{line.get('source')}:{line.get('type')}" for line in core(lines)]
    text = " ".join(parts[:limit])
    return text + (" …" if len(parts) > limit else "")


__all__ = [
    "assistant_ends",
    "core",
    "events",
    "ext_lines",
    "index",
    "indexes",
    "is_",
    "listener",
    "mentions",
    "request_texts",
    "requests",
    "summary",
    "tool_end",
    "turn_windows",
]
