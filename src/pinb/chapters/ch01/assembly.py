"""The hand-written scenarios of chapter 01's request-assembly, session-tree, compaction and context-ladder claims.

They use pinb's application-layer scenario fields (a project folder, session steps, `request` and `tree` lines), so
each runs unchanged on the stand-in and on real Pi; their properties (`props_inputs`, `props_context`,
`props_session`) read the markers the scenarios' own file texts carry, never a constant of the stand-in.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.properties import Params, Trace

ROOT_RULE = "Root rule: run the tests."
APP_RULE = "App rule: use tabs."
ELSEWHERE_RULE = "Elsewhere rule: never read this."
APPENDED = "APPENDED: be brief."
REPLACEMENT = "REPLACEMENT PROMPT: you review code."
SKILL_DESCRIPTION = "Write release notes from the changelog."
SKILL_BODY = "SKILL BODY: read CHANGELOG.md, group by type, never invent entries."
SKILL_PATH = "app/.pi/skills/release-notes/SKILL.md"
SKILL_NAME = "release-notes"
SKILL = f"---\nname: {SKILL_NAME}\ndescription: {SKILL_DESCRIPTION}\n---\n{SKILL_BODY}"
LADDER = {"AGENTS.md": ROOT_RULE, "app/AGENTS.md": APP_RULE, "elsewhere/AGENTS.md": ELSEWHERE_RULE}
CLAUDE_RULE = "Claude rule: keep lines short."
#: AGENTS.md's friend: a CLAUDE.md at the root, an AGENTS.md in the working directory.
CLAUDE_LADDER = {"CLAUDE.md": CLAUDE_RULE, "app/AGENTS.md": APP_RULE}
ADDITION = "\nONE-OFF ADDITION"
TEMPLATE_NAME = "brief"
TEMPLATE_BODY = "TEMPLATE: answer in one line about $1."
TEMPLATE_ARG = "caching"
TEMPLATE = f"---\ndescription: Ask for a one-line answer\n---\n{TEMPLATE_BODY}"

# --- trace reading ------------------------------------------------------------------------------------------------


def _lines(trace: Trace, source: str, type_: str) -> list[dict[str, Any]]:
    return [dict(line) for line in trace if line.get("source") == source and line.get("type") == type_]


def inputs(trace: Trace) -> list[dict[str, Any]]:
    """The `request` lines: what each request was built from."""
    return _lines(trace, "request", "inputs")


def prompts(trace: Trace) -> list[str]:
    return [str(line.get("systemPrompt", "")) for line in inputs(trace)]


def first_prompt(trace: Trace) -> str:
    found = prompts(trace)
    return found[0] if found else ""


def snapshots(trace: Trace) -> list[dict[str, Any]]:
    return _lines(trace, "tree", "snapshot")


def _head(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _said(message: dict[str, Any]) -> str:
    return f"{message.get('role')}:{message.get('text', '')}"


def request_history(request: dict[str, Any]) -> list[str]:
    """A `model` line's messages other than system ones, as `role:text`."""
    return [_said(m) for m in request.get("messages", ()) if m.get("role") != "system"]


def branch_history(line: dict[str, Any]) -> list[str]:
    """The message entries of a `request` line's branch (system messages left out), as `role:text`."""
    return [_said(e) for e in line.get("branch", ()) if e.get("type") == "message" and e.get("role") != "system"]


def _entry(snapshot: dict[str, Any], role: str, text: str) -> dict[str, Any]:
    messages = (e for e in snapshot.get("entries", ()) if e.get("type") == "message")
    return next((e for e in messages if (e.get("role"), e.get("text")) == (role, text)), {})


# --- the context ladder ---------------------------------------------------------------------------------------------


def _project(id_: str, files: dict[str, str], **fields: Any) -> dict[str, Any]:
    return {
        "id": id_,
        "layer": "app",
        "prompt": "Hello.",
        "responses": [sc.text("Hi.")],
        "project": {"files": files, "cwd": "app"},
        "observe": {"requests": True},
        **fields,
    }


