"""The stand-in's side of pinb's application-layer scenario fields: ``project``, ``steps``, ``model``, ``observe``.

Mirrors the real-Pi runner: the project's files go into an in-memory file set under a home folder whose path is
written ``<home>`` in traces (the runner's temporary folder is written the same way), the trust decision is made as
Pi's ``resolveProjectTrusted`` makes it, ``request`` lines show what each request was built from and ``tree`` lines
the whole session tree. Nothing touches the host's file system.
"""

from __future__ import annotations

import asyncio
import json
import posixpath
from collections.abc import Mapping
from typing import Any

from pinb.ai.transcript import get_current_system_prompt
from pinb.app.extensions.events import ProjectTrustEvent
from pinb.app.resources import CONFIG_DIR_NAME, VirtualFS, Workspace
from pinb.scenario.model import (
    BranchStep,
    CommandStep,
    CompactStep,
    EntryOfType,
    ForkStep,
    LabelStep,
    NavigateStep,
    NewSessionStep,
    Project,
    PromptStep,
    ReloadStep,
    ResumeStep,
    Scenario,
    SetModelStep,
    SetThinkingLevelStep,
    ShutdownStep,
    SnapshotStep,
    Step,
    Target,
)
from pinb.scenario.trace import Labels, TraceWriter, blocks_text, to_pi_json

#: The stand-in's home folder; traces write it as ``<home>``, as the runner writes its temporary folder.
HOME = "/pinb-home"
#: Where the ``<docs>`` section says Pi is installed; the runner writes its package folder the same way.
PI_DIR = "<pi>"
#: Pi 1.6.0's ``TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES`` (under ``<cwd>/.pi``).
TRUST_REQUIRING = ("settings.json", "mcp.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md",
                   "APPEND_SYSTEM.md")  # fmt: skip


def scrub(text: Any) -> Any:
    """Machine paths as traces write them."""
    return text.replace(HOME, "<home>") if isinstance(text, str) else text


def scrub_lines(lines: list[dict[str, Any]]) -> None:
    """Write the home folder as ``<home>`` wherever a line carries it (a skill's location in an expanded /skill
    prompt, say), as the runner writes its temporary folder."""
    for index, line in enumerate(lines):
        text = json.dumps(line, ensure_ascii=False)
        if HOME in text:
            lines[index] = json.loads(text.replace(HOME, "<home>"))


def project_root() -> str:
    return posixpath.join(HOME, "project")


def project_cwd(project: Project | None) -> str:
    root = project_root()
    return posixpath.join(root, project.cwd) if project is not None and project.cwd else root


def workspace(project: Project, trusted: bool) -> Workspace:
    files = {posixpath.join(project_root(), path): text for path, text in project.files.items()}
    agent_dir = posixpath.join(HOME, CONFIG_DIR_NAME, "agent")
    files.update({posixpath.join(agent_dir, path): text for path, text in project.agent_files.items()})
    return Workspace(fs=VirtualFS(files), cwd=project_cwd(project), home=HOME, trusted=trusted)


def has_trust_requiring_resources(fs: VirtualFS, cwd: str) -> bool:
    """Pi's ``hasTrustRequiringProjectResources``: project config resources, or an ``.agents/skills`` above."""
    config = posixpath.join(cwd, CONFIG_DIR_NAME)
    if any(fs.exists(posixpath.join(config, name)) for name in TRUST_REQUIRING):
        return True
    user_skills = posixpath.join(HOME, ".agents", "skills")
    current = cwd
    while True:
        skills = posixpath.join(current, ".agents", "skills")
        if skills != user_skills and fs.exists(skills):
            return True
        parent = posixpath.dirname(current)
        if parent == current:
            return False
        current = parent


async def resolve_trust(project: Project, runner: Any, writer: TraceWriter) -> bool:
    """The trust decision: given, or (``ask``) Pi's ``resolveProjectTrusted`` with no stored decision and no UI."""
    if project.trust != "ask":
        return project.trust == "trusted"
    cwd = project_cwd(project)
    if not has_trust_requiring_resources(workspace(project, False).fs, cwd):
        return True
    outcome = await runner.emit_project_trust(ProjectTrustEvent(cwd=cwd))
    for error in outcome.errors:
        message = f'Extension "{error.extension_path}" project_trust error: {error.error}'
        writer.write("error", "project_trust_error", {"error": message})
    if outcome.result is not None:
        return outcome.result.trusted == "yes"
    return False  # the default "ask", and no UI to ask with


