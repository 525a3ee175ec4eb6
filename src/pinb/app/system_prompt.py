"""Pi 1.6.0's system-prompt builder (``core/system-prompt.ts``), ported line for line.

The prompt is a set of named sections. ``preamble`` is plain text; every other section is wrapped in a tag of its
own name, in this order: ``<tools>``, ``<rules>``, ``<docs>`` (these three only without a ``SYSTEM.md``),
``<addendum>`` (``APPEND_SYSTEM.md``), ``<project_context>`` (context files), ``<skills>`` (names, descriptions
and locations only), ``<cwd>``, then extension sections. A ``SYSTEM.md`` replaces the preamble and drops the
three built-in sections. 1.6.0 has no date line.

The rendered prompt is the sections joined by blank lines, as pi-ai's ``getSystemMessageText`` replays them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from pinb.ai.types import SystemMessage
from pinb.app.resources import ContextFile, LoadedResources, Skill
from pinb.app.session_messages import system_message_text
from pinb.errors import UsageError

__all__ = [
    "DEFAULT_PI_PACKAGE_DIR",
    "DEFAULT_SELECTED_TOOLS",
    "PREAMBLE",
    "TOOL_PROMPT_CONTRIBUTIONS",
    "SystemPromptOptions",
    "build_system_prompt",
    "build_system_prompt_sections",
    "build_system_prompt_state",
    "diff_system_prompt_sections",
    "format_skills_for_prompt",
    "options_from_resources",
]

PREAMBLE: Final = (
    "You are a coding assistant running inside pi, a coding agent harness. "
    "Help users inspect files, run commands, and modify code."
)
DEFAULT_SELECTED_TOOLS: Final = ("read", "bash", "edit", "write")
#: Where ``npm install -g`` puts Pi on Linux; the docs section cites files under it.
DEFAULT_PI_PACKAGE_DIR: Final = "/usr/local/lib/node_modules/@earendil-works/pi-coding-agent"

#: Each built-in tool's one-line snippet (for ``<tools>``) and guideline bullets (for ``<rules>``).
TOOL_PROMPT_CONTRIBUTIONS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "read": ("Read file contents", ("Use read to examine files instead of cat or sed.",)),
    "bash": (
        "Execute bash commands (ls, grep, find, etc.)",
        ("You can inspect PI_* environment variables for current model and session details.",),
    ),
    "edit": (
        "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
        (
            "Use edit for targeted changes. Batch changes to one file in a single call.",
            "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and "
            "non-overlapping; merge nearby changes without including large unchanged regions.",
        ),
    ),
    "write": ("Create or overwrite files", ("Use write only for new files or complete rewrites.",)),
    "grep": ("Search file contents for patterns (respects .gitignore)", ()),
    "find": ("Find files by glob pattern (respects .gitignore)", ()),
    "ls": ("List directory contents", ()),
    "powershell": (
        "Execute PowerShell commands",
        ("You can inspect PI_* environment variables for current model and session details.",),
    ),
}

_SECTION_NAME: Final = re.compile(r"[a-z][a-z0-9_-]*")


def _builtin_snippets() -> dict[str, str]:
    return {name: snippet for name, (snippet, _) in TOOL_PROMPT_CONTRIBUTIONS.items()}


def _builtin_guidelines() -> dict[str, list[str]]:
    return {name: list(rules) for name, (_, rules) in TOOL_PROMPT_CONTRIBUTIONS.items() if rules}


@dataclass
class SystemPromptOptions:
    """Pi's ``BuildSystemPromptOptions`` (normalised): everything the builder reads."""

    cwd: str
    #: ``SYSTEM.md`` text: replaces the preamble and drops ``<tools>``, ``<rules>``, ``<docs>``.
    custom_prompt: str | None = None
    #: A ``before_agent_start`` handler's exact replacement of the whole prompt.
    force_system_prompt: str | None = None
    selected_tools: list[str] = field(default_factory=lambda: list(DEFAULT_SELECTED_TOOLS))
    #: Selected tools whose declarations requests leave out (reachable only through another tool).
    hidden_tools: list[str] = field(default_factory=list)
    #: Tool name → one-line snippet; tools without one are not listed.
    tool_snippets: dict[str, str] = field(default_factory=_builtin_snippets)
    tool_guidelines: dict[str, list[str]] = field(default_factory=_builtin_guidelines)
    prompt_guidelines: list[str] = field(default_factory=list)
    #: ``APPEND_SYSTEM.md`` text(s), joined by a blank line.
    append_system_prompt: str = ""
    #: Extra sections from extensions, by tag name.
    sections: dict[str, str] = field(default_factory=dict)
    context_files: list[ContextFile] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    #: Directory of the Pi package the ``<docs>`` section points into.
    package_dir: str = DEFAULT_PI_PACKAGE_DIR


