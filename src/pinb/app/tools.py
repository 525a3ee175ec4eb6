"""Simulated ``bash`` and ``read`` tools with Pi 1.6.0's names, schemas, descriptions and result text.

Nothing here touches the host. ``bash`` never runs a command: it records it and answers from a script
(output + exit code), formatting the result exactly as Pi's bash tool does (``(no output)`` for empty output,
``\\n\\nCommand exited with code N`` and an error result for a non-zero exit). ``read`` reads from a
``VirtualFS`` and formats like Pi's read tool (offset/limit notices, ``ENOENT`` errors worded as Node words them).

Both are ``pinb.agent.AgentTool`` objects, usable by the agent loop as they are.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from pinb.agent.types import AgentTool, AgentToolResult, resolve
from pinb.ai.abort import AbortSignal
from pinb.ai.types import TextContent
from pinb.app.js_compat import js_number_to_string
from pinb.app.resources import VirtualFS
from pinb.errors import UsageError

__all__ = [
    "BASH_DESCRIPTION",
    "BASH_PARAMETERS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "READ_DESCRIPTION",
    "READ_PARAMETERS",
    "BashCall",
    "BashOutcome",
    "BashScript",
    "ReadCall",
    "create_bash_tool",
    "create_read_tool",
    "format_bash_result",
    "format_read_text",
]

DEFAULT_MAX_LINES: Final = 2000
DEFAULT_MAX_BYTES: Final = 50 * 1024

BASH_DESCRIPTION: Final = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to "
    f"last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). If truncated, full "
    "output is saved to a temp file. Optionally provide a timeout in seconds."
)
BASH_PARAMETERS: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["command"],
    "properties": {
        "command": {"type": "string", "description": "Shell command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
    },
}
READ_DESCRIPTION: Final = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as "
    f"attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset "
    "until complete."
)
READ_PARAMETERS: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["path"],
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
}


# --- bash -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BashOutcome:
    """What a scripted command "prints" (stdout and stderr combined) and how it ends."""

    output: str = ""
    #: None: the process ended without an exit code (Pi then fails the call).
    exit_code: int | None = 0
    #: Seconds after which the command "times out" (Pi fails the call with its timeout message).
    timed_out_after: float | None = None
    #: How the process wrote ``output`` (all within Pi's update throttle); default: one write.
    chunks: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.chunks is not None and "".join(self.chunks) != self.output:
            raise UsageError("BashOutcome.chunks must join to exactly its output")
        if self.output.count("\n") + 1 > DEFAULT_MAX_LINES or len(self.output.encode()) > DEFAULT_MAX_BYTES:
            raise UsageError(
                f"scripted bash output over {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES} bytes: pinb does not "
                "model Pi's output truncation and temp file; script a shorter output"
            )


Matcher = str | re.Pattern[str] | Callable[[str], bool]


@dataclass
class BashScript:
    """Rules mapping commands to outcomes: the first rule whose matcher accepts the command answers it.

    A ``str`` matcher matches the exact command; a compiled pattern is searched; a callable decides.
    Commands no rule matches get ``default``.
    """

    rules: list[tuple[Matcher, BashOutcome]] = field(default_factory=list)
    default: BashOutcome = field(default_factory=BashOutcome)

    def on(self, matcher: Matcher, output: str = "", exit_code: int | None = 0, **extra: Any) -> BashScript:
        """Add a rule; returns the script for chaining."""
        self.rules.append((matcher, BashOutcome(output=output, exit_code=exit_code, **extra)))
        return self

    def answer(self, command: str) -> tuple[BashOutcome, bool]:
        """The outcome for ``command`` and whether a rule (not the default) gave it."""
        for matcher, outcome in self.rules:
            if isinstance(matcher, str):
                hit = matcher == command
            elif isinstance(matcher, re.Pattern):
                hit = matcher.search(command) is not None
            else:
                hit = bool(matcher(command))
            if hit:
                return outcome, True
        return self.default, False


@dataclass(frozen=True)
class BashCall:
    """One recorded (never executed) bash call."""

    tool_call_id: str
    command: str
    timeout: float | None
    outcome: BashOutcome
    #: False when no rule matched and the script's default answered.
    scripted: bool


def _append_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


def format_bash_result(outcome: BashOutcome) -> AgentToolResult:
    """Pi's bash result for an outcome; raises (as Pi's tool throws) for a timeout or a missing exit code."""
    if outcome.timed_out_after is not None:
        seconds = outcome.timed_out_after
        shown = int(seconds) if float(seconds).is_integer() else seconds
        raise RuntimeError(_append_status(outcome.output, f"Command timed out after {shown} seconds"))
    text = outcome.output or "(no output)"
    if outcome.exit_code is None:
        raise RuntimeError(_append_status(text, "Command terminated without an exit code"))
    structured = {"output": outcome.output, "truncated": False, "exit_code": outcome.exit_code, "wall_time_seconds": 0}
    if outcome.exit_code != 0:
        status = f"Command exited with code {outcome.exit_code}"
        return AgentToolResult(
            content=(TextContent(text=_append_status(text, status)),), structured_content=structured, is_error=True
        )
    return AgentToolResult(content=(TextContent(text=text),), structured_content=structured)


def create_bash_tool(script: BashScript | None = None, calls: list[BashCall] | None = None) -> AgentTool:
    """A ``bash`` tool that records each command in ``calls`` and answers from ``script``; it runs nothing."""
    script = script or BashScript()
    record = calls if calls is not None else []

    async def execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Callable[[AgentToolResult], Any]
    ) -> AgentToolResult:
        command = params["command"]
        outcome, scripted = script.answer(command)
        record.append(BashCall(tool_call_id, command, params.get("timeout"), outcome, scripted))
        if signal is not None and signal.aborted:
            raise RuntimeError(_append_status(outcome.output, "Command aborted"))
        # Pi's updates: an empty one at start, the first chunk at once, then (throttled) the rest when output ends.
        if on_update is not None:
            await resolve(on_update(AgentToolResult(content=())))
            chunks = [c for c in (outcome.chunks or (outcome.output,)) if c]
            snapshots = [chunks[0], "".join(chunks)] if len(chunks) > 1 else chunks
            for text in snapshots:
                await resolve(on_update(AgentToolResult(content=(TextContent(text=text),), details={})))
        return format_bash_result(outcome)

    tool = AgentTool(
        name="bash",
        label="bash",
        description=BASH_DESCRIPTION,
        parameters=BASH_PARAMETERS,
        execute=execute,
    )
    object.__setattr__(tool, "calls", record)  # the recorded commands travel with the tool
    return tool


# --- read -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadCall:
    """One read, with the absolute path it resolved to."""

    tool_call_id: str
    path: str
    resolved: str


def resolve_read_path(path: str, cwd: str, home: str = "/home/user") -> str:
    """Pi's path resolution for the read tool: a leading ``@`` dropped, ``~`` expanded, relative to ``cwd``."""
    path = path.removeprefix("@")
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return posixpath.normpath(posixpath.join(cwd, path))


