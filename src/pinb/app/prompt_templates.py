"""Prompt templates, as Pi 1.6.0 loads and expands them (``core/prompt-templates.ts``), over an in-memory file set.

A template is a Markdown file in the project's ``.pi/prompts/`` (trusted projects only) or the user's
``<agent dir>/prompts/``; its name is the file name without ``.md``, its content the body after the front matter.
A prompt ``/name args`` becomes the template's content with ``$1``, ``$@``, ``${1:-default}``, ``${@:2}``, … filled
from the arguments (split like a shell, quotes kept together). The first template of a name wins.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from pinb.app.resources import CONFIG_DIR_NAME, Workspace, parse_frontmatter

__all__ = ["PromptTemplate", "expand_prompt_template", "load_prompt_templates", "parse_command_args", "substitute_args"]


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    content: str
    file_path: str


_WHITESPACE = re.compile(r"\s")


def parse_command_args(text: str) -> list[str]:
    """Pi's ``parseCommandArgs``: whitespace-separated, a quote opening an argument keeps it together."""
    args: list[str] = []
    current, has_token, in_quote, quote_start = "", False, "", 0
    i = 0
    while i < len(text):
        char = text[i]
        if in_quote:
            if char == "\\" and i + 1 < len(text) and text[i + 1] == in_quote:
                current += in_quote
                i += 1
            elif char == in_quote:
                in_quote = ""
            else:
                current += char
        elif char in "\"'" and not has_token:
            in_quote, quote_start, has_token = char, i, True
        elif _WHITESPACE.match(char):
            if has_token:
                args.append(current)
                current, has_token = "", False
        else:
            current += char
            has_token = True
        if in_quote and i == len(text) - 1:
            # An unclosed quote is text: keep its character and read the rest again.
            in_quote, current, i = "", text[quote_start], quote_start
        i += 1
    if has_token:
        args.append(current)
    return args


_PLACEHOLDER = re.compile(r"\$\{(\d+|ARGUMENTS|@):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)")


def substitute_args(content: str, args: list[str]) -> str:
    """Pi's ``substituteArgs`` (one pass: values are never substituted again)."""
    everything = " ".join(args)

    def one(match: re.Match[str]) -> str:
        target, default, start, length, simple = match.groups()
        if target:
            value = everything if target in ("@", "ARGUMENTS") else _nth(args, int(target))
            return value if value else default
        if start:
            begin = max(int(start) - 1, 0)
            chosen = args[begin : begin + int(length)] if length else args[begin:]
            return " ".join(chosen)
        if simple in ("ARGUMENTS", "@"):
            return everything
        return _nth(args, int(simple)) or ""

    return _PLACEHOLDER.sub(one, content)


def _nth(args: list[str], n: int) -> str | None:
    return args[n - 1] if 1 <= n <= len(args) else None


def _templates_in(workspace: Workspace, directory: str) -> list[PromptTemplate]:
    fs = workspace.fs
    if not fs.is_dir(directory):
        return []
    found = []
    for name in fs.list_dir(directory):
        path = posixpath.join(directory, name)
        if name.startswith(".") or not name.endswith(".md") or not fs.is_file(path):
            continue
        found.append(PromptTemplate(name[: -len(".md")], parse_frontmatter(fs.read_text(path))[1], path))
    return found


def load_prompt_templates(workspace: Workspace) -> list[PromptTemplate]:
    """The project's templates (when it is trusted), then the user's; the first of a name wins."""
    dirs = [posixpath.join(workspace.cwd, CONFIG_DIR_NAME, "prompts")] if workspace.trusted else []
    dirs.append(posixpath.join(workspace.agent_dir, "prompts"))
    templates: dict[str, PromptTemplate] = {}
    for directory in dirs:
        for template in _templates_in(workspace, directory):
            templates.setdefault(template.name, template)
    return list(templates.values())


_COMMAND = re.compile(r"/(\S+)(?:\s+(.*))?", re.S)


def expand_prompt_template(text: str, templates: list[PromptTemplate]) -> str:
    """``/name args`` → the template's content with the arguments filled in; any other text as it is."""
    match = _COMMAND.fullmatch(text) if text.startswith("/") else None
    if match is None:
        return text
    template = next((t for t in templates if t.name == match.group(1)), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(match.group(2) or ""))
