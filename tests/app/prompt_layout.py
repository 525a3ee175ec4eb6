"""The file layout and cases of the system-prompt goldens (``golden/pi-system-prompts.json``).

``golden/make_pi_system_prompts.mjs`` wrote this layout to disk and asked real Pi 1.6.0 for its system prompt;
the tests build the same layout in a ``VirtualFS`` and compare.
"""

from __future__ import annotations

from typing import Any

SKILL_REVIEW = """---
name: review
description: Review code <carefully> & "well" before it's merged
---
# Review

Step 1: read the diff.
"""

LAYOUT: dict[str, str] = {
    "/home/user/.pi/agent/AGENTS.md": "Global rules: be kind.\n",
    "/home/user/.pi/agent/APPEND_SYSTEM.md": "Global addendum.",
    "/home/user/.pi/agent/skills/review/SKILL.md": SKILL_REVIEW,
    "/home/user/.pi/agent/skills/notes.md": "---\ndescription: Take notes in NOTES.md\n---\nWrite notes.\n",
    "/home/user/.pi/agent/skills/hidden/SKILL.md": (
        "---\nname: hidden\ndescription: Only by command\ndisable-model-invocation: true\n---\nSecret.\n"
    ),
    "/home/user/.agents/skills/tidy/SKILL.md": "---\ndescription: Tidy up the workspace\n---\nTidy.\n",
    "/repo/AGENTS.md": "Repo rules.",
    "/repo/CLAUDE.md": "Repo Claude rules (AGENTS.md wins).",
    "/repo/app/CLAUDE.md": "\ufeffApp rules.\n",
    "/repo/app/.pi/APPEND_SYSTEM.md": "Project addendum.",
    "/repo/app/.pi/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy the app\n---\nRun make deploy.\n",
    "/repo/app/.agents/skills/lint/SKILL.md": "---\ndescription: Lint the code\n---\nRun ruff.\n",
}

CASES: dict[str, dict[str, Any]] = {
    "default": {"cwd": "/repo/app", "trusted": True},
    "untrusted": {"cwd": "/repo/app", "trusted": False},
    "project_system_md": {
        "cwd": "/repo/app",
        "trusted": True,
        "extraFiles": {"/repo/app/.pi/SYSTEM.md": "You are a project bot."},
    },
    "untrusted_project_system_md": {
        "cwd": "/repo/app",
        "trusted": False,
        "extraFiles": {
            "/repo/app/.pi/SYSTEM.md": "You are a project bot.",
            "/home/user/.pi/agent/SYSTEM.md": "You are the global bot.",
        },
    },
    "read_only": {"cwd": "/repo/app", "trusted": True, "tools": ["read"]},
    "bash_only": {"cwd": "/repo/app", "trusted": True, "tools": ["bash"]},
    "no_tools": {"cwd": "/repo/app", "trusted": True, "tools": []},
    "agents_override": {
        "cwd": "/repo/app",
        "trusted": True,
        "extraFiles": {"/repo/app/AGENTS.override.md": "Override rules."},
    },
    "outside_repo": {"cwd": "/elsewhere", "trusted": True, "dropFiles": ["/home/user/.pi/agent/APPEND_SYSTEM.md"]},
}
