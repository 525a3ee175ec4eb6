"""System messages in the transcript: the prompt and the tool declarations, like pi-ai's ``utils/transcript.ts``.

Also ``MessageView``: an O(1) read-only snapshot of the first ``n`` messages of a list that only grows, so a long
run can hand its history to a provider on every turn without copying it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from pinb.ai.types import SystemMessage, TextContent, Tool, ToolReference


class MessageView(Sequence[Any]):
    """The first ``length`` items of ``base``, read-only.

    A snapshot as long as the owner of ``base`` only appends to it (or replaces items at or past ``length``), which
    is how the agent loop treats its transcript.
    """

    __slots__ = ("base", "length")

    def __init__(self, base: list[Any], length: int | None = None) -> None:
        self.base = base
        self.length = len(base) if length is None else length

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self.base[: self.length][index]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError("MessageView index out of range")
        return self.base[index]

    def __iter__(self) -> Iterator[Any]:
        base = self.base
        for i in range(self.length):
            yield base[i]

    def __repr__(self) -> str:
        return f"MessageView(<{self.length} messages>)"


def content_text(content: str | Sequence[Any], separator: str = "\n") -> str:
    """Text of a string or of the text blocks of a content list, joined with ``separator``."""
    if isinstance(content, str):
        return content
    return separator.join(block.text for block in content if isinstance(block, TextContent))


def system_message_text(message: SystemMessage) -> str:
    """A system message as a prompt: its content, then its sections, blank-line separated."""
    parts = [content_text(message.content)]
    parts.extend(text for text in (message.sections or {}).values() if text is not None)
    return "\n\n".join(part for part in parts if part)


def to_tool_declaration(tool: Any) -> Tool:
    """What the model is told about ``tool`` (any object with name, description, parameters)."""
    if isinstance(tool, Tool):
        return tool
    sampling = getattr(tool, "constrained_sampling", None)
    return Tool(
        name=tool.name,
        description=getattr(tool, "description", "") or "",
        parameters=json.loads(json.dumps(tool.parameters)),
        constrained_sampling=sampling,
    )


def create_initial_system_message(system_prompt: str | None, tools: Sequence[Tool] | None) -> SystemMessage | None:
    """The leading system message for a prompt and tool set; ``None`` when both are empty."""
    has_prompt = bool(system_prompt)
    has_tools = bool(tools)
    if not has_prompt and not has_tools:
        return None
    return SystemMessage(content=system_prompt or "", tools_added=tuple(tools) if has_tools else None, timestamp=0)


def fold_tools(tools: dict[str, Tool], message: Any) -> None:
    """Apply one message's tool changes to ``tools`` (name → declaration), in place."""
    if not isinstance(message, SystemMessage):
        return
    for ref in message.tools_removed or ():
        tools.pop(ref.name, None)
    for tool in message.tools_added or ():
        tools[tool.name] = tool  # like a JavaScript Map: a redeclared name keeps its place


def get_current_tools(messages: Iterable[Any]) -> list[Tool]:
    """The tools declared after replaying every system message in order."""
    tools: dict[str, Tool] = {}
    for message in messages:
        fold_tools(tools, message)
    return list(tools.values())


def _declaration_key(tool: Tool) -> str:
    return tool.model_dump_json(by_alias=True, exclude_none=True)


def declarations_equal(left: Tool, right: Tool) -> bool:
    """Whether two tools declare the same interface to the model."""
    return left is right or _declaration_key(left) == _declaration_key(right)


def get_tool_state_changes(previous: Sequence[Tool], current: Sequence[Tool]) -> tuple[list[Tool], list[ToolReference]]:
    """``(tools_added, tools_removed)`` turning ``previous`` into ``current``; a changed definition is both."""
    previous_by_name = {tool.name: tool for tool in previous}
    current_by_name = {tool.name: tool for tool in current}
    added = [
        tool
        for tool in current
        if (old := previous_by_name.get(tool.name)) is None or not declarations_equal(old, tool)
    ]
    removed = [
        ToolReference(name=tool.name)
        for tool in previous
        if (new := current_by_name.get(tool.name)) is None or not declarations_equal(tool, new)
    ]
    return added, removed


def get_current_system_message(messages: Iterable[Any]) -> SystemMessage | None:
    """Every system message replayed into one: content joined, sections patched, tools folded."""
    content: list[str] = []
    sections: dict[str, str] = {}
    tools: dict[str, Tool] = {}
    timestamp: int | None = None
    for message in messages:
        if not isinstance(message, SystemMessage):
            continue
        if timestamp is None:
            timestamp = message.timestamp
        text = content_text(message.content)
        if text:
            content.append(text)
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        fold_tools(tools, message)
    if timestamp is None and not tools:
        return None
    return SystemMessage(
        content="\n\n".join(content),
        sections=dict(sections) if sections else None,
        tools_added=tuple(tools.values()) if tools else None,
        timestamp=timestamp or 0,
    )


def get_current_system_prompt(messages: Iterable[Any]) -> str:
    """The system prompt text after replaying every system message."""
    message = get_current_system_message(messages)
    return system_message_text(message) if message else ""
