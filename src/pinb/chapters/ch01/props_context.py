"""Chapter 01's context-ladder sentences as properties: context files, APPEND_SYSTEM.md, SYSTEM.md, skills, prompt
templates, and the agent core that loads no configuration.

The witness family puts AGENTS.md and CLAUDE.md files (each with its own text) in the project root, the working
directory app/ and a sibling folder. The expected context is read from the witness's own files with the rule Pi's
documentation gives (`docs/configuration.md`: context files are loaded "from the agent directory, the working
directory, and its parent directories", one per directory by the names `AGENTS.override.md`, `AGENTS.md`,
`AGENTS.MD`, `CLAUDE.md`, `CLAUDE.MD`), root first; the observed one is which of the witness's texts the system
prompt carries, in the order it carries them.
"""

from __future__ import annotations

import posixpath
from typing import Any

from pinb.chapters import tq
from pinb.chapters.ch01 import assembly as asm
from pinb.chapters.ch01 import families as fam
from pinb.chapters.properties import Params, Premise, Property, Witness, st

NAME_PRIORITY = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
CONTEXT = frozenset(NAME_PRIORITY)


def _files(scenario: Any) -> dict[str, str]:
    return dict((scenario.get("project") or {}).get("files", {}))


def context_texts(scenario: Any) -> list[str]:
    """Every context file's text in the witness (on the working directory's path or not)."""
    return [text for path, text in _files(scenario).items() if posixpath.basename(path) in CONTEXT]


def on_path(scenario: Any) -> list[str]:
    """The context files Pi is documented to load for this project: one per folder from the root down to the
    working directory, by name priority."""
    files = _files(scenario)
    cwd = str((scenario.get("project") or {}).get("cwd") or "")
    folders = [""] + ["/".join(cwd.split("/")[: n + 1]) for n in range(len(cwd.split("/")))] if cwd else [""]
    found = []
    for folder in folders:
        name = next((n for n in NAME_PRIORITY if posixpath.join(folder, n) in files), None)
        if name is not None:
            found.append(files[posixpath.join(folder, name)])
    return found


def carried(prompt: str, texts: list[str]) -> list[str]:
    """Which of `texts` the prompt carries, in the order it carries them."""
    return sorted((t for t in texts if t in prompt), key=prompt.find)