# --- trace lines -----------------------------------------------------------------------------------------------------


def entry_summary(manager: Any, entry: Any, labels: Labels) -> dict[str, Any]:
    """One session entry as ``tree`` and ``request`` lines write it (the runner's ``entrySummary``)."""
    data = to_pi_json(entry)
    kind = data.get("type")
    parent = data.get("parentId")
    fields: dict[str, Any] = {"id": labels.entry(data.get("id")), "parentId": labels.entry(parent), "type": kind}
    message = data.get("message") if isinstance(data.get("message"), Mapping) else {}
    match kind:
        case "message":
            fields["role"] = message.get("role")
            if message.get("role") != "system":
                fields["text"] = blocks_text(message.get("content"))
        case "custom_message":
            fields.update(customType=data.get("customType"), text=blocks_text(data.get("content")))
        case "compaction":
            fields.update(summary=data.get("summary"), firstKeptEntryId=labels.entry(data.get("firstKeptEntryId")))
        case "branch_summary":
            fields["summary"] = data.get("summary")
        case "label":
            fields.update(targetId=labels.entry(data.get("targetId")), label=data.get("label"))
        case "context_edit":
            fields["targetId"] = labels.entry(data.get("targetId"))
        case "thinking_level_change":
            fields["thinkingLevel"] = data.get("thinkingLevel")
        case "model_change":
            fields.update(provider=data.get("provider"), modelId=data.get("modelId"))
        case "custom":
            # An extension's appendEntry: its customType and data (never sent to the model).
            fields.update(customType=data.get("customType"), data=data.get("data"))
    if kind != "label":
        fields["label"] = manager.get_label(data.get("id"))
    return {key: value for key, value in fields.items() if value is not None}


def request_line(writer: TraceWriter, request: Any, session: Any) -> None:
    """A ``request`` line right after a ``model`` line: system prompt, model, thinking level, active branch."""
    manager = getattr(session, "session_manager", None)
    model = request.model
    writer.write(
        "request",
        "inputs",
        lambda labels: {
            "n": request.n,
            "systemPrompt": scrub(get_current_system_prompt(list(request.context.messages))),
            "model": f"{model.provider}/{model.id}",
            "thinkingLevel": request.options.get("reasoning") or "off",
            "branch": [entry_summary(manager, e, labels) for e in manager.get_branch()] if manager else None,
        },
    )


def snapshot_line(writer: TraceWriter, manager: Any) -> None:
    leaf = manager.get_leaf_id()
    writer.write(
        "tree",
        "snapshot",
        lambda labels: {
            "entries": [entry_summary(manager, e, labels) for e in manager.get_entries()],
            "leaf": labels.entry(leaf),
            "branch": [labels.entry(e.id) for e in manager.get_branch()],
        },
    )


# --- steps -----------------------------------------------------------------------------------------------------------


def find_entry(manager: Any, target: Target) -> Any:
    """The entry a step targets: by role and text (the first message entry), or by type and position."""
    if isinstance(target, EntryOfType):
        found = [entry for entry in manager.get_entries() if entry.type == target.type]
        if len(found) < target.nth:
            raise LookupError(f"no {target.type} entry number {target.nth} (the session has {len(found)})")
        return found[target.nth - 1]
    for entry in manager.get_entries():
        if entry.type != "message":
            continue
        data = to_pi_json(entry.message)
        if data.get("role") == target.role and blocks_text(data.get("content")) == target.text:
            return entry
    raise LookupError(f"no {target.role} message entry with text {_js_quote(target.text)}")


def _js_quote(text: str) -> str:
    from pinb.app.js_compat import json_stringify

    return json_stringify(text) or '""'


def step_fields(step: Step) -> dict[str, Any]:
    data = step.to_json_dict()
    keys = ("do", "text", "target", "label", "instructions", "level", "summarize", "replace_instructions", "position",
            "path", "model")  # fmt: skip
    return {key: data.get(key) for key in keys}


def compaction_settings(scenario: Scenario) -> Any:
    """Pi's compaction settings as the scenario sets them (``settings.compaction``; absent fields: Pi's defaults)."""
    from dataclasses import replace

    from pinb.app.session_compaction import DEFAULT_COMPACTION_SETTINGS

    config = scenario.effective_settings.compaction
    given = config.model_dump(exclude_none=True) if config is not None else {}
    return replace(DEFAULT_COMPACTION_SETTINGS, **given)


