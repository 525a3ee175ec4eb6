"""The files Pi reads to assemble a request, over an in-memory file set (never the host's file system).

Like Pi 1.6.0's ``DefaultResourceLoader`` with its defaults:

- context files: one per directory, by the name priority ``AGENTS.override.md``, ``AGENTS.md``, ``AGENTS.MD``,
  ``CLAUDE.md``, ``CLAUDE.MD``; the global one (agent directory) first, then ancestors from the root down to the
  working directory. They load whether or not the project is trusted.
- ``SYSTEM.md`` and ``APPEND_SYSTEM.md``: the project's (``<cwd>/.pi/``) when the project is trusted and has one,
  else the global one (agent directory).
- skills: project ``.pi/skills`` and ``.agents/skills`` directories (trusted projects only), then the user's
  ``~/.pi/agent/skills`` and ``~/.agents/skills``; the first skill of a name wins.

Paths are POSIX and absolute; the agent directory is ``<home>/.pi/agent``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pinb.app.yaml12 import load_yaml12
from pinb.errors import UsageError

__all__ = [
    "CONTEXT_FILE_NAMES",
    "ContextFile",
    "LoadedResources",
    "Skill",
    "SkillDiagnostic",
    "VirtualFS",
    "Workspace",
    "discover_append_system_prompt_file",
    "discover_system_prompt_file",
    "load_project_context_files",
    "load_resources",
    "load_skills",
    "parse_frontmatter",
]

CONTEXT_FILE_NAMES: Final = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
CONFIG_DIR_NAME: Final = ".pi"
_MAX_NAME_LENGTH: Final = 64
_MAX_DESCRIPTION_LENGTH: Final = 1024


def _norm(path: str) -> str:
    if not path.startswith("/"):
        raise UsageError(f"VirtualFS paths are absolute POSIX paths, not {path!r}")
    return posixpath.normpath(path)


class VirtualFS:
    """An in-memory file set: absolute POSIX path → text. Directories exist where files are below them."""

    def __init__(self, files: Mapping[str, str] | None = None) -> None:
        self._files: dict[str, str] = {}
        for path, text in (files or {}).items():
            self.write_text(path, text)

    def __repr__(self) -> str:
        return f"VirtualFS(<{len(self._files)} files>)"

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.exists(path)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._files))

    def files(self) -> dict[str, str]:
        """A copy of the whole file set."""
        return dict(self._files)

    def is_file(self, path: str) -> bool:
        return _norm(path) in self._files

    def is_dir(self, path: str) -> bool:
        prefix = _norm(path).rstrip("/") + "/"
        return any(name.startswith(prefix) for name in self._files)

    def exists(self, path: str) -> bool:
        return self.is_file(path) or self.is_dir(path)

    def read_text(self, path: str) -> str:
        key = _norm(path)
        if key not in self._files:
            raise FileNotFoundError(f"ENOENT: no such file or directory, open '{key}'")
        return self._files[key]

    def write_text(self, path: str, text: str) -> None:
        self._files[_norm(path)] = text

    def list_dir(self, path: str) -> list[str]:
        """Names directly inside ``path``, sorted (Pi's order is the host's directory order)."""
        prefix = _norm(path).rstrip("/") + "/"
        return sorted({name[len(prefix) :].split("/", 1)[0] for name in self._files if name.startswith(prefix)})


@dataclass(frozen=True)
class Workspace:
    """Where Pi runs: the file set, the home directory, the working directory, and the trust decision."""

    fs: VirtualFS
    cwd: str = "/project"
    home: str = "/home/user"
    #: Whether the project is trusted (gates project SYSTEM.md, APPEND_SYSTEM.md and skills, not context files).
    trusted: bool = True

    @property
    def agent_dir(self) -> str:
        return posixpath.join(self.home, CONFIG_DIR_NAME, "agent")


@dataclass(frozen=True)
class ContextFile:
    """A discovered context file as the prompt cites it."""

    path: str
    content: str


@dataclass(frozen=True)
class Skill:
    """A skill: listed in the prompt by name and description; its file is read only when the model asks."""

    name: str
    description: str
    file_path: str
    base_dir: str
    source: Literal["user", "project"]
    #: True: left out of the prompt, invocable only by command.
    disable_model_invocation: bool = False


@dataclass(frozen=True)
class SkillDiagnostic:
    """A warning or a name collision while loading skills (Pi reports them; loading goes on)."""

    type: Literal["warning", "collision"]
    message: str
    path: str


def _strip_bom(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


def load_project_context_files(fs: VirtualFS, cwd: str, agent_dir: str) -> list[ContextFile]:
    """Pi's ``loadProjectContextFiles``: global first, then one per ancestor from the root down to ``cwd``."""

    def from_dir(directory: str) -> ContextFile | None:
        for name in CONTEXT_FILE_NAMES:
            path = posixpath.join(directory, name)
            if fs.is_file(path):
                return ContextFile(path=path, content=_strip_bom(fs.read_text(path)))
        return None

    files: list[ContextFile] = []
    seen: set[str] = set()
    global_file = from_dir(_norm(agent_dir))
    if global_file:
        files.append(global_file)
        seen.add(global_file.path)
    ancestors: list[ContextFile] = []
    current = _norm(cwd)
    while True:
        found = from_dir(current)
        if found and found.path not in seen:
            ancestors.insert(0, found)
            seen.add(found.path)
        parent = posixpath.dirname(current)
        if parent == current:
            break
        current = parent
    return files + ancestors


