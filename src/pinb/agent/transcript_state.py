"""Per-run bookkeeping over the growing transcript, so a turn costs the same at message 10 and message 10,000.

Pi recomputes the declared tool set and converts the whole transcript for the model on every turn (O(n) a turn,
quadratic over a run). The results are the same when only the new messages are looked at, as long as the earlier
ones did not change; both helpers here check that cheaply (same list, same last message, same system messages at
the same places) and start again from scratch when it fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pinb.agent.types import AgentContext
from pinb.ai.transcript import MessageView, fold_tools, get_tool_state_changes, to_tool_declaration
from pinb.ai.types import AssistantMessage, SystemMessage, Tool, ToolResultMessage, UserMessage, now_ms

LLM_ROLES = frozenset({"system", "user", "assistant", "toolResult"})


class _Prefix:
    """Remembers which prefix of which list was processed, and checks it is still the same."""

    __slots__ = ("base", "count", "last", "systems")

    def __init__(self) -> None:
        self.base: list[Any] | None = None
        self.count = 0
        self.last: Any = None
        self.systems: list[tuple[int, Any]] = []

    def still_valid(self, messages: list[Any]) -> bool:
        count = self.count
        if messages is not self.base or len(messages) < count:
            return False
        if count and messages[count - 1] is not self.last:
            return False
        return all(messages[i] is m for i, m in self.systems)

    def reset(self, messages: list[Any]) -> None:
        self.base, self.count, self.last, self.systems = messages, 0, None, []

    def advance(self, messages: list[Any], upto: int) -> None:
        for i in range(self.count, upto):
            if isinstance(messages[i], SystemMessage):
                self.systems.append((i, messages[i]))
        self.count = upto
        self.last = messages[upto - 1] if upto else None


class ToolLedger:
    """Declared tools of a transcript, folded incrementally; declarations of executable tools, cached."""

    def __init__(self) -> None:
        self._prefix = _Prefix()
        self._tools: dict[str, Tool] = {}
        self._declarations: dict[int, tuple[Any, Tool]] = {}

    def declared(self, messages: list[Any]) -> dict[str, Tool]:
        """Name → declaration after replaying the system messages of ``messages`` (a fresh dict)."""
        if not self._prefix.still_valid(messages):
            self._prefix.reset(messages)
            self._tools = {}
        start = self._prefix.count
        for i in range(start, len(messages)):
            fold_tools(self._tools, messages[i])
        self._prefix.advance(messages, len(messages))
        return dict(self._tools)

    def declaration(self, tool: Any) -> Tool:
        cached = self._declarations.get(id(tool))
        if cached is not None and cached[0] is tool:
            return cached[1]
        declaration = to_tool_declaration(tool)
        self._declarations[id(tool)] = (tool, declaration)
        return declaration

    def declare_tool_changes(self, context: AgentContext, pending: list[Any]) -> list[Any]:
        """Pi's ``declareToolChanges``: announce differences between declared and executable tools.

        A pending system message gets its tool fields replaced with the delta; otherwise a new system message is
        inserted before the first non-system pending message. Returns ``pending`` itself when nothing changes.
        """
        system_index = next((i for i in range(len(pending) - 1, -1, -1) if _is_system(pending[i])), -1)
        pending_system = pending[system_index] if system_index >= 0 else None
        baseline = (
            [_with_tool_changes(m, [], []) if i == system_index else m for i, m in enumerate(pending)]
            if pending_system is not None
            else pending
        )
        declared = self.declared(context.messages)
        for message in baseline:
            fold_tools(declared, message)
        current = [self.declaration(tool) for tool in context.tools]
        added, removed = get_tool_state_changes(list(declared.values()), current)
        unchanged = not added and not removed
        if pending_system is not None:
            if unchanged and not pending_system.tools_added and not pending_system.tools_removed:
                return pending
            return [
                _with_tool_changes(pending_system, added, removed) if i == system_index else m
                for i, m in enumerate(baseline)
            ]
        if unchanged:
            return pending
        update = _with_tool_changes(SystemMessage(content="", timestamp=now_ms()), added, removed)
        index = next((i for i, m in enumerate(pending) if not _is_system(m)), len(pending))
        return [*pending[:index], update, *pending[index:]]


def _is_system(message: Any) -> bool:
    return getattr(message, "role", None) == "system"


def _with_tool_changes(message: SystemMessage, added: Sequence[Tool], removed: Sequence[Any]) -> SystemMessage:
    return message.model_copy(
        update={"tools_added": tuple(added) if added else None, "tools_removed": tuple(removed) if removed else None}
    )


class IncrementalConverter:
    """A ``convert_to_llm`` that converts each message once and returns an O(1) ``MessageView`` snapshot.

    ``convert_one(message)`` returns the model messages for one transcript message (a list, possibly empty). The
    converted list only grows while the source list does; when an earlier source message changes, or another list
    comes in, conversion starts again from scratch (into a new list, so earlier snapshots stay valid).
    """

    def __init__(self, convert_one: Callable[[Any], Sequence[Any]]) -> None:
        self.convert_one = convert_one
        self._prefix = _Prefix()
        self._out: list[Any] = []

    def __call__(self, messages: Sequence[Any]) -> MessageView:
        source = (
            messages.base if isinstance(messages, MessageView) and len(messages) == len(messages.base) else messages
        )
        if not isinstance(source, list):
            source = list(source)
        if not self._prefix.still_valid(source):
            self._prefix.reset(source)
            self._out = []
        out = self._out
        for i in range(self._prefix.count, len(source)):
            out.extend(self.convert_one(source[i]))
        self._prefix.advance(source, len(source))
        return MessageView(out)


def keep_llm_message(message: Any) -> Sequence[Any]:
    """Pi's default conversion: keep system, user, assistant and toolResult messages, drop the rest."""
    if isinstance(message, SystemMessage | UserMessage | AssistantMessage | ToolResultMessage):
        return (message,)
    return (message,) if getattr(message, "role", None) in LLM_ROLES else ()


def default_convert_to_llm() -> IncrementalConverter:
    """A fresh converter with Pi's default filter (one per agent: it caches over that agent's transcript)."""
    return IncrementalConverter(keep_llm_message)
