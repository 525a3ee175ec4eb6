"""A pattern guard's decision for one tool call, as a `tool_call` handler written in JavaScript makes it.

Such a handler tests ``JSON.stringify(event.input)`` against JavaScript regexes when the tool is one it inspects.
``guard_verdict`` reproduces that decision with JavaScript's JSON and regex semantics (``pinb.app.js_compat``), so
a tab between ``git`` and ``push`` arrives as the two characters ``\\t`` and does not match, exactly as in
JavaScript. The patterns are the caller's: this module holds no particular guard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pinb.app.js_compat import js_regex, json_stringify
from pinb.errors import UsageError

__all__ = ["GuardVerdict", "guard_reason", "guard_verdict"]

MatchOn = Literal["json_input", "command"]


class GuardVerdict(BaseModel):
    """What the guard decides for one tool call, before any confirmation dialog."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    blocked: bool
    """True when a pattern matched: with no UI the call is blocked; with a UI the user is asked."""
    pattern: str | None
    """Source of the first matching pattern (a JavaScript handler's ``hit.source``), or None."""
    subject: str | None
    """The exact text the patterns were tested against; None when the tool is not inspected."""


def guard_reason(verdict: GuardVerdict) -> str | None:
    """The block reason such a guard returns without a UI: ``Guard blocked: <pattern source>``."""
    return f"Guard blocked: {verdict.pattern}" if verdict.blocked else None


def guard_verdict(
    tool_name: str,
    input: Mapping[str, Any],
    patterns: Sequence[str | tuple[str, str]],
    tool_names: Sequence[str] = ("bash", "powershell"),
    match_on: MatchOn = "json_input",
) -> GuardVerdict:
    """Decide like a pattern guard's ``tool_call`` handler: first matching pattern wins, in array order.

    ``match_on="json_input"`` is the JavaScript handler's rule (``JSON.stringify(event.input)``); ``"command"``
    tests the raw ``input["command"]`` string instead, to show what the JSON encoding changes. A pattern is a regex
    source, or ``(source, flags)`` to try a variant such as ``/.../i``.
    """
    if tool_name not in tool_names:
        return GuardVerdict(blocked=False, pattern=None, subject=None)
    if match_on == "json_input":
        subject = json_stringify(dict(input))
    elif match_on == "command":
        command = input.get("command")
        subject = command if isinstance(command, str) else ""
    else:
        raise UsageError(f"match_on must be 'json_input' or 'command', not {match_on!r}")
    assert subject is not None
    for item in patterns:
        source, flags = (item, "") if isinstance(item, str) else item
        if js_regex(source, flags).search(subject):
            return GuardVerdict(blocked=True, pattern=source, subject=subject)
    return GuardVerdict(blocked=False, pattern=None, subject=subject)