async def run_step(step: Step, runtime: Any, writer: TraceWriter, scenario: Scenario) -> Any:
    """Do one step on the runtime's current session; the fields of its ``step_resolved`` line."""
    session = runtime.session
    manager = session.session_manager
    match step:
        case PromptStep():
            await session.prompt(step.text)
        case BranchStep():
            manager.branch(find_entry(manager, step.target).id)
        case NavigateStep():
            result = await session.navigate_tree(
                find_entry(manager, step.target).id,
                summarize=bool(step.summarize),
                custom_instructions=step.instructions,
                replace_instructions=step.replace_instructions,
                label=step.label,
            )
            return {"cancelled": result.cancelled, "editorText": result.editor_text, "aborted": result.aborted}
        case LabelStep():
            manager.append_label_change(find_entry(manager, step.target).id, step.label)
        case CompactStep():
            result = await session.compact(step.instructions, settings=compaction_settings(scenario))
            first_kept = result.first_kept_entry_id
            return lambda labels: {"summary": result.summary, "firstKeptEntryId": labels.entry(first_kept)}  # type: ignore[return-value]
        case SetThinkingLevelStep():
            session.set_thinking_level(step.level)
            return {"thinkingLevel": session.agent.state.thinking_level}
        case ReloadStep():
            await session.reload()
        case NewSessionStep():
            return {"cancelled": (await runtime.new_session()).cancelled}
        case ForkStep():
            forked = await runtime.fork(find_entry(manager, step.target).id, step.position or "before")
            return {"cancelled": forked.cancelled, "selectedText": forked.selected_text}
        case ResumeStep():
            path, opened = resumed_session(step, scenario, session)
            return {"cancelled": (await runtime.switch_session(opened, path)).cancelled}
        case SetModelStep() | CommandStep():
            return await run_api_step(step, session)
        case SnapshotStep():
            snapshot_line(writer, manager)
        case ShutdownStep():
            await session.abort()
            if session.extension_runner.has_handlers("session_shutdown"):
                from pinb.app.extensions.events import SessionShutdownEvent

                await session.extension_runner.emit(SessionShutdownEvent(reason="quit"))
    return None


def resumed_session(step: ResumeStep, scenario: Scenario, session: Any) -> tuple[str, Any]:
    """The session file a resume step names, read from the project (Pi's ``SessionManager.open`` with the
    current cwd as ``cwdOverride``), and its path."""
    from pinb.app.session_tree import SessionManager

    path = posixpath.join(project_root(), step.path)
    text = scenario.project.files.get(step.path) if scenario.project is not None else None
    if text is None:
        raise LookupError(f"Session file does not exist: {path}")
    manager = SessionManager.from_jsonl(text, path)
    manager.cwd = session.session_manager.cwd
    manager.header = manager.header.model_copy(update={"cwd": manager.cwd})
    return path, manager


async def run_api_step(step: SetModelStep | CommandStep, session: Any) -> Any:
    """The extension API steps (docs/scenario-format.md "Extension API actions"): a model change, a command."""
    if isinstance(step, CommandStep):
        before = set(session._background)
        await session.prompt(step.text)
        # A run the command started (sendMessage with triggerTurn, sendUserMessage) belongs to the step: like the
        # runner's setImmediate, let the work it started go on, then wait until the session is idle again.
        started = [task for task in session._background if task not in before]
        if started:
            await asyncio.gather(*started, return_exceptions=True)
        await session.wait_for_idle()
        return None
    model = session.find_model("faux", step.model)
    if model is None:
        raise LookupError(f"no model faux/{step.model}")
    await session.set_model(model)
    state = session.agent.state
    return {"model": f"{state.model.provider}/{state.model.id}", "thinkingLevel": state.thinking_level}


async def drive_steps(scenario: Scenario, runtime: Any, writer: TraceWriter) -> bool:
    """Run the scenario's steps after its prompts, each on the runtime's current session (a ``new_session``,
    ``fork`` or ``resume`` step replaces it); True when the last one shut the session down."""
    from pinb.scenario.standin import error_text

    shut_down = False
    for step in scenario.steps:
        await runtime.session.wait_for_idle()
        writer.write("driver", "step", step_fields(step))
        try:
            fields = await run_step(step, runtime, writer, scenario)
        except Exception as exc:
            writer.write("driver", "step_rejected", {"error": scrub(error_text(exc))})
        else:
            writer.write("driver", "step_resolved", fields)
        shut_down = shut_down or isinstance(step, ShutdownStep)
    return shut_down