def format_read_text(text: str, offset: int | None = None, limit: int | None = None, shown_offset: Any = None) -> str:
    """Pi's text result for a file's content with ``offset`` (1-based) and ``limit``; raises for a bad offset."""
    lines = text.split("\n")
    total = len(lines)
    start = max(0, offset - 1) if offset else 0
    if start >= total:
        raise RuntimeError(
            f"Offset {shown_offset if shown_offset is not None else offset} is beyond end of file ({total} lines total)"
        )
    end = total if limit is None else min(start + limit, total)
    selected = "\n".join(lines[start:end])
    if end - start > DEFAULT_MAX_LINES or len(selected.encode()) > DEFAULT_MAX_BYTES:
        raise UsageError(
            f"read of more than {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES} bytes: pinb does not model Pi's "
            "read truncation notices; use offset/limit or a smaller file"
        )
    if limit is not None and end < total:
        return f"{selected}\n\n[{total - end} more lines in file. Use offset={end + 1} to continue.]"
    return selected


def create_read_tool(
    fs: VirtualFS, cwd: str = "/project", home: str = "/home/user", calls: list[ReadCall] | None = None
) -> AgentTool:
    """A ``read`` tool over the in-memory file set ``fs``."""
    record = calls if calls is not None else []

    def execute(tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise RuntimeError("Operation aborted")
        resolved = resolve_read_path(params["path"], cwd, home)
        record.append(ReadCall(tool_call_id, params["path"], resolved))
        if not fs.exists(resolved):
            raise RuntimeError(f"ENOENT: no such file or directory, access '{resolved}'")
        if not fs.is_file(resolved):
            raise RuntimeError("EISDIR: illegal operation on a directory, read")
        offset, limit = params.get("offset"), params.get("limit")
        text = format_read_text(
            fs.read_text(resolved),
            int(offset) if offset is not None else None,
            int(limit) if limit is not None else None,
            shown_offset=_js_number(offset) if offset is not None else None,
        )
        return AgentToolResult(content=(TextContent(text=text),), structured_content=text)

    tool = AgentTool(
        name="read", label="read", description=READ_DESCRIPTION, parameters=READ_PARAMETERS, execute=execute
    )
    object.__setattr__(tool, "calls", record)
    return tool


def _js_number(value: Any) -> str:
    return js_number_to_string(value) if isinstance(value, int | float) else str(value)