def _head(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


# --- the family: the context ladder over drawn context files ---------------------------------------------------


@st.composite
def _ladder(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    files = draw(fam.context_files())
    appended = draw(fam.sentence("APPENDED:"))
    replacement = draw(fam.sentence("REPLACEMENT PROMPT:"))
    return {
        "base": fam.project("ch01-context-base", {}),
        "context-files": fam.project("ch01-context-files", files),
        "append": fam.project("ch01-context-append", {**files, "app/.pi/APPEND_SYSTEM.md": appended}),
        "system-md": fam.project("ch01-context-system-md", {**files, "app/.pi/SYSTEM.md": replacement}),
    }


def ladder_family(params: Params) -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    return _ladder()


def _pi_file(w: Witness, key: str, name: str) -> str:
    return _files(w.scenarios[key]).get(f"app/.pi/{name}", "")


def _prompt(w: Witness, key: str) -> str:
    return asm.first_prompt(w.traces[key])


def _context_premise(key: str) -> Any:
    def premise(w: Witness) -> Premise:
        if "base" not in w.scenarios or key not in w.scenarios:
            return Premise(False, f"no base project or no {key!r} project to compare")
        found = on_path(w.scenarios[key])
        if not found:
            return Premise(False, "no context file on the working directory's path")
        names = sorted(p for p in _files(w.scenarios[key]) if posixpath.basename(p) in CONTEXT)
        return Premise(True, f"context files {names}; working directory app/")

    return premise


#: The ladder's projects with context files (the hand witness has a CLAUDE.md project too).
WITH_FILES = ("context-files", "claude-md")


def _agents_expected(w: Witness) -> dict[str, list[str]]:
    return {key: on_path(w.scenarios[key]) for key in WITH_FILES if key in w.scenarios}


def _agents_observed(w: Witness) -> dict[str, list[str]]:
    return {key: carried(_prompt(w, key), context_texts(w.scenarios[key])) for key in WITH_FILES if key in w.traces}


AGENTS_BY_DIRECTORY = Property(
    asm.ladder,
    _context_premise("context-files"),
    _agents_expected,
    _agents_observed,
    ladder_family,
    picture="context-files",
)


def _append_expected(w: Witness) -> dict[str, Any]:
    return {
        "the base's first line kept": True,
        "APPEND_SYSTEM.md's text added": True,
        "context files": on_path(w.scenarios["append"]),
    }


def _append_observed(w: Witness) -> dict[str, Any]:
    base, prompt = _prompt(w, "base"), _prompt(w, "append")
    return {
        "the base's first line kept": bool(_head(base)) and prompt.startswith(_head(base)),
        "APPEND_SYSTEM.md's text added": bool(_pi_file(w, "append", "APPEND_SYSTEM.md"))
        and _pi_file(w, "append", "APPEND_SYSTEM.md") in prompt,
        "context files": carried(prompt, context_texts(w.scenarios["append"])),
    }


def _file_premise(key: str, name: str) -> Any:
    def premise(w: Witness) -> Premise:
        if "base" not in w.scenarios or key not in w.scenarios or not _pi_file(w, key, name):
            return Premise(False, f"no project with a .pi/{name} beside a base project")
        return Premise(True, f".pi/{name} with {len(on_path(w.scenarios[key]))} context file(s) on the path")

    return premise


APPEND_SYSTEM = Property(
    asm.ladder,
    _file_premise("append", "APPEND_SYSTEM.md"),
    _append_expected,
    _append_observed,
    ladder_family,
    picture="append",
)


def _system_md_expected(w: Witness) -> dict[str, Any]:
    # "replaces the base prompt": the base goes, SYSTEM.md's text comes first; the other rungs stay on the ladder.
    return {
        "starts with SYSTEM.md's text": True,
        "the base's first line present": False,
        "context files": on_path(w.scenarios["system-md"]),
    }


def _system_md_observed(w: Witness) -> dict[str, Any]:
    base, prompt = _prompt(w, "base"), _prompt(w, "system-md")
    replacement = _pi_file(w, "system-md", "SYSTEM.md")
    return {
        "starts with SYSTEM.md's text": bool(replacement) and prompt.startswith(replacement),
        "the base's first line present": bool(_head(base)) and _head(base) in prompt,
        "context files": carried(prompt, context_texts(w.scenarios["system-md"])),
    }


SYSTEM_MD = Property(
    asm.ladder,
    _file_premise("system-md", "SYSTEM.md"),
    _system_md_expected,
    _system_md_observed,
    ladder_family,
    picture="system-md",
)

# --- base instructions, context files, tool definitions and skill descriptions -----------------------------------


@st.composite
def _base_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    ladder = draw(_ladder())
    skill = _skill_scenario(draw)
    return {"base": ladder["base"], "context-files": ladder["context-files"], "skill": skill}


def _base_expected(w: Witness) -> dict[str, Any]:
    skill = _skill_of(w.scenarios["skill"])
    return {
        "starts with the base's first line": True,
        "context files": on_path(w.scenarios["context-files"]),
        "tools declared": [t["name"] for t in w.scenarios["skill"].get("tools", ())],
        "skill description carried": skill["description"],
    }


def _base_observed(w: Witness) -> dict[str, Any]:
    base, prompt = _prompt(w, "base"), _prompt(w, "context-files")
    skill = _skill_of(w.scenarios["skill"])
    skill_prompt = _prompt(w, "skill")
    return {
        "starts with the base's first line": bool(_head(base)) and prompt.startswith(_head(base)),
        "context files": carried(prompt, context_texts(w.scenarios["context-files"])),
        "tools declared": list((tq.requests(w.traces["skill"]) or [{}])[0].get("tools", [])),
        "skill description carried": skill["description"] if skill["description"] in skill_prompt else None,
    }


BASE_AND_CONTEXT = Property(
    asm.ladder,
    _context_premise("context-files"),
    _base_expected,
    _base_observed,
    lambda p: _base_family(),
    picture="context-files",
)

# --- the four inputs' system-prompt row --------------------------------------------------------------------------


@st.composite
def _table_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    ladder = draw(_ladder())
    addition = "\n" + draw(fam.sentence("ONE-OFF ADDITION"))
    prompts = draw(st.lists(fam.sentence("Question"), min_size=2, max_size=3, unique=True))
    handler = {
        "event": "before_agent_start",
        "label": "append",
        "action": {"kind": "append_system_prompt", "text": addition},
    }
    ladder["handler"] = fam.project(
        "ch01-context-handler",
        {},
        prompt=prompts,
        responses=[{"content": [{"type": "text", "text": f"Hi {n}."}], "stopReason": "stop"} for n in range(3)],
        extensions=[{"name": "appender", "handlers": [handler]}],
    )
    return ladder


def _addition(w: Witness) -> str:
    ext = w.scenarios["handler"]["extensions"][0]["handlers"][0]["action"]
    return str(ext.get("text", "")).strip()


def _table_expected(w: Witness) -> dict[str, Any]:
    n = len(w.scenarios["handler"]["prompt"])
    return {
        "context files": True,
        "APPEND_SYSTEM.md": True,
        "SYSTEM.md": True,
        "a before_agent_start handler": True,
        "requests carrying the handler's text": [True] + [False] * (n - 1),
        "with SYSTEM.md, the discovered context files": on_path(w.scenarios["system-md"]),
    }


def _table_observed(w: Witness) -> dict[str, Any]:
    base = _prompt(w, "base")

    def changed(key: str, marker: str) -> bool:
        prompt = _prompt(w, key)
        return bool(marker) and prompt != base and marker in prompt and marker not in base

    texts = on_path(w.scenarios["context-files"])
    handled = asm.prompts(w.traces["handler"])
    return {
        "context files": bool(texts) and all(changed("context-files", t) for t in texts),
        "APPEND_SYSTEM.md": changed("append", _pi_file(w, "append", "APPEND_SYSTEM.md")),
        "SYSTEM.md": changed("system-md", _pi_file(w, "system-md", "SYSTEM.md")),
        "a before_agent_start handler": changed("handler", _addition(w)),
        "requests carrying the handler's text": [_addition(w) in p for p in handled],
        "with SYSTEM.md, the discovered context files": carried(
            _prompt(w, "system-md"), context_texts(w.scenarios["system-md"])
        ),
    }


def _table_premise(w: Witness) -> Premise:
    needed = ("base", "context-files", "append", "system-md", "handler")
    missing = [k for k in needed if k not in w.scenarios]
    if missing or not on_path(w.scenarios["context-files"]):
        return Premise(False, f"the ladder lacks {missing or 'a context file on the path'}")
    return Premise(True, "each of the row's four sources in its own project, beside a base project")


TABLE_SYSTEM_PROMPT = Property(
    asm.table_system_prompt,
    _table_premise,
    _table_expected,
    _table_observed,
    lambda p: _table_family(),
    picture="context-files",
)

# --- skills ------------------------------------------------------------------------------------------------------


def _skill_of(scenario: Any) -> dict[str, str]:
    """The skill file of the witness: its path, name, description and body (parsed from its frontmatter)."""
    path, text = next(((p, t) for p, t in _files(scenario).items() if p.endswith("/SKILL.md")), ("", ""))
    head, _, body = text.removeprefix("---\n").partition("\n---\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)
    return {"path": path, "name": fields.get("name", ""), "description": fields.get("description", ""), "body": body}


def _skill_scenario(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(["release-notes", "triage", "style-check", "changelog"]))
    description = draw(fam.sentence("Use when"))
    body = "SKILL BODY: " + draw(fam.sentence("follow"))
    text = f"---\nname: {name}\ndescription: {description}\n---\n{body}"
    path = f"app/.pi/skills/{name}/SKILL.md"
    read = {
        "name": "read",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "behavior": {"kind": "return", "text": text},
    }
    before = draw(st.integers(0, 2))
    extra = [draw(fam.sentence("Thanks")) for _ in range(before)]
    return fam.project(
        "ch01-context-skill",
        {**draw(fam.context_files(at_least_one_on_path=False)), path: text},
        prompt=["Do the task.", *extra, f"/skill:{name} now"],
        tools=[read],
        responses=[
            {"content": [{"type": "toolCall", "name": "read", "arguments": {"path": path}}], "stopReason": "toolUse"},
            {"content": [{"type": "text", "text": "Done."}], "stopReason": "stop"},
            *({"content": [{"type": "text", "text": "OK."}], "stopReason": "stop"} for _ in extra),
            {"content": [{"type": "text", "text": "Selected."}], "stopReason": "stop"},
        ],
    )


def _skill_family(params: Params) -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    return st.composite(lambda draw: {"skill": _skill_scenario(draw)})()


def _skill_premise(w: Witness) -> Premise:
    skill = _skill_of(w.scenarios.get("skill", {}))
    if not skill["body"]:
        return Premise(False, "no skill file in the project")
    return Premise(True, f"skill {skill['name']!r}, read by the model, then selected with /skill:{skill['name']}")


def _descriptions_expected(w: Witness) -> dict[str, Any]:
    n = len(w.scenarios["skill"]["responses"])
    return {"description in every system prompt": [True] * n, "instructions in a system prompt": [False] * n}


def _descriptions_observed(w: Witness) -> dict[str, Any]:
    skill, found = _skill_of(w.scenarios["skill"]), asm.prompts(w.traces["skill"])
    return {
        "description in every system prompt": [skill["description"] in p for p in found],
        "instructions in a system prompt": [skill["body"] in p for p in found],
    }


SKILL_DESCRIPTIONS = Property(
    asm.skill_on_demand, _skill_premise, _descriptions_expected, _descriptions_observed, _skill_family
)


def _on_demand_expected(w: Witness) -> dict[str, Any]:
    return {
        "request 1 advertises the skill by its description": True,
        "first request carries the instructions": False,
        "first request that carries them": 2,
        "carried by": "toolResult",
        "the /skill: prompt's user message carries them": True,
    }


def _on_demand_observed(w: Witness) -> dict[str, Any]:
    skill, requests = _skill_of(w.scenarios["skill"]), tq.requests(w.traces["skill"])
    body = skill["body"]
    first = next((i for i, r in enumerate(requests) if tq.mentions(r, body)), -1)
    holder = next((m.get("role") for m in requests[first].get("messages", ()) if body in str(m.get("text", ""))), None)
    last_user = [m for m in (requests[-1].get("messages", ()) if requests else ()) if m.get("role") == "user"]
    return {
        "request 1 advertises the skill by its description": skill["description"]
        in asm.first_prompt(w.traces["skill"]),
        "first request carries the instructions": bool(requests) and tq.mentions(requests[0], body),
        "first request that carries them": first + 1 if first >= 0 else None,
        "carried by": holder if first >= 0 else None,
        "the /skill: prompt's user message carries them": bool(last_user) and body in str(last_user[-1].get("text")),
    }


SKILL_ON_DEMAND = Property(asm.skill_on_demand, _skill_premise, _on_demand_expected, _on_demand_observed, _skill_family)

# --- prompt templates --------------------------------------------------------------------------------------------


@st.composite
def _template_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    name = draw(st.sampled_from(["brief", "review", "explain", "plan"]))
    body = draw(fam.sentence("TEMPLATE: answer about")).removesuffix(".") + " $1."
    argument = draw(st.sampled_from(fam.WORDS))
    typed = f"/{name} {argument}"
    template = f"---\ndescription: {draw(fam.sentence('Ask'))}\n---\n{body}"
    return {
        "template": fam.project("ch01-context-prompt-template", {f"app/.pi/prompts/{name}.md": template}, prompt=typed),
        "no-template": fam.project("ch01-context-no-prompt-template", {}, prompt=typed),
    }


def _template_premise(w: Witness) -> Premise:
    typed = str(w.scenarios.get("template", {}).get("prompt", ""))
    files = _files(w.scenarios.get("template", {}))
    name = typed.split()[0].lstrip("/") if typed.startswith("/") else ""
    if name and f"app/.pi/prompts/{name}.md" in files:
        return Premise(True, f"typed {typed!r} with a template {name}.md, and the same typed without one")
    return Premise(False, "the typed text names no template of the project")


def _template_expected(w: Witness) -> dict[str, str]:
    typed = str(w.scenarios["template"]["prompt"])
    name, _, argument = typed.lstrip("/").partition(" ")
    body = _files(w.scenarios["template"])[f"app/.pi/prompts/{name}.md"].split("\n---\n", 1)[1]
    return {"with the template": body.replace("$1", argument), "without it": typed}


def _template_observed(w: Witness) -> dict[str, str]:
    return {
        "with the template": asm._arrived(w.traces["template"])[1],
        "without it": asm._arrived(w.traces["no-template"])[1],
    }


PROMPT_TEMPLATE = Property(
    asm.prompt_template, _template_premise, _template_expected, _template_observed, lambda p: _template_family()
)

# --- the core loads no configuration -----------------------------------------------------------------------------


@st.composite
def _core_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    rule = draw(fam.sentence("Core-test rule:"))
    name = draw(st.sampled_from(["AGENTS.md", "CLAUDE.md"]))
    files = {name: rule}
    core = {
        "id": "ch01-core-in-project",
        "layer": "agent",
        "prompt": draw(fam.sentence("Question")),
        "responses": [{"content": [{"type": "text", "text": "Hi."}], "stopReason": "stop"}],
        "project": {"files": files},
        "observe": {"requests": True},
    }
    app = fam.project("ch01-app-in-project", files)
    app["project"] = {"files": files}
    return {"core": core, "app": app}


def _core_premise(w: Witness) -> Premise:
    texts = {k: context_texts(w.scenarios[k]) for k in ("core", "app") if k in w.scenarios}
    if len(texts) == 2 and texts["core"] and texts["core"] == texts["app"]:
        return Premise(True, "one project folder with a context file, under the agent core alone and a session")
    return Premise(False, "the core and the session do not share a project with a context file")


def _core_expected(w: Witness) -> dict[str, bool]:
    return {"in the agent core's request": False, "in the session's request": True}


def _core_observed(w: Witness) -> dict[str, bool]:
    def has(key: str) -> bool:
        texts = context_texts(w.scenarios[key])
        requests = tq.requests(w.traces[key])
        return any(t in p for t in texts for p in asm.prompts(w.traces[key])) or any(
            tq.mentions(r, t) for r in requests for t in texts
        )

    return {"in the agent core's request": has("core"), "in the session's request": has("app")}


CORE_LOADS_NO_CONFIGURATION = Property(
    asm.core_alone, _core_premise, _core_expected, _core_observed, lambda p: _core_family()
)

PROPERTIES: dict[str, Property] = {
    "context.agents-md-by-directory": AGENTS_BY_DIRECTORY,
    "context.append-system-additive": APPEND_SYSTEM,
    "context.system-md-replaces": SYSTEM_MD,
    "context.base-and-context-files": BASE_AND_CONTEXT,
    "inputs.table-system-prompt": TABLE_SYSTEM_PROMPT,
    "context.skill-descriptions-always": SKILL_DESCRIPTIONS,
    "context.skill-instructions-on-demand": SKILL_ON_DEMAND,
    "context.prompt-template-at-input": PROMPT_TEMPLATE,
    "packages.core-loads-no-configuration": CORE_LOADS_NO_CONFIGURATION,
}

__all__ = ["PROPERTIES", "carried", "context_texts", "on_path"]
