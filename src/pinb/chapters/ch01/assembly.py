"""Chapter 01's request-assembly, session-tree, compaction and context-ladder claims, as scenarios.

They use pinb's application-layer scenario fields (a project folder, session steps, `request` and `tree` lines), so
each runs unchanged on the stand-in and on real Pi. Every judge reads what the traces show and compares it with
the chapter's sentence: the markers it looks for are the scenario's own file texts, never a constant of the
stand-in.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.experiments import Finding, Params, ScenarioExperiment, Trace

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


def judge_base_and_context_files(traces: dict[str, Trace]) -> Finding:
    base, prompt = first_prompt(traces["base"]), first_prompt(traces["context-files"])
    skill_prompt = first_prompt(traces["skill"])
    tools = (tq.requests(traces["skill"]) or [{}])[0].get("tools", [])
    starts = bool(_head(base)) and prompt.startswith(_head(base))
    files = ROOT_RULE in prompt and APP_RULE in prompt and ROOT_RULE not in base
    carried = "read" in tools and SKILL_DESCRIPTION in skill_prompt
    return Finding(
        starts and files and carried,
        f"with AGENTS.md files the prompt still starts with the base's first line {_head(base)[:50]!r}: {starts}; "
        f"root and app rules added: {files}; a request of the skill project declares tools {tools} and carries "
        f"the skill's description: {SKILL_DESCRIPTION in skill_prompt}",
    )


def judge_agents_md_by_directory(traces: dict[str, Trace]) -> Finding:
    prompt = first_prompt(traces["context-files"])
    root, app = prompt.find(ROOT_RULE), prompt.find(APP_RULE)
    ordered = 0 <= root < app
    holds = ordered and ELSEWHERE_RULE not in prompt
    return Finding(
        holds,
        f"working directory app/: root AGENTS.md in the prompt at {root}, app/AGENTS.md at {app} (root first: "
        f"{ordered}); a sibling folder's AGENTS.md included: {ELSEWHERE_RULE in prompt}",
    )


def judge_append_system(traces: dict[str, Trace]) -> Finding:
    base, appended = first_prompt(traces["base"]), first_prompt(traces["append"])
    kept = bool(_head(base)) and appended.startswith(_head(base))
    holds = kept and APPENDED in appended and ROOT_RULE in appended
    return Finding(
        holds,
        f"with APPEND_SYSTEM.md its text is in the prompt: {APPENDED in appended}; the base's first line kept: "
        f"{kept}; context files kept: {ROOT_RULE in appended}",
    )


def judge_system_md(traces: dict[str, Trace]) -> Finding:
    base, replaced = first_prompt(traces["base"]), first_prompt(traces["system-md"])
    base_kept = bool(_head(base)) and _head(base) in replaced
    holds = replaced.startswith(REPLACEMENT) and not base_kept
    return Finding(
        holds,
        f"with SYSTEM.md the prompt starts {_head(replaced)[:60]!r}; the base's first line still present: "
        f"{base_kept}; context files kept: {ROOT_RULE in replaced}",
    )


def judge_skill_descriptions(traces: dict[str, Trace]) -> Finding:
    found = prompts(traces["skill"])
    described = bool(found) and all(SKILL_DESCRIPTION in p for p in found)
    bodies = [SKILL_BODY in p for p in found]
    return Finding(
        described and not any(bodies),
        f"{len(found)} requests; the skill's description in every system prompt: {described}; its instructions in "
        f"a system prompt: {any(bodies)}",
    )


def judge_skill_on_demand(traces: dict[str, Trace]) -> Finding:
    """Advertised by description; the instructions arrive when the model reads the skill file (a tool result),
    and when the user selects the skill (`/skill:name`, expanded into the user message)."""
    requests = tq.requests(traces["skill"])
    first = request_history(requests[0]) if requests else []
    read = next((i for i, r in enumerate(requests) if any(SKILL_BODY in t for t in tq.request_texts(r))), -1)
    in_prompt = any(SKILL_BODY in p for p in prompts(traces["skill"]))
    advertised = SKILL_DESCRIPTION in first_prompt(traces["skill"])
    selected = request_history(requests[-1])[-1] if requests else ""
    by_command = selected.startswith("user:") and SKILL_BODY in selected
    holds = bool(requests) and not any(SKILL_BODY in t for t in first) and read > 0 and not in_prompt and advertised
    holds = holds and by_command
    return Finding(
        holds,
        f"request 1 advertises the skill by its description: {advertised} and carries its instructions: "
        f"{any(SKILL_BODY in t for t in first)}; they first reach the model in request "
        f"{read + 1 if read >= 0 else None}, after the model read the skill file; /skill:{SKILL_NAME} puts them in "
        f"the user message: {by_command}; in a system prompt: {in_prompt}",
    )


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


def judge_prompt_template(traces: dict[str, Trace]) -> Finding:
    """The template's body, with the argument in place of `$1` (read from the scenario's own file), is what the
    model receives as the user message; without the template the typed text arrives as typed."""
    typed, arrived = _arrived(traces["template"])
    plain_typed, plain_arrived = _arrived(traces["no-template"])
    expected = TEMPLATE_BODY.replace("$1", TEMPLATE_ARG)
    holds = typed == plain_typed and arrived == expected and plain_arrived == plain_typed and arrived != plain_arrived
    return Finding(
        holds,
        f"typed {typed!r}; request #1's user message with the template file: {arrived!r}; without it: "
        f"{plain_arrived!r}",
    )


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


def judge_core_loads_no_configuration(traces: dict[str, Trace]) -> Finding:
    """The AGENTS.md text (the scenario's own file) reaches the session's request, not the core's."""

    def carried(trace: Trace) -> tuple[bool, bool]:
        requests = tq.requests(trace)
        in_prompt = any(CORE_RULE in p for p in prompts(trace))
        in_messages = any(CORE_RULE in t for r in requests for t in tq.request_texts(r))
        return bool(requests) and bool(inputs(trace)), in_prompt or in_messages

    core_ran, core_has = carried(traces["core"])
    app_ran, app_has = carried(traces["app"])
    holds = core_ran and app_ran and not core_has and app_has
    return Finding(
        holds,
        f"the folder's AGENTS.md text in the agent core's request: {core_has} (request observed: {core_ran}); in the "
        f"session's request from the same folder: {app_has} (request observed: {app_ran})",
    )


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


def judge_table_system_prompt(traces: dict[str, Trace]) -> Finding:
    base = first_prompt(traces["base"])
    markers = {
        "AGENTS.md": ("context-files", ROOT_RULE),
        "APPEND_SYSTEM.md": ("append", APPENDED),
        "SYSTEM.md": ("system-md", REPLACEMENT),
        "a before_agent_start handler": ("handler", ADDITION.strip()),
    }
    changed = {}
    for name, (key, marker) in markers.items():
        prompt = first_prompt(traces[key])
        changed[name] = prompt != base and marker in prompt and marker not in base
    # The handler answers for the prompt it was called for (its `at` is 1): the next prompt is built without it.
    handled = prompts(traces["handler"])
    own_prompt_only = len(handled) == 2 and handled[1] == base
    return Finding(
        all(changed.values()) and own_prompt_only,
        f"each source changed the system prompt, carrying its text: {changed}; the handler's change reached only "
        f"its own prompt's request (the next one is the base prompt again): {own_prompt_only}",
    )


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


def judge_request_assembled(traces: dict[str, Trace]) -> Finding:
    a, b = _parts(traces["same-a"]), _parts(traces["same-b"])
    tools, prompt = _parts(traces["more-tools"]), _parts(traces["other-prompt"])
    same = a == b and bool(a[0])
    tool_only = tools[2] != a[2] and tools[:2] == a[:2]
    prompt_only = prompt[0] != a[0] and prompt[1:] == a[1:]
    return Finding(
        same and tool_only and prompt_only,
        f"same parts → same request: {same}; one more tool changed the tools {a[2]} → {tools[2]} and nothing else: "
        f"{tool_only}; another system prompt changed only the system prompt: {prompt_only}",
    )


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


def judge_table_active_branch(traces: dict[str, Trace]) -> Finding:
    trace = traces["pruned"]
    requests, lines = tq.requests(trace), inputs(trace)
    if len(requests) < 2 or len(lines) < 2:
        return Finding(False, f"{len(requests)} requests, {len(lines)} request lines (expected 2 each)")
    sent, branch = request_history(requests[1]), branch_history(lines[1])
    holds = "user:forget this" not in sent and "user:keep this" in sent and "user:forget this" in branch
    return Finding(
        holds,
        f"request 2: the branch holds {branch}; a context handler removed a message, so the model received {sent}",
    )


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


def judge_table_tools(traces: dict[str, Trace]) -> Finding:
    tools = [list(r.get("tools", ())) for r in tq.requests(traces["narrowed"])]
    holds = len(tools) == 2 and tools[0] == ["lookup", "word_count"] and tools[1] == ["word_count"]
    return Finding(holds, f"tools declared per request: {tools} (pi.setActiveTools(['word_count']) after run 1)")


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


def _final_snapshot(trace: Trace) -> dict[str, Any]:
    found = snapshots(trace)
    return found[-1] if found else {}


def judge_entries_id_parent(traces: dict[str, Trace]) -> Finding:
    snap = _final_snapshot(traces["edit"])
    entries = snap.get("entries", [])
    ids = [e.get("id") for e in entries]
    unique = bool(ids) and len(set(ids)) == len(ids)
    known = all("parentId" not in e or e["parentId"] in ids for e in entries)
    roots = [e.get("id") for e in entries if "parentId" not in e]
    answer, edit = _entry(snap, "assistant", A1), _entry(snap, "user", Q2E)
    forks = [e.get("id") for e in entries if e.get("parentId") == answer.get("id")]
    holds = unique and known and len(roots) == 1 and bool(edit) and edit.get("parentId") == answer.get("id")
    holds = holds and len(forks) == 2
    return Finding(
        holds,
        f"{len(entries)} entries, ids unique: {unique}, every parentId names an entry: {known}, roots {roots}; the "
        f"edited question's parent is the first answer: {edit.get('parentId') == answer.get('id')}; the first "
        f"answer has {len(forks)} children",
    )


def judge_active_branch_supplies_history(traces: dict[str, Trace]) -> Finding:
    trace = traces["edit"]
    requests, lines = tq.requests(trace), inputs(trace)
    if len(requests) < 3 or len(lines) < 3:
        return Finding(False, f"{len(requests)} requests, {len(lines)} request lines (expected 3 each)")
    sent, branch = request_history(requests[2]), branch_history(lines[2])
    expected = [f"user:{Q1}", f"assistant:{A1}", f"user:{Q2E}"]
    holds = sent == expected and branch == expected
    return Finding(holds, f"after the edit the active branch holds {branch}; the request carried {sent}")


def judge_branches_survive(traces: dict[str, Trace]) -> Finding:
    snap = _final_snapshot(traces["edit"])
    entries = snap.get("entries", [])
    kept = bool(_entry(snap, "user", Q2)) and bool(_entry(snap, "assistant", A2))
    parents = {e.get("parentId") for e in entries}
    tips = [e.get("id") for e in entries if e.get("id") not in parents]
    on_branch = _entry(snap, "user", Q2).get("id") in snap.get("branch", [])
    holds = kept and len(tips) == 2 and not on_branch
    return Finding(
        holds,
        f"after going back and editing, the session holds {len(entries)} entries and {len(tips)} branch tips; the "
        f"abandoned question and answer are still there: {kept}; on the active branch: {on_branch}",
    )


def judge_walk_versus_branch(traces: dict[str, Trace]) -> Finding:
    snap = _final_snapshot(traces["edit"])
    walk = [e.get("id") for e in snap.get("entries", [])]
    branch = list(snap.get("branch", []))
    edit, old = _entry(snap, "user", Q2E).get("id"), _entry(snap, "user", Q2).get("id")
    if edit not in walk or edit not in branch:
        return Finding(False, f"the edited question is not in the tree snapshot (walk {walk}, branch {branch})")
    earlier_walk, earlier_branch = walk[: walk.index(edit)], branch[: branch.index(edit)]
    holds = old in earlier_walk and old not in earlier_branch and earlier_walk != earlier_branch
    return Finding(
        holds,
        f"entries 'earlier' than the edited question: walking the tree {len(earlier_walk)} (the abandoned question "
        f"among them: {old in earlier_walk}), reading the branch {len(earlier_branch)} (the abandoned question "
        f"among them: {old in earlier_branch})",
    )


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


def _compaction_view(trace: Trace, summary: str) -> dict[str, Any]:
    requests = tq.requests(trace)
    last = request_history(requests[-1]) if requests else []
    before = request_history(requests[3]) if len(requests) > 3 else []
    snap = _final_snapshot(trace)
    compactions = [e for e in snap.get("entries", []) if e.get("type") == "compaction"]
    originals = [e for e in snap.get("entries", []) if e.get("type") == "message" and e.get("role") == "user"]
    return {
        "before": before,
        "last": last,
        "head": last[0] if last else "",
        "compactions": compactions,
        "kept_questions": sum(1 for e in originals if str(e.get("text", "")).startswith("question ")),
        "summary_in_entry": any(e.get("summary") == summary for e in compactions),
    }


def judge_compaction_replaces(traces: dict[str, Trace], params: Params) -> Finding:
    summary = str(params.get("compaction_summary", SUMMARY))
    view = _compaction_view(traces["compact"], summary)
    was_there = any(m.startswith("user:question 0") for m in view["before"])
    replaced = summary in view["head"] and not any(m.startswith("user:question 0") for m in view["last"])
    holds = was_there and replaced and view["summary_in_entry"]
    return Finding(
        holds,
        f"before compacting, a request carried the first question: {was_there}; after it the next request starts "
        f"{view['head'][:70]!r} (the summary: {summary in view['head']}) and carries the first question: "
        f"{any(m.startswith('user:question 0') for m in view['last'])}",
    )


def judge_compaction_entries_stay(traces: dict[str, Trace], params: Params) -> Finding:
    summary = str(params.get("compaction_summary", SUMMARY))
    view = _compaction_view(traces["compact"], summary)
    replaced = summary in view["head"] and not any(m.startswith("user:question 0") for m in view["last"])
    holds = replaced and len(view["compactions"]) == 1 and view["kept_questions"] == 5
    return Finding(
        holds,
        f"after compacting: {len(view['compactions'])} compaction entry, the next request starts from the summary: "
        f"{replaced}; user questions still in the tree: {view['kept_questions']} of 5",
    )


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


def judge_before_agent_start_text(traces: dict[str, Trace]) -> Finding:
    found = prompts(traces["append-once"])
    if len(found) != 2:
        return Finding(False, f"{len(found)} request lines (expected 2)")
    first, second = found
    holds = first == second + ADDITION and ADDITION not in second
    return Finding(
        holds,
        f"request 1's prompt is request 2's plus the handler's text: {first == second + ADDITION}; request 2 is the "
        f"builder's prompt again (no addition): {ADDITION not in second}",
    )


def two_providers(params: Params) -> dict[str, dict[str, Any]]:
    """Chapter 01's program twice, each time with another provider (another faux script) and nothing else changed."""
    first, second = sc.word_count("agent"), sc.word_count("agent")
    first["id"], second["id"] = "ch01-provider-a", "ch01-provider-b"
    second["responses"][1] = sc.text("Vier Wörter.")
    return {"provider-a": first, "provider-b": second}


def judge_provider_is_one_argument(traces: dict[str, Trace]) -> Finding:
    answers, counted = {}, {}
    for name, trace in traces.items():
        ends = tq.assistant_ends(trace)
        answers[name] = ends[-1].get("text") if ends else None
        counted[name] = [line.get("details") for line in tq.events(trace, "tool_execution_end")]
    holds = answers == {"provider-a": "Four words.", "provider-b": "Vier Wörter."}
    holds = holds and counted["provider-a"] == counted["provider-b"] == [{"words": 4}]
    return Finding(
        holds,
        f"provider A answered {answers.get('provider-a')!r}, provider B {answers.get('provider-b')!r}; the same tool "
        f"ran with the same result in both: {counted}",
    )


EXPERIMENTS: dict[str, ScenarioExperiment] = {
    "loop.request-assembled": ScenarioExperiment(assembled, judge_request_assembled),
    "inputs.table-system-prompt": ScenarioExperiment(table_system_prompt, judge_table_system_prompt, "context-files"),
    "inputs.table-active-branch": ScenarioExperiment(active_branch, judge_table_active_branch),
    "inputs.table-tools": ScenarioExperiment(tools_table, judge_table_tools),
    "tree.entries-id-parent": ScenarioExperiment(edited, judge_entries_id_parent),
    "tree.active-branch-supplies-history": ScenarioExperiment(edited, judge_active_branch_supplies_history),
    "tree.branches-survive-edits": ScenarioExperiment(edited, judge_branches_survive),
    "tree.walk-versus-branch": ScenarioExperiment(edited, judge_walk_versus_branch),
    "compaction.replaces-in-later-requests": ScenarioExperiment(compacted, judge_compaction_replaces),
    "compaction.entries-stay": ScenarioExperiment(compacted, judge_compaction_entries_stay),
    "context.base-and-context-files": ScenarioExperiment(ladder, judge_base_and_context_files, "context-files"),
    "context.agents-md-by-directory": ScenarioExperiment(ladder, judge_agents_md_by_directory, "context-files"),
    "context.append-system-additive": ScenarioExperiment(ladder, judge_append_system, "append"),
    "context.system-md-replaces": ScenarioExperiment(ladder, judge_system_md, "system-md"),
    "context.skill-descriptions-always": ScenarioExperiment(skill_on_demand, judge_skill_descriptions),
    "context.skill-instructions-on-demand": ScenarioExperiment(skill_on_demand, judge_skill_on_demand),
    "context.prompt-template-at-input": ScenarioExperiment(prompt_template, judge_prompt_template),
    "packages.core-loads-no-configuration": ScenarioExperiment(core_alone, judge_core_loads_no_configuration),
    "seam.before-agent-start-text-not-builder": ScenarioExperiment(appended_once, judge_before_agent_start_text),
    "example.provider-is-one-argument": ScenarioExperiment(two_providers, judge_provider_is_one_argument),
}
