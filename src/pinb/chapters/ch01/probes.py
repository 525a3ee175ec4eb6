"""Experiments no scenario can express, run on the stand-in's Python API: the session tree, compaction, the
context ladder, agent-core hooks, provider swapping, project trust, declared result types.

Each probe builds what it needs, observes what the stand-in does, and compares it with the chapter's sentence.
These check pinb's model of Pi (which follows Pi 1.6.0's code); they say nothing about real Pi by themselves.
"""

from __future__ import annotations

import difflib
from typing import Any

from pinb.chapters import probing
from pinb.chapters.experiments import Finding, Params, ProbeExperiment

# --- helpers ----------------------------------------------------------------------------------------------------


def _word_count_tool() -> Any:
    from pinb.agent import AgentTool, AgentToolResult
    from pinb.ai.types import TextContent

    received: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        received.append(dict(params))
        n = len([w for w in str(params.get("text", "")).split() if w])
        return AgentToolResult(content=(TextContent(text=str(n)),), details={"words": n})

    tool = AgentTool(
        name="word_count",
        description="Count the words in a string.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        execute=execute,
    )
    return tool, received


def _count_script(text: str = "the quick brown fox", answer: str = "Four words.") -> list[Any]:
    from pinb.ai.faux import faux_assistant_message, faux_text, faux_tool_call

    return [
        faux_assistant_message([faux_tool_call("word_count", {"text": text})], stop_reason="toolUse"),
        faux_assistant_message([faux_text(answer)]),
    ]


def _request_prompt(request: Any) -> str:
    from pinb.ai.transcript import get_current_system_prompt

    return get_current_system_prompt(request.context.messages)


def _messages(manager: Any) -> list[str]:
    """Role and text of each message the manager's active branch gives the next request."""
    from pinb.ai.types import message_text

    return [
        f"{m.role}:{getattr(m, 'summary', None) or message_text(m) or ''}"
        for m in manager.build_session_context().messages
    ]


def _entries_json(manager: Any) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in manager.get_entries()]


def _tree_shown(manager: Any, **more: Any) -> probing.Shown:
    """What a session-tree probe shows: every entry and the leaf, plus anything probe-specific."""
    return {"entries": _entries_json(manager), "leaf": manager.get_leaf_id(), **more}


def _tree(manager: Any) -> Any:
    from pinb.ai.types import AssistantMessage, TextContent, UserMessage
    from pinb.app.session_tree import SessionManager, sequential_ids

    manager = manager or SessionManager(id_factory=sequential_ids(), clock=lambda: 1_000)

    def say(role: str, text: str) -> str:
        if role == "user":
            return manager.append_message(UserMessage(content=text, timestamp=0))
        return manager.append_message(AssistantMessage(content=(TextContent(text=text),), timestamp=0))

    return manager, say


def _edited_session() -> tuple[Any, dict[str, str]]:
    """q1, a1, q2 then an edit of q2 (a new branch from a1): q2', a2'."""
    manager, say = _tree(None)
    ids = {"q1": say("user", "first question"), "a1": say("assistant", "first answer")}
    ids["q2"] = say("user", "second question")
    ids["a2"] = say("assistant", "second answer")
    manager.branch(ids["a1"])
    ids["q2e"] = say("user", "second question, edited")
    ids["a2e"] = say("assistant", "answer to the edit")
    return manager, ids


# --- chapter 01: the session tree -------------------------------------------------------------------------------


async def tree_entries(params: Params) -> tuple[Finding, probing.Shown]:
    manager, ids = _edited_session()
    entries = manager.get_entries()
    by_id = {e.id: e for e in entries}
    parents_known = all(e.parent_id is None or e.parent_id in by_id for e in entries)
    unique = len(by_id) == len(entries)
    roots = [e.id for e in entries if e.parent_id is None]
    holds = parents_known and unique and len(roots) == 1 and by_id[ids["q2e"]].parent_id == ids["a1"]
    return Finding(
        holds,
        f"{len(entries)} entries, ids unique: {unique}, every parent id names an entry: {parents_known}, one root; "
        f"the edited question's parent is the first answer: {by_id[ids['q2e']].parent_id == ids['a1']}",
    ), _tree_shown(manager)