def ladder(params: Params) -> dict[str, dict[str, Any]]:
    """The system prompt with each rung of the chapter's context ladder added in turn."""
    return {
        "base": _project("ch01-context-base", {}),
        "context-files": _project("ch01-context-files", LADDER),
        "claude-md": _project("ch01-context-claude-md", CLAUDE_LADDER),
        "append": _project("ch01-context-append", {**LADDER, "app/.pi/APPEND_SYSTEM.md": APPENDED}),
        "system-md": _project("ch01-context-system-md", {**LADDER, "app/.pi/SYSTEM.md": REPLACEMENT}),
        "skill": skill_on_demand(params)["skill"],
    }


def skill_on_demand(params: Params) -> dict[str, dict[str, Any]]:
    """A project skill, a model that reads its file with a `read` tool, then a second prompt."""
    read = {
        "name": "read",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "behavior": {"kind": "return", "text": SKILL},
    }
    scenario = _project(
        "ch01-context-skill",
        {**LADDER, SKILL_PATH: SKILL},
        prompt=["Write the release notes.", "Thanks.", f"/skill:{SKILL_NAME} for 1.2"],
        tools=[read],
        responses=[
            sc.calls(sc.call("read", {"path": SKILL_PATH})),
            sc.text("Release notes written."),
            sc.text("OK."),
            sc.text("Notes for 1.2."),
        ],
    )
    return {"skill": scenario}


def prompt_template(params: Params) -> dict[str, dict[str, Any]]:
    """The same typed `/brief caching`, in a project with a `.pi/prompts/brief.md` template and in one without."""
    typed = f"/{TEMPLATE_NAME} {TEMPLATE_ARG}"
    return {
        "template": _project(
            "ch01-context-prompt-template", {f"app/.pi/prompts/{TEMPLATE_NAME}.md": TEMPLATE}, prompt=typed
        ),
        "no-template": _project("ch01-context-no-prompt-template", {}, prompt=typed),
    }


def _arrived(trace: Trace) -> tuple[str, str]:
    """What was typed (the driver's prompt) and what arrived as the user message in request #1."""
    typed = next((str(ln.get("text")) for ln in trace if ln.get("type") == "prompt"), "")
    requests = tq.requests(trace)
    users = [m for m in (requests[0].get("messages", ()) if requests else ()) if m.get("role") == "user"]
    return typed, str(users[-1].get("text")) if users else ""


CORE_RULE = "Core-test rule: answer in French."


def core_alone(params: Params) -> dict[str, dict[str, Any]]:
    """One project folder with an AGENTS.md, as the working directory of the agent core alone and of a session."""
    files = {"AGENTS.md": CORE_RULE}
    core = {
        "id": "ch01-core-in-project",
        "layer": "agent",
        "prompt": "Hello.",
        "responses": [sc.text("Hi.")],
        "project": {"files": files},
        "observe": {"requests": True},
    }
    app = _project("ch01-app-in-project", files)
    app["project"] = {"files": files}
    return {"core": core, "app": app}


# --- the four inputs ---------------------------------------------------------------------------------------------


def table_system_prompt(params: Params) -> dict[str, dict[str, Any]]:
    handler = sc.handler("before_agent_start", "append", "append_system_prompt", text=ADDITION)
    with_handler = _project(
        "ch01-context-handler",
        {},
        prompt=["Hello.", "Again."],
        responses=[sc.text("Hi."), sc.text("Hi again.")],
        extensions=[sc.extension("appender", handler)],
    )
    return {**ladder(params), "handler": with_handler}


def assembled(params: Params) -> dict[str, dict[str, Any]]:
    """The same parts twice, then one more tool, then another system prompt."""
    tool = {"name": "lookup", "behavior": {"kind": "return", "text": "found"}}

    def one(id_: str, **fields: Any) -> dict[str, Any]:
        return sc.app(id_, "same words", [sc.text("ok")], observe={"requests": True}, **fields)

    return {
        "same-a": one("ch01-assembled-a", tools=[sc.WORD_COUNT_TOOL]),
        "same-b": one("ch01-assembled-b", tools=[sc.WORD_COUNT_TOOL]),
        "more-tools": one("ch01-assembled-tool", tools=[sc.WORD_COUNT_TOOL, tool]),
        "other-prompt": {**one("ch01-assembled-prompt", tools=[sc.WORD_COUNT_TOOL]), "system_prompt": "You review."},
    }