def _discover(fs: VirtualFS, workspace: Workspace, name: str) -> str | None:
    project = posixpath.join(_norm(workspace.cwd), CONFIG_DIR_NAME, name)
    if workspace.trusted and fs.exists(project):
        return project
    global_path = posixpath.join(workspace.agent_dir, name)
    return global_path if fs.exists(global_path) else None


def discover_system_prompt_file(workspace: Workspace) -> str | None:
    """The ``SYSTEM.md`` in effect: the project's if trusted and present, else the global one, else None."""
    return _discover(workspace.fs, workspace, "SYSTEM.md")


def discover_append_system_prompt_file(workspace: Workspace) -> str | None:
    """The ``APPEND_SYSTEM.md`` in effect, by the same rule as ``SYSTEM.md``."""
    return _discover(workspace.fs, workspace, "APPEND_SYSTEM.md")


# --- skills -----------------------------------------------------------------------------------------------------


def parse_frontmatter(content: str) -> tuple[dict[str, Any], str]:
    """Pi's ``parseFrontmatter``: YAML 1.2 (core schema) between a leading ``---`` and the next ``\\n---``, then the
    body. ``disable-model-invocation: yes`` is the string "yes" there, not true."""
    text = _strip_bom(content).replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        return {}, text
    parsed = load_yaml12(text[4:end]) or {}
    if not isinstance(parsed, dict):
        parsed = {}
    return parsed, text[end + 4 :].strip()


def _skill_files(fs: VirtualFS, directory: str, mode: Literal["pi", "agents"], root: str) -> list[str]:
    """Pi's ``collectSkillEntries``: a SKILL.md ends the descent; root .md files count in ``pi`` mode."""
    if not fs.is_dir(directory):
        return []
    names = fs.list_dir(directory)
    if "SKILL.md" in names and fs.is_file(posixpath.join(directory, "SKILL.md")):
        return [posixpath.join(directory, "SKILL.md")]
    found: list[str] = []
    for name in names:
        if name.startswith(".") or name == "node_modules":
            continue
        path = posixpath.join(directory, name)
        if fs.is_file(path):
            at_root = directory == root
            if name.endswith(".md") and ((mode == "pi" and at_root) or (mode == "agents" and not at_root)):
                found.append(path)
        elif fs.is_dir(path):
            found.extend(_skill_files(fs, path, mode, root))
    return found


def _load_skill(
    fs: VirtualFS, path: str, source: Literal["user", "project"], diagnostics: list[SkillDiagnostic]
) -> Skill | None:
    declared = posixpath.basename(path) == "SKILL.md"
    try:
        frontmatter, _ = parse_frontmatter(fs.read_text(path))
    except Exception as exc:  # a YAML error: Pi warns for SKILL.md files only
        if declared:
            diagnostics.append(SkillDiagnostic("warning", str(exc), path))
        return None
    description = frontmatter.get("description")
    has_description = isinstance(description, str) and description.strip() != ""
    if not declared and not has_description:
        return None
    if not has_description:
        diagnostics.append(SkillDiagnostic("warning", "description is required", path))
        return None
    assert isinstance(description, str)
    if len(description) > _MAX_DESCRIPTION_LENGTH:
        message = f"description exceeds {_MAX_DESCRIPTION_LENGTH} characters ({len(description)})"
        diagnostics.append(SkillDiagnostic("warning", message, path))
    skill_dir = posixpath.dirname(path)
    name = frontmatter.get("name") if isinstance(frontmatter.get("name"), str) else None
    name = name or posixpath.basename(skill_dir)
    diagnostics.extend(SkillDiagnostic("warning", message, path) for message in _name_errors(name))
    return Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=skill_dir,
        source=source,
        disable_model_invocation=frontmatter.get("disable-model-invocation") is True,
    )