async def tree_active_branch(params: Params) -> tuple[Finding, probing.Shown]:
    manager, ids = _edited_session()
    branch_ids = [e.id for e in manager.get_branch()]
    history = _messages(manager)
    expected = ["user:first question", "assistant:first answer", "user:second question, edited"]
    expected.append("assistant:answer to the edit")
    message_ids = [e.id for e in manager.get_branch() if e.type == "message"]
    holds = history == expected and message_ids == [ids[k] for k in ("q1", "a1", "q2e", "a2e")]
    holds = holds and ids["q2"] not in branch_ids
    return Finding(holds, f"next request's history: {history}"), _tree_shown(manager)


async def tree_branches_survive(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.app.session_tree import SessionManager

    manager, ids = _edited_session()
    reloaded = SessionManager.from_jsonl(manager.to_jsonl())
    kept = all(reloaded.get_entry(ids[k]) is not None for k in ("q2", "a2"))
    leaves = [e.id for e in manager.get_entries() if not manager.get_children(e.id)]
    holds = kept and len(leaves) == 2
    return Finding(
        holds,
        f"after the edit the file holds {len(manager.get_entries())} entries and {len(leaves)} branch tips; the "
        f"abandoned question and answer survive a write and re-read: {kept}",
    ), _tree_shown(manager)


async def tree_walk_versus_branch(params: Params) -> tuple[Finding, probing.Shown]:
    manager, ids = _edited_session()
    walk = [e.id for e in manager.get_entries()]
    branch = [e.id for e in manager.get_branch()]
    edited = ids["q2e"]
    earlier_walk = walk[: walk.index(edited)]
    earlier_branch = branch[: branch.index(edited)]
    holds = earlier_walk != earlier_branch and ids["q2"] in earlier_walk and ids["q2"] not in earlier_branch
    return Finding(
        holds,
        f"entries 'earlier' than the edited question: walking the tree {len(earlier_walk)} (includes the abandoned "
        f"question: {ids['q2'] in earlier_walk}), reading the branch {len(earlier_branch)}",
    ), _tree_shown(manager)


async def compaction(params: Params) -> tuple[Finding, probing.Shown]:
    manager, say = _tree(None)
    ids = [say("user", "q1"), say("assistant", "a1"), say("user", "q2"), say("assistant", "a2")]
    before = _messages(manager)
    summary = str(params.get("compaction_summary", "The user asked two questions."))
    manager.append_compaction(summary, ids[2], tokens_before=1000)
    say("user", "q3")
    after = _messages(manager)
    still_there = all(manager.get_entry(i) is not None for i in ids)
    replaced = "user:q1" not in after and "assistant:a1" not in after and any(summary in m for m in after)
    kept = "user:q2" in after and "user:q3" in after
    shown = _tree_shown(manager, before=before, after=after)
    return Finding(
        replaced and kept and still_there,
        f"history before: {before}; after compacting (keeping from q2): {after}; original entries still in the "
        f"tree: {still_there}",
    ), shown


# --- chapter 01: the context ladder (request assembly) ----------------------------------------------------------


def _prompt(files: dict[str, str], cwd: str = "/project/app", trusted: bool = True) -> tuple[str, Any]:
    from pinb.app.resources import VirtualFS, Workspace, load_resources
    from pinb.app.system_prompt import build_system_prompt, options_from_resources

    workspace = Workspace(fs=VirtualFS(files), cwd=cwd, trusted=trusted)
    resources = load_resources(workspace)
    return build_system_prompt(options_from_resources(resources, cwd)), resources


BASE_FILES = {"/project/AGENTS.md": "Root rule: run the tests.", "/project/app/AGENTS.md": "App rule: use tabs."}
SKILL = (
    "---\nname: release-notes\ndescription: Write release notes from the changelog.\n---\n"
    "SKILL BODY: read CHANGELOG.md, group by type, never invent entries."
)


async def context_ladder(params: Params) -> probing.Shown:
    """The system prompt with each rung added in turn; each claim's probe reads the part it is about."""
    base, _ = _prompt({})
    with_context, resources = _prompt(BASE_FILES)
    appended, _ = _prompt({**BASE_FILES, "/project/app/.pi/APPEND_SYSTEM.md": "APPENDED: be brief."})
    replaced, _ = _prompt({**BASE_FILES, "/project/app/.pi/SYSTEM.md": "REPLACEMENT PROMPT."})
    skills, _ = _prompt({**BASE_FILES, "/project/app/.pi/skills/release-notes/SKILL.md": SKILL})
    shown = {
        "base": base,
        "with_context": with_context,
        "appended": appended,
        "replaced": replaced,
        "skills": skills,
        "context_files": [f.path for f in resources.context_files],
    }
    return shown


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


async def context_base_and_files(params: Params) -> tuple[Finding, probing.Shown]:
    shown = await context_ladder(params)
    base_head = _first_line(shown["base"])
    prompt = shown["with_context"]
    holds = prompt.startswith(base_head) and "Root rule" in prompt
    holds = holds and "App rule" in prompt and "Root rule" not in shown["base"]
    return Finding(
        holds,
        f"base starts {base_head[:60]!r}; with AGENTS.md files the prompt starts the same: "
        f"{prompt.startswith(base_head)}, root rule added: {'Root rule' in prompt}, app rule added: "
        f"{'App rule' in prompt}",
    ), shown


async def context_agents_by_directory(params: Params) -> tuple[Finding, probing.Shown]:
    shown = await context_ladder(params)
    prompt = shown["with_context"]
    order_ok = 0 <= prompt.find("Root rule") < prompt.find("App rule")
    outside, _ = _prompt({**BASE_FILES, "/elsewhere/AGENTS.md": "Elsewhere rule."})
    holds = shown["context_files"] == ["/project/AGENTS.md", "/project/app/AGENTS.md"] and order_ok
    holds = holds and "Elsewhere rule" not in outside
    return Finding(
        holds,
        f"context files found from the working directory up: {shown['context_files']}; root before app: "
        f"{order_ok}; a file outside the directory chain ignored: {'Elsewhere rule' not in outside}",
    ), shown


async def context_append(params: Params) -> tuple[Finding, probing.Shown]:
    shown = await context_ladder(params)
    appended = shown["appended"]
    kept_base = appended.startswith(shown["with_context"].split("\n")[0])
    holds = kept_base and "APPENDED" in appended and "Root rule" in appended
    return Finding(
        holds,
        f"with APPEND_SYSTEM.md its text is in the prompt: {'APPENDED' in appended}; base instructions kept: "
        f"{kept_base}; context files kept: {'Root rule' in appended}",
    ), shown


async def context_system_md(params: Params) -> tuple[Finding, probing.Shown]:
    shown = await context_ladder(params)
    base_head = _first_line(shown["base"])
    replaced = shown["replaced"]
    holds = "REPLACEMENT PROMPT." in replaced and base_head not in replaced
    return Finding(
        holds,
        f"with SYSTEM.md the prompt starts {_first_line(replaced)[:60]!r}; base first line still present: "
        f"{base_head in replaced}; context files kept: {'Root rule' in replaced}",
    ), shown


async def context_skills(params: Params) -> tuple[Finding, probing.Shown]:
    shown = await context_ladder(params)
    prompt = shown["skills"]
    holds = "Write release notes from the changelog." in prompt and "SKILL BODY" not in prompt
    return Finding(
        holds,
        f"skill description in the prompt: {'Write release notes' in prompt}; skill instructions in the prompt: "
        f"{'SKILL BODY' in prompt}",
    ), shown


async def context_skill_on_demand(params: Params) -> tuple[Finding, probing.Shown]:
    """Both halves: a plain prompt carries only the skill's description; `/skill:name` brings its instructions."""
    from pinb.ai.faux import faux_assistant_message, faux_text
    from pinb.ai.types import message_text
    from pinb.app.resources import VirtualFS, Workspace
    from pinb.app.session import create_agent_session
    from pinb.app.tools import create_read_tool

    fs = VirtualFS({**BASE_FILES, "/project/app/.pi/skills/release-notes/SKILL.md": SKILL})
    provider = probing.faux(*(faux_assistant_message([faux_text(t)]) for t in ("one", "two")))
    session = await create_agent_session(
        stream_fn=provider.stream,
        cwd="/project/app",
        workspace=Workspace(fs=fs, cwd="/project/app"),
        tools=[create_read_tool(fs, "/project/app")],
    )
    await session.prompt("Draft the notes.")
    await session.prompt("/skill:release-notes draft the notes")
    session.dispose()
    seen = []
    for request in provider.requests:
        users = [message_text(m) for m in request.context.messages if getattr(m, "role", "") == "user"]
        prompt = _request_prompt(request)
        seen.append(
            ("Write release notes" in prompt, "SKILL BODY" in prompt, "SKILL BODY" in (users[-1] if users else ""))
        )
    holds = len(seen) == 2 and seen[0] == (True, False, False) and seen[1] == (True, False, True)
    return Finding(
        holds,
        "(description in the system prompt, instructions in the system prompt, instructions in the last user "
        f"message) per request: plain prompt {seen[0] if seen else None}, after /skill:release-notes "
        f"{seen[1] if len(seen) > 1 else None}",
    ), {}


async def context_table_system_prompt(params: Params) -> tuple[Finding, probing.Shown]:
    parts = [await context_base_and_files(params), await context_append(params), await context_system_md(params)]
    handler = await before_agent_start_text(params)
    names = ("AGENTS.md", "APPEND_SYSTEM.md", "SYSTEM.md", "a before_agent_start handler")
    changed = {name: finding.holds for name, (finding, _shown) in zip(names, [*parts, handler], strict=True)}
    return Finding(all(changed.values()), f"each source changed the system prompt as the chapter says: {changed}"), {}


# --- sessions and extensions ------------------------------------------------------------------------------------


async def before_agent_start_text(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.ai.faux import faux_assistant_message, faux_text
    from pinb.app.extensions.results import BeforeAgentStartEventResult

    calls = {"n": 0}

    def extension(pi: Any) -> None:
        async def on_start(event: Any, ctx: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 1:
                return BeforeAgentStartEventResult(system_prompt=event.system_prompt + "\nONE-OFF ADDITION")
            return None

        pi.on("before_agent_start", on_start)

    provider = probing.faux(faux_assistant_message([faux_text("one")]), faux_assistant_message([faux_text("two")]))
    session = await probing.session_with(provider, [("appender", extension)])
    await session.prompt("first")
    await session.prompt("second")
    prompts = [_request_prompt(r) for r in provider.requests]
    session.dispose()
    holds = len(prompts) == 2 and "ONE-OFF ADDITION" in prompts[0] and "ONE-OFF ADDITION" not in prompts[1]
    holds = holds and prompts[0].startswith(prompts[1])
    return Finding(
        holds,
        f"request 1 prompt ends {prompts[0][-40:]!r}; request 2 prompt (builder's own) ends "
        f"{prompts[1][-40:] if len(prompts) > 1 else None!r}",
    ), {"prompts": prompts}


async def request_assembled(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.ai.transcript import get_current_tools

    def make_tool(name: str) -> Any:
        from pinb.agent import AgentTool, AgentToolResult

        return AgentTool(
            name=name, parameters={"type": "object", "properties": {}}, execute=lambda *a: AgentToolResult()
        )

    async def one(tools: list[str]) -> Any:
        from pinb.ai.faux import faux_assistant_message, faux_text

        provider = probing.faux(faux_assistant_message([faux_text("ok")]))
        session = await probing.session_with(provider, tools=[make_tool(n) for n in tools])
        await session.prompt("same words")
        session.dispose()
        request = provider.requests[0]
        return (
            _request_prompt(request),
            [getattr(m, "role", "?") for m in request.context.messages],
            [t.name for t in get_current_tools(request.context.messages)],
        )

    a, b, c = await one(["read"]), await one(["read"]), await one(["read", "grep"])
    # Assembled from parts: the same parts give the same request, and adding a tool changes what is built from the
    # tool list (the declared tools, and the prompt's lines that name the tool), nothing else.
    prompt_changes = [
        line[1:].strip()
        for line in difflib.ndiff(a[0].splitlines(), c[0].splitlines())
        if line[:1] in "+-" and line[1:].strip()
    ]
    prompt_rebuilt = all("grep" in line for line in prompt_changes)
    holds = a == b and a[1] == c[1] and c[2] == [*a[2], "grep"] and prompt_rebuilt
    return Finding(
        holds,
        f"same parts → same request: {a == b}; adding a tool changed the declared tools {a[2]} → {c[2]}, the "
        f"messages unchanged: {a[1] == c[1]}; system prompt lines that changed: {prompt_changes} (all name the "
        f"added tool: {prompt_rebuilt})",
    ), {}


async def table_tools(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.agent import AgentToolResult
    from pinb.ai.faux import faux_assistant_message, faux_text
    from pinb.ai.transcript import get_current_tools

    def extension(pi: Any) -> None:
        pi.register_tool(
            name="lookup",
            description="Look something up.",
            parameters={"type": "object", "properties": {}},
            execute=lambda *a: AgentToolResult(),
        )

    provider = probing.faux(*(faux_assistant_message([faux_text(t)]) for t in ("one", "two")))
    session = await probing.session_with(provider, [("registrar", extension)])
    await session.prompt("first")
    session.set_active_tools_by_name([])
    await session.prompt("second")
    session.dispose()
    tools = [[t.name for t in get_current_tools(r.context.messages)] for r in provider.requests]
    holds = len(tools) == 2 and "lookup" in tools[0] and "lookup" not in tools[1]
    return Finding(holds, f"tools per request: registered → {tools[0]}; after set_active_tools([]) → {tools[1:]}"), {}


async def table_active_branch(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.ai.faux import faux_assistant_message, faux_text
    from pinb.ai.types import message_text
    from pinb.app.extensions.results import ContextEventResult

    def extension(pi: Any) -> None:
        async def on_context(event: Any, ctx: Any) -> Any:
            return ContextEventResult(messages=[m for m in event.messages if message_text(m) != "forget this"])

        pi.on("context", on_context)

    provider = probing.faux(*(faux_assistant_message([faux_text(t)]) for t in ("one", "two")))
    session = await probing.session_with(provider, [("pruner", extension)])
    await session.prompt("forget this")
    await session.prompt("keep this")
    session.dispose()
    texts = [message_text(m) for m in provider.requests[-1].context.messages if getattr(m, "role", "") == "user"]
    branch = [message_text(e.message) for e in session.session_manager.get_branch() if e.type == "message"]
    holds = "forget this" not in texts and "keep this" in texts and "forget this" in branch
    return Finding(
        holds,
        f"a context handler removed a message from the request ({texts}) while the branch keeps it ({branch})",
    ), {}


# --- chapter 01: the provider argument --------------------------------------------------------------------------


async def provider_is_one_argument(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.agent import Agent

    async def run(answer: str) -> tuple[list[str], int]:
        provider = probing.faux(*_count_script(answer=answer))
        tool, received = _word_count_tool()
        agent = Agent(
            initial_state={"system_prompt": "You count words.", "model": provider.get_model(), "tools": [tool]},
            stream_fn=provider.stream,
        )
        texts: list[str] = []
        agent.subscribe(
            lambda e, s: (
                texts.append(e.message.content[0].text)
                if e.type == "message_end"
                and e.message.role == "assistant"
                and e.message.content
                and getattr(e.message.content[0], "type", "") == "text"
                else None
            )
        )
        await agent.prompt("How many words in 'the quick brown fox'?")
        return texts, len(received)

    first, second = await run("Four words."), await run("Vier Wörter.")
    holds = first == (["Four words."], 1) and second == (["Vier Wörter."], 1)
    return Finding(
        holds, f"provider A → {first[0]}, provider B → {second[0]}; the same tool ran {first[1]} and {second[1]} times"
    ), {}


EXPERIMENTS: dict[str, ProbeExperiment] = {
    "tree.entries-id-parent": ProbeExperiment(tree_entries),
    "tree.active-branch-supplies-history": ProbeExperiment(tree_active_branch),
    "tree.branches-survive-edits": ProbeExperiment(tree_branches_survive),
    "tree.walk-versus-branch": ProbeExperiment(tree_walk_versus_branch),
    "compaction.replaces-in-later-requests": ProbeExperiment(compaction),
    "compaction.entries-stay": ProbeExperiment(compaction),
    "context.base-and-context-files": ProbeExperiment(context_base_and_files),
    "context.agents-md-by-directory": ProbeExperiment(context_agents_by_directory),
    "context.append-system-additive": ProbeExperiment(context_append),
    "context.system-md-replaces": ProbeExperiment(context_system_md),
    "context.skill-descriptions-always": ProbeExperiment(context_skills),
    "context.skill-instructions-on-demand": ProbeExperiment(context_skill_on_demand),
    "inputs.table-system-prompt": ProbeExperiment(context_table_system_prompt),
    "inputs.table-active-branch": ProbeExperiment(table_active_branch),
    "inputs.table-tools": ProbeExperiment(table_tools),
    "loop.request-assembled": ProbeExperiment(request_assembled),
    "seam.before-agent-start-text-not-builder": ProbeExperiment(before_agent_start_text),
    "example.provider-is-one-argument": ProbeExperiment(provider_is_one_argument),
}
