"""Chapter 16's review guard (examples/review_guard.py) on a real session: no UI, UI allowing, UI denying."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from app_harness import Recorder, bash_tool, make_session, traced_factory

from pinb.ai import message_text
from pinb.ai.faux import faux_assistant_message, faux_tool_call
from pinb.app.extensions import ExtensionAPI
from pinb.app.ui import ScriptedUI
from pinb.chapters.ch16.guard import pattern_sources

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from review_guard import CONFIRM_TITLE, DENIED_REASON, js_slice, review_guard

BOOK_PATTERNS = tuple(pattern_sources())
PUSH = BOOK_PATTERNS[0]


def script(command: str, tool: str = "bash") -> list[Any]:
    return [
        faux_assistant_message(faux_tool_call(tool, {"command": command}), stop_reason="toolUse"),
        faux_assistant_message("Done."),
    ]


async def run(command: str, ui: ScriptedUI | None = None, tool: str = "bash") -> tuple[Any, Recorder, list[str]]:
    recorder = Recorder()
    calls: list[str] = []
    tools = [bash_tool(calls=calls)]
    if tool != "bash":
        from pinb.agent import AgentTool, text_result

        schema = {"type": "object", "properties": {"command": {"type": "string"}}}
        tools.append(AgentTool(name=tool, parameters=schema, execute=lambda *a: text_result("ran", {})))

    def observe_prompts(pi: ExtensionAPI) -> None:
        pi.on("ui_prompt_start", lambda e, c: recorder.lines.append(f"ui_prompt_start {e.kind} {e.title}"))
        pi.on("ui_prompt_end", lambda e, c: recorder.lines.append(f"ui_prompt_end {e.kind} {e.title}"))

    session, faux = await make_session(
        script(command, tool),
        ("review-guard", traced_factory(review_guard, recorder, "guard")),
        ("observer", observe_prompts),
        tools=tools,
        ui=ui,
    )
    session.subscribe(recorder.session)
    await session.prompt("Push my branch.")
    await session.extension_runner.drain_prompt_events()
    faux.assert_complete()
    return session, recorder, calls


def tool_result_text(session: Any) -> str:
    return next(message_text(m) for m in session.messages if m.role == "toolResult")


async def test_without_ui_the_guard_blocks_with_the_pattern_source() -> None:
    session, recorder, calls = await run("git push --force origin main")
    assert calls == []
    assert tool_result_text(session) == f"Guard blocked: {PUSH}"
    assert recorder.lines == [
        "session agent_start",
        "session turn_start",
        "session message_start:system",
        "session message_end:system",
        "session message_start:user:Push my branch.",
        "session message_end:user:Push my branch.",
        "session message_start:assistant:pending",
        "session message_end:assistant:toolUse",
        "session tool_execution_start:bash",
        "ext guard tool_call",
        "session tool_execution_end:bash",
        f"session message_start:toolResult:Guard blocked: {PUSH}",
        f"session message_end:toolResult:Guard blocked: {PUSH}",
        "session turn_end",
        "session turn_start",
        "session message_start:assistant:pending",
        "session message_end:assistant:stop",
        "session turn_end",
        "session agent_end:['system', 'user', 'assistant', 'toolResult', 'assistant']",
        "session agent_settled:False",
    ]
    end = next(m for m in session.messages if m.role == "toolResult")
    assert end.is_error is True
    assert session.extension_errors == []


async def test_with_ui_the_user_allows_and_the_command_runs() -> None:
    ui = ScriptedUI(confirm=True)
    session, recorder, calls = await run("git push --force origin main", ui)
    assert calls == ["git push --force origin main"]
    assert tool_result_text(session) == "(no output)"
    [call] = ui.calls
    raw = '{"command":"git push --force origin main"}'
    assert (call.kind, call.title, call.message) == ("confirm", CONFIRM_TITLE, raw)
    start = recorder.lines.index("session tool_execution_start:bash")
    assert recorder.lines[start : start + 5] == [
        "session tool_execution_start:bash",
        f"ui_prompt_start confirm {CONFIRM_TITLE}",
        f"ui_prompt_end confirm {CONFIRM_TITLE}",
        "ext guard tool_call",
        "session tool_execution_end:bash",
    ]


async def test_with_ui_the_user_denies_and_the_guard_blocks() -> None:
    ui = ScriptedUI(confirm=False)
    session, _, calls = await run("git reset --hard HEAD~3", ui)
    assert calls == []
    assert tool_result_text(session) == DENIED_REASON


async def test_tab_between_git_and_push_is_not_matched_as_in_javascript() -> None:
    _session, _, calls = await run("git\tpush --force")
    assert calls == ["git\tpush --force"]


async def test_only_bash_and_powershell_are_inspected() -> None:
    session, _, _calls = await run("git push --force", tool="write_script")
    assert message_text(next(m for m in session.messages if m.role == "toolResult")) == "ran"


async def test_powershell_is_inspected() -> None:
    session, _, _ = await run("git clean -fdx", tool="powershell")
    assert tool_result_text(session) == f"Guard blocked: {BOOK_PATTERNS[2]}"


async def test_dialog_text_is_the_first_200_utf16_units_of_the_json() -> None:
    command = "git push --force " + "é😀" * 150
    ui = ScriptedUI(confirm=False)
    await run(command, ui)
    raw = '{"command":"' + command + '"}'
    assert ui.calls[0].message == js_slice(raw, 0, 200)
    assert len(ui.calls[0].message.encode("utf-16-le", "surrogatepass")) == 400


@pytest.mark.parametrize("command", ["git push origin main", "echo hello"])
async def test_harmless_commands_run_without_a_dialog(command: str) -> None:
    ui = ScriptedUI(confirm=False)
    _session, _, calls = await run(command, ui)
    assert calls == [command] and ui.calls == []