def options_from_resources(
    resources: LoadedResources,
    cwd: str,
    selected_tools: Sequence[str] = DEFAULT_SELECTED_TOOLS,
    **overrides: object,
) -> SystemPromptOptions:
    """Options as ``AgentSession`` builds them from what the resource loader found."""
    options = SystemPromptOptions(
        cwd=cwd,
        custom_prompt=resources.system_prompt,
        selected_tools=list(selected_tools),
        append_system_prompt="\n\n".join(resources.append_system_prompt),
        context_files=list(resources.context_files),
        skills=list(resources.skills),
    )
    for name, value in overrides.items():
        if not hasattr(options, name):
            raise UsageError(f"SystemPromptOptions has no option {name!r}")
        setattr(options, name, value)
    return options


def _render_project_context(files: Sequence[ContextFile]) -> str:
    blocks = [f'<project_instructions path="{f.path}">\n{f.content}\n</project_instructions>' for f in files]
    return "\n\n".join(["Project-specific instructions and guidelines:", *blocks])


def _build_rules(selected: Sequence[str], tool_guidelines: Mapping[str, Sequence[str]], extra: Sequence[str]) -> str:
    rules: list[str] = []

    def add(rule: str) -> None:
        normalized = rule.strip()
        if normalized and normalized not in rules:
            rules.append(normalized)

    has_bash, has_powershell = "bash" in selected, "powershell" in selected
    if (has_bash or has_powershell) and not any(name in selected for name in ("grep", "find", "ls")):
        if has_bash and has_powershell:
            add("Use bash or PowerShell for file operations like listing, searching, and finding files")
        elif has_powershell:
            add("Use PowerShell for file operations like listing, searching, and finding files")
        else:
            add("Use bash for file operations like ls, rg, find")
    for name in selected:
        for rule in tool_guidelines.get(name, ()):
            add(rule)
    for rule in extra:
        add(rule)
    add("Be concise in your responses")
    add("Show file paths clearly when working with files")
    return "\n".join(f"- {rule}" for rule in rules)


