"""The 1.6.0 system prompt, compared with what real Pi built over the same files (golden/pi-system-prompts.json,
written by golden/make_pi_system_prompts.mjs from prompt_layout.py; no Node runs here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pinb.app.resources import Skill, VirtualFS, Workspace, load_resources
from pinb.app.system_prompt import (
    SystemPromptOptions,
    build_system_prompt,
    build_system_prompt_sections,
    build_system_prompt_state,
    diff_system_prompt_sections,
    format_skills_for_prompt,
    options_from_resources,
)
from pinb.errors import UsageError

from .prompt_layout import CASES, LAYOUT

GOLDEN: dict[str, Any] = json.loads((Path(__file__).parent / "golden" / "pi-system-prompts.json").read_text("utf-8"))


def workspace_for(case: dict[str, Any]) -> Workspace:
    files = {**LAYOUT, **case.get("extraFiles", {})}
    for dropped in case.get("dropFiles", []):
        files.pop(dropped)
    return Workspace(VirtualFS(files), cwd=case["cwd"], home="/home/user", trusted=case["trusted"])


def prompt_for(case: dict[str, Any]) -> str:
    workspace = workspace_for(case)
    resources = load_resources(workspace)
    tools = case.get("tools", ["read", "bash", "edit", "write"])
    return build_system_prompt(options_from_resources(resources, workspace.cwd, tools, package_dir="<pi-package>"))


@pytest.mark.parametrize("name", list(CASES))
def test_system_prompt_matches_pi(name: str) -> None:
    assert prompt_for(CASES[name]) == GOLDEN[name]["systemPrompt"]


@pytest.mark.parametrize("name", list(CASES))
def test_discovered_files_match_pi(name: str) -> None:
    resources = load_resources(workspace_for(CASES[name]))
    assert [f.path for f in resources.context_files] == GOLDEN[name]["contextFiles"]
    assert [s.file_path for s in resources.skills] == GOLDEN[name]["skills"]


def test_system_md_replaces_preamble_and_drops_builtin_sections() -> None:
    text = GOLDEN["project_system_md"]["systemPrompt"]
    assert text.startswith("You are a project bot.\n\n<addendum>")
    for tag in ("<tools>", "<rules>", "<docs>"):
        assert tag not in text
    assert "<project_context>" in text and "<skills>" in text and text.endswith("<cwd>\n/repo/app\n</cwd>")


def test_trust_gates_project_files_but_not_context_files() -> None:
    trusted, untrusted = GOLDEN["default"]["systemPrompt"], GOLDEN["untrusted"]["systemPrompt"]
    assert "Project addendum." in trusted and "Global addendum." not in trusted
    assert "Global addendum." in untrusted and "Project addendum." not in untrusted
    assert "/repo/app/.pi/skills/deploy" in trusted and "/repo/app/.pi/skills/deploy" not in untrusted
    assert '<project_instructions path="/repo/app/CLAUDE.md">' in untrusted


def test_skill_instructions_stay_out_of_the_prompt() -> None:
    text = prompt_for(CASES["default"])
    assert "Review code &lt;carefully&gt;" in text
    assert "Step 1: read the diff." not in text
    assert "Only by command" not in text  # disable-model-invocation


def test_one_context_file_per_directory_by_priority() -> None:
    fs = VirtualFS(
        {"/p/CLAUDE.md": "c", "/p/AGENTS.MD": "upper", "/p/AGENTS.md": "a", "/home/u/.pi/agent/CLAUDE.MD": "g"}
    )
    resources = load_resources(Workspace(fs, cwd="/p", home="/home/u"))
    assert [(f.path, f.content) for f in resources.context_files] == [
        ("/home/u/.pi/agent/CLAUDE.MD", "g"),
        ("/p/AGENTS.md", "a"),
    ]


def test_sections_are_tagged_in_order() -> None:
    options = SystemPromptOptions(cwd="C:\\work", append_system_prompt="more", sections={"extra": "x", "empty": ""})
    sections = build_system_prompt_sections(options)
    assert list(sections) == ["preamble", "tools", "rules", "docs", "addendum", "cwd", "extra"]
    assert sections["cwd"] == "<cwd>\nC:/work\n</cwd>"
    assert sections["extra"] == "<extra>\nx\n</extra>"


@pytest.mark.parametrize("bad", ["preamble", "Bad", "9x", "a b"])
def test_invalid_section_names_raise_pis_message(bad: str) -> None:
    with pytest.raises(UsageError, match=f"^Invalid system prompt section name: {bad}$"):
        build_system_prompt_sections(SystemPromptOptions(cwd="/", sections={bad: "x"}))


def test_rules_for_tool_mixes() -> None:
    def rules(tools: list[str]) -> str:
        return build_system_prompt_sections(SystemPromptOptions(cwd="/", selected_tools=tools))["rules"]

    assert "- Use bash or PowerShell for file operations" in rules(["bash", "powershell"])
    assert "- Use PowerShell for file operations" in rules(["powershell"])
    assert "file operations" not in rules(["bash", "grep"])
    assert (
        rules([])
        == "<rules>\n- Be concise in your responses\n- Show file paths clearly when working with files\n</rules>"
    )


def test_hidden_reader_keeps_skills_without_naming_a_tool() -> None:
    skill = Skill("s", "d", "/s/SKILL.md", "/s", "user")
    options = SystemPromptOptions(cwd="/", selected_tools=["read"], hidden_tools=["read"], skills=[skill])
    assert "Load a skill's file when the task matches" in build_system_prompt(options)
    options.selected_tools = ["edit"]
    assert "<skills>" not in build_system_prompt(options)


def test_forced_prompt_is_opaque() -> None:
    options = SystemPromptOptions(cwd="/", force_system_prompt="Only this.")
    assert build_system_prompt_state(options) == ("Only this.", None)
    assert build_system_prompt(options) == "Only this."


def test_diff_sections() -> None:
    assert diff_system_prompt_sections({"a": "1"}, {"a": "1"}) is None
    assert diff_system_prompt_sections({"a": "1", "b": "2"}, {"a": "9", "c": "3"}) == {"a": "9", "c": "3", "b": None}


def test_format_skills_empty() -> None:
    assert format_skills_for_prompt([Skill("s", "d", "/f", "/", "user", disable_model_invocation=True)]) == ""