def _name_errors(name: str) -> list[str]:
    errors = []
    if len(name) > _MAX_NAME_LENGTH:
        errors.append(f"name exceeds {_MAX_NAME_LENGTH} characters ({len(name)})")
    if not re.fullmatch(r"[a-z0-9-]+", name):
        errors.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        errors.append("name must not start or end with a hyphen")
    if "--" in name:
        errors.append("name must not contain consecutive hyphens")
    return errors


def _ancestor_agents_skill_dirs(fs: VirtualFS, cwd: str) -> list[str]:
    """``<dir>/.agents/skills`` from ``cwd`` upwards, stopping at the git repository root if there is one."""
    directory = _norm(cwd)
    git_root = None
    probe = directory
    while True:
        if fs.exists(posixpath.join(probe, ".git")):
            git_root = probe
            break
        parent = posixpath.dirname(probe)
        if parent == probe:
            break
        probe = parent
    dirs = []
    while True:
        dirs.append(posixpath.join(directory, ".agents", "skills"))
        if git_root is not None and directory == git_root:
            break
        parent = posixpath.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return dirs


def load_skills(workspace: Workspace) -> tuple[list[Skill], list[SkillDiagnostic]]:
    """Skills in Pi's source order (project first when trusted, then the user's); first name wins."""
    fs = workspace.fs
    cwd = _norm(workspace.cwd)
    user_agents_dir = posixpath.join(_norm(workspace.home), ".agents", "skills")
    sources: list[tuple[str, Literal["pi", "agents"], Literal["user", "project"]]] = []
    if workspace.trusted:
        sources.append((posixpath.join(cwd, CONFIG_DIR_NAME, "skills"), "pi", "project"))
        sources += [(d, "agents", "project") for d in _ancestor_agents_skill_dirs(fs, cwd) if d != user_agents_dir]
    sources.append((posixpath.join(workspace.agent_dir, "skills"), "pi", "user"))
    sources.append((user_agents_dir, "agents", "user"))
    skills: dict[str, Skill] = {}
    diagnostics: list[SkillDiagnostic] = []
    collisions: list[SkillDiagnostic] = []
    seen_paths: set[str] = set()
    for directory, mode, source in sources:
        for path in _skill_files(fs, directory, mode, directory):
            skill = _load_skill(fs, path, source, diagnostics)
            if skill is None or skill.file_path in seen_paths:
                continue
            if skill.name in skills:
                collisions.append(SkillDiagnostic("collision", f'name "{skill.name}" collision', skill.file_path))
                continue
            skills[skill.name] = skill
            seen_paths.add(skill.file_path)
    return list(skills.values()), diagnostics + collisions


# --- everything at once -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedResources:
    """What the resource loader found: the inputs of the system prompt besides tools."""

    context_files: tuple[ContextFile, ...]
    #: Text of the SYSTEM.md in effect (replaces the built-in preamble and drops the built-in sections).
    system_prompt: str | None
    system_prompt_path: str | None
    #: Texts of the APPEND_SYSTEM.md in effect (joined by a blank line into the ``addendum`` section).
    append_system_prompt: tuple[str, ...]
    append_system_prompt_paths: tuple[str, ...]
    skills: tuple[Skill, ...]
    skill_diagnostics: tuple[SkillDiagnostic, ...] = field(default=())


def load_resources(workspace: Workspace, *, no_context_files: bool = False, no_skills: bool = False) -> LoadedResources:
    """Pi's ``DefaultResourceLoader.reload()`` for context files, system-prompt files and skills."""
    fs = workspace.fs
    context = () if no_context_files else tuple(load_project_context_files(fs, workspace.cwd, workspace.agent_dir))
    system_path = discover_system_prompt_file(workspace)
    append_path = discover_append_system_prompt_file(workspace)
    skills, diagnostics = ([], []) if no_skills else load_skills(workspace)
    return LoadedResources(
        context_files=context,
        system_prompt=_strip_bom(fs.read_text(system_path)) if system_path and fs.is_file(system_path) else None,
        system_prompt_path=system_path,
        append_system_prompt=(_strip_bom(fs.read_text(append_path)),)
        if append_path and fs.is_file(append_path)
        else (),
        append_system_prompt_paths=(append_path,) if append_path else (),
        skills=tuple(skills),
        skill_diagnostics=tuple(diagnostics),
    )
