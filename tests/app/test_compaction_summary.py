"""Pi 1.6.0's serialisation of a conversation for its summarisation requests (compaction/utils.ts)."""

from __future__ import annotations

from pinb.ai import faux_assistant_message, faux_text, faux_thinking
from pinb.ai.faux import faux_tool_call
from pinb.ai.types import TextContent, ToolResultMessage, UserMessage
from pinb.app.compaction_summary import serialize_conversation


def _result(text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id="c1", tool_name="read", content=(TextContent(text=text),), is_error=False)


def test_user_text_assistant_text_and_calls_tool_results_and_no_thinking() -> None:
    assistant = faux_assistant_message(
        [faux_thinking("secret"), faux_text("Reading."), faux_tool_call("read", {"path": "a.md", "n": 2}, id="c1")],
        stop_reason="toolUse",
    )
    text = serialize_conversation([UserMessage(content="Open a.md"), assistant, _result("# A")])
    assert text == (
        '[User]: Open a.md\n\n[Assistant]: Reading.\n\n[Assistant tool calls]: read(path="a.md", n=2)\n\n'
        "[Tool result]: # A"
    )


def test_a_long_tool_result_keeps_2000_utf16_units_and_says_how_many_were_cut() -> None:
    text = serialize_conversation([_result("x" * 1999 + "😀" + "y" * 10)])
    # The emoji is two UTF-16 units; cutting after 2000 would split it, so it goes whole (Pi still counts 2011 - 2000).
    assert text == "[Tool result]: " + "x" * 1999 + "\n\n[... 11 more characters truncated]"


def test_empty_texts_write_nothing() -> None:
    assert serialize_conversation([UserMessage(content=""), _result("")]) == ""
