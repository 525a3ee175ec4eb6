"""Chapter 01's four inputs of a request, assembled from a workspace, a session tree and tools."""

from __future__ import annotations

import json
from pathlib import Path

from pinb.ai.types import SystemMessage, TextContent, Tool
from pinb.app.request import ModelSettings, request_inputs
from pinb.app.resources import VirtualFS, Workspace
from pinb.app.session_messages import CompactionSummaryMessage
from pinb.app.session_tree import SessionManager, sequential_ids
from pinb.app.tools import create_bash_tool, create_read_tool

from .prompt_layout import CASES, LAYOUT
from .session_scenario import assistant, fixed_clock, user

GOLDEN = json.loads((Path(__file__).parent / "golden" / "pi-system-prompts.json").read_text("utf-8"))


def session() -> SessionManager:
    return SessionManager("/repo/app", session_id="s", id_factory=sequential_ids(), clock=fixed_clock())


def tools() -> list:
    fs = VirtualFS(LAYOUT)
    return [create_read_tool(fs, "/repo/app"), create_bash_tool()]


def test_four_inputs_from_workspace_branch_tools_and_model() -> None:
    sm = session()
    sm.append_thinking_level_change("high")
    u1 = sm.append_message(user("hello", 1))
    sm.append_message(assistant(TextContent(text="hi"), ts=2))
    sm.branch(u1)
    sm.append_message(assistant(TextContent(text="hi again"), ts=3))
    workspace = Workspace(VirtualFS(LAYOUT), cwd="/repo/app", home="/home/user")
    inputs = request_inputs(sm, workspace=workspace, tools=tools())
    assert inputs.system_prompt_source == "builder"
    assert "<project_context>" in inputs.system_prompt and "- read: Read file contents" in inputs.system_prompt
    assert "- edit:" not in inputs.system_prompt  # only the tools given are selected
    assert [m.content[0].text for m in inputs.messages[1:]] == ["hi again"]  # the active branch only
    assert [t.name for t in inputs.tools] == ["read", "bash"]
    assert inputs.model == ModelSettings("faux", "faux-1", "high")
    assert inputs.summary()["active_branch"] == ["user", "assistant"]


def test_prompt_with_all_default_tools_is_pis() -> None:
    workspace = Workspace(VirtualFS(LAYOUT), cwd="/repo/app", home="/home/user")
    inputs = request_inputs(session(), workspace=workspace)
    assert (
        inputs.system_prompt.replace("/usr/local/lib/node_modules/@earendil-works/pi-coding-agent", "<pi-package>")
        == (GOLDEN["default"]["systemPrompt"])
    )
    assert CASES["default"]["trusted"] is True


def test_transcript_system_messages_win_and_compaction_summary_is_in_the_branch() -> None:
    sm = session()
    tool = Tool(name="read", description="Read file contents", parameters={"type": "object"})
    sm.append_message(
        SystemMessage(content="", sections={"preamble": "Recorded prompt."}, tools_added=(tool,), timestamp=1)
    )
    _, _ = sm.append_message(user("one", 2)), sm.append_message(assistant(TextContent(text="r1"), ts=3))
    u2 = sm.append_message(user("two", 4))
    sm.append_message(assistant(TextContent(text="r2"), ts=5))
    sm.append_compaction("Earlier: one.", u2, 100)
    inputs = request_inputs(sm, tools=tools(), model=ModelSettings("p", "m", "low"))
    assert inputs.system_prompt_source == "transcript"
    assert inputs.system_prompt == "Recorded prompt."
    assert [t.name for t in inputs.tools] == ["read"]
    assert isinstance(inputs.messages[0], CompactionSummaryMessage)
    llm = inputs.llm_messages()
    assert llm[0].content[0].text.startswith("The conversation history before this point was compacted")
    assert [m.content[0].text for m in llm[1:]] == ["two", "r2"]
    assert inputs.to_json()["model"] == {"provider": "p", "modelId": "m", "thinkingLevel": "low"}


async def test_skill_instructions_enter_only_when_read() -> None:
    workspace = Workspace(VirtualFS(LAYOUT), cwd="/repo/app", home="/home/user")
    read = create_read_tool(workspace.fs, workspace.cwd, workspace.home)
    inputs = request_inputs(session(), workspace=workspace, tools=[read])
    location = "/home/user/.pi/agent/skills/review/SKILL.md"
    assert f"<location>{location}</location>" in inputs.system_prompt
    assert "Step 1: read the diff." not in inputs.system_prompt
    result = read.execute("c1", {"path": location}, None, None)
    assert "Step 1: read the diff." in result.content[0].text