def _parts(trace: Trace) -> tuple[str, list[str], list[str]]:
    request = (tq.requests(trace) or [{}])[0]
    return first_prompt(trace), request_history(request), list(request.get("tools", ()))


def active_branch(params: Params) -> dict[str, dict[str, Any]]:
    pruner = sc.extension("pruner", sc.handler("context", "prune", "drop_messages", text="forget this"))
    return {
        "pruned": sc.app(
            "ch01-context-pruned",
            ["forget this", "keep this"],
            [sc.text("one"), sc.text("two")],
            extensions=[pruner],
            observe={"requests": True},
        ),
    }


def tools_table(params: Params) -> dict[str, dict[str, Any]]:
    lookup = {"name": "lookup", "behavior": {"kind": "return", "text": "found"}}
    narrower = sc.extension("narrower", sc.handler("agent_end", "narrow", "set_active_tools", tools=["word_count"]))
    return {
        "narrowed": sc.app(
            "ch01-tools-narrowed",
            ["first", "second"],
            [sc.text("one"), sc.text("two")],
            tools=[lookup, sc.WORD_COUNT_TOOL],
            extensions=[narrower],
        ),
    }


# --- the session tree ----------------------------------------------------------------------------------------------

Q1, A1, Q2, A2 = "first question", "first answer", "second question", "second answer"
Q2E, A2E = "second question, edited", "answer to the edit"


def edited(params: Params) -> dict[str, dict[str, Any]]:
    """Two questions, then back to the second one (navigateTree) and an edited version of it."""
    scenario = sc.app(
        "ch01-tree-edit",
        [Q1, Q2],
        [sc.text(A1), sc.text(A2), sc.text(A2E)],
        observe={"requests": True},
        steps=[
            {"do": "navigate", "target": {"role": "user", "text": Q2}},
            {"do": "prompt", "text": Q2E},
            {"do": "snapshot"},
        ],
    )
    return {"edit": scenario}


# --- compaction ------------------------------------------------------------------------------------------------------

SUMMARY = "The user asked two questions."  # the notebook knob compaction_summary's default
WORDS = " word" * 40


def compacted(params: Params) -> dict[str, dict[str, Any]]:
    """Four long turns, a manual compaction whose summary the (scripted) model writes, one more question."""
    summary = str(params.get("compaction_summary", SUMMARY))
    scenario = sc.app(
        "ch01-compacted",
        [f"question {n}{WORDS}" for n in range(4)],
        [sc.text(f"answer {n}{WORDS}") for n in range(4)] + [sc.text(summary), sc.text("after compaction")],
        settings={"compaction": {"keep_recent_tokens": 60}},
        observe={"requests": True},
        steps=[{"do": "compact"}, {"do": "prompt", "text": "question 4"}, {"do": "snapshot"}],
    )
    return {"compact": scenario}


# --- the seam and the provider -------------------------------------------------------------------------------------


def appended_once(params: Params) -> dict[str, dict[str, Any]]:
    handler = sc.handler("before_agent_start", "append", "append_system_prompt", text=ADDITION)
    scenario = sc.app(
        "ch01-seam-append-once",
        ["first", "second"],
        [sc.text("one"), sc.text("two")],
        extensions=[sc.extension("appender", handler)],
        observe={"requests": True},
    )
    return {"append-once": scenario}


def two_providers(params: Params) -> dict[str, dict[str, Any]]:
    """Chapter 01's program twice, each time with another provider (another faux script) and nothing else changed."""
    first, second = sc.word_count("agent"), sc.word_count("agent")
    first["id"], second["id"] = "ch01-provider-a", "ch01-provider-b"
    second["responses"][1] = sc.text("Vier Wörter.")
    return {"provider-a": first, "provider-b": second}