def _escape_xml(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def format_skills_for_prompt(
    skills: Sequence[Skill], file_read_tool: Literal["read", "bash", "indirect"] = "read"
) -> str:
    """Pi's ``formatSkillsForPrompt``: names, descriptions and locations, never the instructions."""
    visible = [skill for skill in skills if not skill.disable_model_invocation]
    if not visible:
        return ""
    hint = {
        "read": "Use the read tool to load a skill's file when the task matches its description.",
        "bash": "Use bash to load a skill's file when the task matches its description.",
    }.get(file_read_tool, "Load a skill's file when the task matches its description.")
    lines = [
        "\n\nThe following skills provide specialized instructions for specific tasks.",
        hint,
        "Resolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{_escape_xml(skill.name)}</name>",
            f"    <description>{_escape_xml(skill.description)}</description>",
            f"    <location>{_escape_xml(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def _docs_section(package_dir: str) -> str:
    return f"""Pi documentation (read only when the user asks about the harness itself, its SDK, extensions, themes, skills, or TUI):
- Main documentation: {package_dir}/README.md
- Additional docs: {package_dir}/docs
- Examples: {package_dir}/examples (extensions, custom tools, SDK)
- When reading pi docs or examples, resolve docs/... under Additional docs and examples/... under Examples, not the current working directory
- When asked about: extensions (docs/extensions.md, examples/extensions/), themes (docs/themes.md), skills (docs/skills.md), prompt templates (docs/prompt-templates.md), TUI components (docs/tui.md), keybindings (docs/keybindings.md), SDK integrations (docs/sdk.md), custom providers (docs/custom-provider.md), adding models (docs/models.md), packages (docs/packages.md), environment variables (docs/environment-variables.md), MCP servers (docs/mcp.md), codemode scripts and non-LLM models such as classifiers and image models (docs/codemode.md)
- Before implementing harness changes, read the relevant docs and examples in full, following related cross-references."""  # noqa: E501


def build_system_prompt_sections(options: SystemPromptOptions) -> dict[str, str]:
    """The ordered sections: ``preamble`` untagged, every other one wrapped in ``<name>…</name>``."""
    for name in options.sections:
        if not _SECTION_NAME.fullmatch(name) or name == "preamble":
            raise UsageError(f"Invalid system prompt section name: {name}")
    declared = [name for name in options.selected_tools if name not in options.hidden_tools]
    sections: dict[str, str] = {}
    if options.custom_prompt:
        sections["preamble"] = options.custom_prompt
    else:
        sections["preamble"] = PREAMBLE
        visible = [name for name in declared if options.tool_snippets.get(name)]
        tools = "\n".join(f"- {name}: {options.tool_snippets[name]}" for name in visible) if visible else "(none)"
        sections["tools"] = f"{tools}\n\nAdditional tools may be available."
        sections["rules"] = _build_rules(declared, options.tool_guidelines, options.prompt_guidelines)
        sections["docs"] = _docs_section(options.package_dir)
    if options.append_system_prompt:
        sections["addendum"] = options.append_system_prompt
    if options.context_files:
        sections["project_context"] = _render_project_context(options.context_files)
    # A hidden reader is still reachable through another tool: skills stay, but the hint names no tool.
    reader: Literal["read", "bash", "indirect"] | None = next(
        (tool for tool in ("read", "bash") if tool in declared),
        None,  # type: ignore[misc]
    )
    if reader is None and any(tool in options.selected_tools for tool in ("read", "bash")):
        reader = "indirect"
    if reader and options.skills:
        skills_prompt = format_skills_for_prompt(options.skills, reader).strip()
        if skills_prompt:
            sections["skills"] = skills_prompt
    sections["cwd"] = options.cwd.replace("\\", "/")
    for name, content in options.sections.items():
        if content:
            sections[name] = content
    return {name: text if name == "preamble" else f"<{name}>\n{text}\n</{name}>" for name, text in sections.items()}


def build_system_prompt_state(options: SystemPromptOptions) -> tuple[str, dict[str, str] | None]:
    """``(content, sections)`` of the system message: a forced prompt is opaque content with no sections."""
    if options.force_system_prompt is not None:
        return options.force_system_prompt, None
    return "", build_system_prompt_sections(options)


def build_system_prompt(options: SystemPromptOptions) -> str:
    """The prompt text, rendered exactly as the transcript's system message replays it."""
    content, sections = build_system_prompt_state(options)
    return system_message_text(SystemMessage(content=content, sections=sections, timestamp=0))


def diff_system_prompt_sections(
    previous: Mapping[str, str | None], current: Mapping[str, str]
) -> dict[str, str | None] | None:
    """The ``sections`` patch turning ``previous`` into ``current`` (None for a removed one), or None if equal."""
    patch: dict[str, str | None] = {name: text for name, text in current.items() if previous.get(name) != text}
    patch.update({name: None for name in previous if name not in current})
    return patch or None
