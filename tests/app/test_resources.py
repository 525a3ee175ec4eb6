"""The in-memory file set and Pi's resource discovery rules over it."""

from __future__ import annotations

import pytest

from pinb.app.resources import (
    VirtualFS,
    Workspace,
    discover_append_system_prompt_file,
    discover_system_prompt_file,
    load_skills,
    parse_frontmatter,
)
from pinb.errors import UsageError


def test_virtual_fs_basics() -> None:
    fs = VirtualFS({"/a/b/c.txt": "x", "/a/d.md": "y"})
    assert fs.is_file("/a/b/c.txt") and fs.is_dir("/a/b") and fs.is_dir("/a") and not fs.is_file("/a")
    assert fs.list_dir("/a") == ["b", "d.md"]
    assert fs.read_text("/a/./b/../d.md") == "y"
    with pytest.raises(FileNotFoundError, match="ENOENT"):
        fs.read_text("/nope")
    with pytest.raises(UsageError):
        fs.read_text("relative/path")


def test_system_md_project_over_global_only_when_trusted() -> None:
    fs = VirtualFS(
        {"/p/.pi/SYSTEM.md": "project", "/h/.pi/agent/SYSTEM.md": "global", "/h/.pi/agent/APPEND_SYSTEM.md": "g"}
    )
    assert discover_system_prompt_file(Workspace(fs, cwd="/p", home="/h")) == "/p/.pi/SYSTEM.md"
    assert discover_system_prompt_file(Workspace(fs, cwd="/p", home="/h", trusted=False)) == "/h/.pi/agent/SYSTEM.md"
    assert discover_append_system_prompt_file(Workspace(fs, cwd="/p", home="/h")) == "/h/.pi/agent/APPEND_SYSTEM.md"
    assert discover_system_prompt_file(Workspace(VirtualFS(), cwd="/p", home="/h")) is None


def test_frontmatter_like_pi() -> None:
    assert parse_frontmatter("\ufeff---\r\nname: x\r\ndescription: 'quoted: yes'\r\n---\r\nBody\r\n") == (
        {"name": "x", "description": "quoted: yes"},
        "Body",
    )
    assert parse_frontmatter("no frontmatter") == ({}, "no frontmatter")
    assert parse_frontmatter("---\nunterminated") == ({}, "---\nunterminated")


def test_agents_skill_dirs_stop_at_git_root() -> None:
    fs = VirtualFS(
        {
            "/outer/.agents/skills/out/SKILL.md": "---\ndescription: outside the repo\n---\n",
            "/outer/repo/.git/HEAD": "ref",
            "/outer/repo/.agents/skills/in/SKILL.md": "---\ndescription: in the repo\n---\n",
        }
    )
    skills, _ = load_skills(Workspace(fs, cwd="/outer/repo/sub", home="/h"))
    assert [s.name for s in skills] == ["in"]


def test_skill_collisions_and_warnings_are_reported() -> None:
    fs = VirtualFS(
        {
            "/p/.pi/skills/a/SKILL.md": "---\nname: dup\ndescription: project\n---\n",
            "/h/.pi/agent/skills/b/SKILL.md": "---\nname: dup\ndescription: user\n---\n",
            "/h/.pi/agent/skills/Bad_Name/SKILL.md": "---\ndescription: d\n---\n",
            "/h/.pi/agent/skills/nodesc/SKILL.md": "---\nname: nodesc\n---\n",
            "/h/.pi/agent/skills/plain.md": "no frontmatter: ignored silently",
        }
    )
    skills, diagnostics = load_skills(Workspace(fs, cwd="/p", home="/h"))
    assert [(s.name, s.description, s.source) for s in skills] == [
        ("dup", "project", "project"),
        ("Bad_Name", "d", "user"),
    ]
    messages = [(d.type, d.message) for d in diagnostics]
    assert ("collision", 'name "dup" collision') in messages
    assert ("warning", "description is required") in messages
    assert ("warning", "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)") in messages
