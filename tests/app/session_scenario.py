"""A deterministic session built with pinb's SessionManager, shared by the session tests.

Its JSONL is committed as ``golden/pinb-session.jsonl``; ``golden/pinb-session-pi-read.json`` is what real Pi's
``SessionManager.open`` + ``buildSessionContext`` made of that file (see ``golden/read_with_pi.mjs``).
"""

from __future__ import annotations

from pinb.ai.types import (
    AssistantMessage,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pinb.app.session_tree import SessionManager, sequential_ids

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z


def fixed_clock(start: int = START_MS, step: int = 1000):
    state = {"now": start}

    def clock() -> int:
        state["now"] += step
        return state["now"]

    return clock


def user(text: str, ts: int) -> UserMessage:
    return UserMessage(content=(TextContent(text=text),), timestamp=ts)


def assistant(*blocks, ts: int, stop_reason: str = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=tuple(blocks),
        usage=Usage(input=10, output=5, total_tokens=15),
        stop_reason=stop_reason,
        timestamp=ts,
    )


def build_pinb_session() -> tuple[SessionManager, dict[str, str]]:
    sm = SessionManager(
        "/project", session_id="019a0000-0000-7000-8000-000000000001", id_factory=sequential_ids(), clock=fixed_clock()
    )
    ids: dict[str, str] = {}
    ids["model"] = sm.append_model_change("faux", "faux-1")
    ids["thinking"] = sm.append_thinking_level_change("medium")
    read_tool = Tool(
        name="read",
        description="Read file contents",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    )
    ids["system"] = sm.append_message(
        SystemMessage(
            content="",
            sections={"preamble": "You are a test.", "cwd": "<cwd>\n/project\n</cwd>"},
            tools_added=(read_tool,),
            timestamp=1,
        )
    )
    ids["u1"] = sm.append_message(user("Read README.md — café ☕\tplease", 2))
    ids["a1"] = sm.append_message(
        assistant(
            TextContent(text="Reading."),
            ToolCall(id="call_1", name="read", arguments={"path": "README.md", "limit": 1.0}),
            ts=3,
            stop_reason="toolUse",
        )
    )
    ids["t1"] = sm.append_message(
        ToolResultMessage(
            tool_call_id="call_1", tool_name="read", content=(TextContent(text="# Demo\n\u2028line"),), timestamp=4
        )
    )
    ids["a2"] = sm.append_message(assistant(ThinkingContent(thinking="hm"), TextContent(text="Demo."), ts=5))
    ids["custom"] = sm.append_custom_entry("review-guard", {"armed": True, "none": None})
    ids["cmsg"] = sm.append_custom_message_entry("note", (TextContent(text="A note"),), False, {"k": 1})
    ids["label"] = sm.append_label_change(ids["u1"], "start")
    ids["u2"] = sm.append_message(user("Second", 6))
    ids["a3"] = sm.append_message(assistant(TextContent(text="Second answer"), ts=7))
    ids["c1"] = sm.append_compaction("Summary one.", ids["u2"], 1234, {"readFiles": ["README.md"]})
    ids["u3"] = sm.append_message(user("Third", 8))
    ids["a4"] = sm.append_message(assistant(TextContent(text="Third answer"), ts=9))
    ids["c2"] = sm.append_compaction("Summary two.", ids["u3"], 2345, None, True)
    ids["u4"] = sm.append_message(user("Fourth", 10))
    ids["edit1"] = sm.append_context_edit(ids["u4"], {"content": "Fourth, edited"})
    ids["edit2"] = sm.append_context_edit(ids["a4"], {"content": "Third answer, short"})
    ids["edit3"] = sm.append_context_edit(ids["u3"], None)
    ids["info"] = sm.append_session_info("pinb\nsession ")
    ids["mainLeaf"] = sm.get_leaf_id() or ""
    ids["bs"] = sm.branch_with_summary(ids["a2"], "Branch summary.", {"files": []}, False)
    ids["u5"] = sm.append_message(user("On the branch", 11))
    ids["a5"] = sm.append_message(assistant(TextContent(text="Branch answer"), ts=12))
    ids["unlabel"] = sm.append_label_change(ids["u1"], None)
    return sm, ids
