"""System messages in the transcript: initial message, tool folding and deltas, prompt replay, views."""

from __future__ import annotations

import pytest

from pinb.agent.harness import word_count_tool
from pinb.ai import (
    MessageView,
    SystemMessage,
    TextContent,
    Tool,
    ToolReference,
    UserMessage,
    create_initial_system_message,
    declarations_equal,
    get_current_system_message,
    get_current_system_prompt,
    get_current_tools,
    get_tool_state_changes,
    to_tool_declaration,
)

A = Tool(name="a", description="A", parameters={"type": "object"})
B = Tool(name="b", description="B", parameters={"type": "object"})
B2 = Tool(name="b", description="B changed", parameters={"type": "object"})


def test_initial_system_message() -> None:
    assert create_initial_system_message(None, None) is None
    assert create_initial_system_message("", []) is None
    only_tools = create_initial_system_message(None, [A])
    assert (only_tools.content, only_tools.tools_added, only_tools.timestamp) == ("", (A,), 0)
    assert create_initial_system_message("p", []).tools_added is None


def test_tools_fold_in_order_like_a_javascript_map() -> None:
    messages = [
        SystemMessage(content="p", tools_added=(A, B)),
        UserMessage(content="x"),
        SystemMessage(tools_removed=(ToolReference(name="a"),)),
        SystemMessage(tools_added=(B2, A)),
    ]
    # b keeps its place when redeclared; a was removed, so it comes back at the end.
    assert get_current_tools(messages) == [B2, A]


def test_tool_state_changes_treat_a_changed_definition_as_remove_plus_add() -> None:
    added, removed = get_tool_state_changes([A, B], [B2])
    assert added == [B2]
    assert removed == [ToolReference(name="a"), ToolReference(name="b")]
    assert get_tool_state_changes([A], [A]) == ([], [])
    assert declarations_equal(A, Tool(name="a", description="A", parameters={"type": "object"}))


def test_system_prompt_replay() -> None:
    messages = [
        SystemMessage(content="base", sections={"one": "1", "two": "2"}, timestamp=5),
        UserMessage(content="x"),
        SystemMessage(content=(TextContent(text="more"),), sections={"one": None, "three": "3"}),
    ]
    replayed = get_current_system_message(messages)
    assert (replayed.content, replayed.sections, replayed.timestamp) == ("base\n\nmore", {"two": "2", "three": "3"}, 5)
    assert get_current_system_prompt(messages) == "base\n\nmore\n\n2\n\n3"
    assert get_current_system_message([UserMessage(content="x")]) is None


def test_tool_declaration_of_an_agent_tool() -> None:
    declared = to_tool_declaration(word_count_tool())
    assert declared.name == "word_count" and declared.description == "Count the words in a string."
    assert declared.parameters["required"] == ["text"]


def test_message_view_is_a_read_only_prefix() -> None:
    base = [1, 2, 3]
    view = MessageView(base)
    base.append(4)
    assert (len(view), list(view), view[-1], view[0:2]) == (3, [1, 2, 3], 3, [1, 2])
    with pytest.raises(IndexError):
        view[3]
