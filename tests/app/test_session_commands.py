"""/compact with session_before_compact and !command with user_bash, on a session."""

from __future__ import annotations

from typing import Any

import pytest
from app_harness import Recorder, make_session, traced

from pinb.ai import message_text
from pinb.ai.faux import faux_assistant_message
from pinb.app.extensions import ExtensionAPI
from pinb.app.session_compaction import CompactionSettings
from pinb.errors import UsageError

SMALL = CompactionSettings(keep_recent_tokens=1)


async def chatted(*extensions: tuple[str, Any]) -> Any:
    responses = [faux_assistant_message(f"answer {n} " + "word " * 50) for n in range(3)]
    session, _ = await make_session(responses, *extensions)
    for n in range(3):
        await session.prompt(f"question {n} " + "word " * 50)
    return session


async def test_a_handler_can_cancel_compaction() -> None:
    recorder = Recorder()

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", traced(recorder, "cancel", lambda e, c: {"cancel": True}))
        pi.on("session_compact_failed", traced(recorder, "failed", lambda e, c: None))

    session = await chatted(("x", ext))
    session.subscribe(lambda e: recorder.lines.append(e.type) if e.type.startswith("compaction") else None)
    with pytest.raises(UsageError, match="Compaction cancelled"):
        await session.compact(settings=SMALL)
    assert recorder.lines == [
        "compaction_start",
        "ext cancel session_before_compact",
        "compaction_end",
        "ext failed session_compact_failed",
    ]
    assert not any(e.type == "compaction" for e in session.session_manager.get_entries())


async def test_a_handler_can_supply_the_summary() -> None:
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        def supply(event: Any, ctx: Any) -> Any:
            prep = event.preparation
            return {
                "compaction": {
                    "summary": "We talked.",
                    "firstKeptEntryId": prep.first_kept_entry_id,
                    "tokensBefore": prep.tokens_before,
                }
            }

        pi.on("session_before_compact", supply)
        pi.on("session_compact", lambda e, c: seen.append((e.from_extension, e.compaction_entry.summary)))

    session = await chatted(("x", ext))
    result = await session.compact(settings=SMALL)
    assert result.summary == "We talked." and seen == [(True, "We talked.")]
    assert session.messages[0].role == "system"
    assert session.messages[1].role == "compactionSummary"


async def test_without_a_handler_the_sessions_model_writes_the_summaries() -> None:
    responses = [faux_assistant_message(f"answer {n}") for n in range(2)]
    session, faux = await make_session(responses)
    for n in range(2):
        await session.prompt(f"question {n}")
    faux.append_responses([faux_assistant_message("History."), faux_assistant_message("Prefix.")])
    result = await session.compact("Keep the numbers.", settings=SMALL)
    assert result.summary == "History.\n\n---\n\n**Turn Context (split turn):**\n\nPrefix."
    history, prefix = (message_text(r.context.messages[-1]) for r in faux.requests[2:])
    assert history.startswith("<conversation>\n[User]: question 0\n\n[Assistant]: answer 0\n</conversation>")
    assert history.endswith("Additional focus: Keep the numbers.")
    assert prefix.startswith("# Conversation\n[User]: question 1\n\n# Instructions\n")


async def test_a_summarize_callback_answers_instead_of_the_model() -> None:
    session = await chatted()
    result = await session.compact(summarize=lambda prep, extra: ("Summary.", "Prefix."), settings=SMALL)
    assert result.summary.startswith("Summary.\n\n---\n\n**Turn Context (split turn):**\n\nPrefix.")
    with pytest.raises(UsageError, match="Already compacted"):
        await session.compact(summarize=lambda prep, extra: "again", settings=SMALL)


async def test_prompting_while_compacting_is_refused_with_pis_message() -> None:
    session = await chatted()
    errors: list[str] = []

    async def summarize(prep: Any, extra: Any) -> str:
        try:
            await session.prompt("hi")
        except UsageError as error:
            errors.append(str(error))
        return "S", "P"

    await session.compact(summarize=summarize, settings=SMALL)
    assert errors == [
        "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."
    ]


async def test_user_bash_handler_result_is_recorded_and_nothing_runs() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "user_bash",
            lambda e, c: {
                "result": {"output": f"pretend {e.command}", "exitCode": 0, "cancelled": False, "truncated": False}
            },
        )

    session, faux = await make_session([faux_assistant_message("ok")], ("x", ext))
    result = await session.execute_user_bash("rm -rf /")
    assert result.output == "pretend rm -rf /"
    await session.prompt("what happened?")
    user_texts = [message_text(m) for m in faux.requests[0].context.messages if m.role == "user"]
    assert user_texts[0].startswith("Ran `rm -rf /`")


async def test_user_bash_operations_exec_is_called_instead_of_the_host() -> None:
    calls: list[tuple[str, str]] = []

    class Ops:
        def exec(self, command: str, cwd: str, on_data: Any) -> dict[str, int]:
            calls.append((command, cwd))
            on_data("out")
            return {"exitCode": 3}

    def ext(pi: ExtensionAPI) -> None:
        pi.on("user_bash", lambda e, c: {"operations": Ops()})

    session, _ = await make_session([], ("x", ext))
    result = await session.execute_user_bash("make", exclude_from_context=True)
    assert calls == [("make", "/project")] and (result.output, result.exit_code) == ("out", 3)
    assert session.messages[-1].exclude_from_context is True


async def test_user_bash_invalid_result_is_reported_and_raised() -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("user_bash", lambda e, c: {"result": {"output": "x"}, "operations": object()})

    session, _ = await make_session([], ("x", ext))
    with pytest.raises(Exception, match="Invalid user_bash handler result"):
        await session.execute_user_bash("ls")
    assert [e.event for e in session.extension_errors] == ["user_bash"]


async def test_user_bash_without_handlers_never_touches_the_host(tmp_path: Any) -> None:
    sentinel = tmp_path / "sentinel"
    session, _ = await make_session([])
    result = await session.execute_user_bash(f"touch {sentinel}")
    assert not sentinel.exists()
    assert (result.output, result.exit_code) == ("", 0)
    simulated = await session.execute_user_bash("echo hi", run=lambda command, cwd: "hi\n")
    assert simulated.output == "hi\n"


async def test_skill_command_expands_to_the_skill_block() -> None:
    from pinb.app.resources import VirtualFS, Workspace

    skill = "---\nname: deploy\ndescription: Deploy the app.\n---\n\n# Deploy\nRun make deploy.\n"
    workspace = Workspace(VirtualFS({"/project/.pi/skills/deploy/SKILL.md": skill}))
    session, faux = await make_session([faux_assistant_message("ok")], workspace=workspace)
    await session.prompt("/skill:deploy to staging")
    sent = message_text(faux.requests[0].context.messages[-1])
    assert sent == (
        '<skill name="deploy" location="/project/.pi/skills/deploy/SKILL.md">\n'
        "References are relative to /project/.pi/skills/deploy.\n\n# Deploy\nRun make deploy.\n</skill>\n\nto staging"
    )
    assert "<skills>" in session.system_prompt


async def test_unknown_skill_passes_through() -> None:
    session, faux = await make_session([faux_assistant_message("ok")])
    await session.prompt("/skill:nope")
    assert message_text(faux.requests[0].context.messages[-1]) == "/skill:nope"


async def test_the_event_carries_a_live_signal_and_abort_compaction_cancels() -> None:
    from pinb.ai import AbortSignal

    seen: list[Any] = []
    session: Any = None

    def ext(pi: ExtensionAPI) -> None:
        def supply(event: Any, ctx: Any) -> Any:
            seen.append((isinstance(event.signal, AbortSignal), event.signal.aborted, event.reason, event.will_retry))
            session.abort_compaction()  # Pi's abortCompaction() while the handler runs
            prep = event.preparation
            return {"compaction": {"summary": "late", "firstKeptEntryId": prep.first_kept_entry_id, "tokensBefore": 1}}

        pi.on("session_before_compact", supply)
        pi.on("session_compact_failed", lambda e, c: seen.append((e.aborted, e.from_extension, e.error_message)))

    session = await chatted(("x", ext))
    with pytest.raises(UsageError, match="Compaction cancelled"):
        await session.compact(settings=SMALL)
    # As Pi 1.6.0: the supplied compaction is dropped once the signal aborted; the failure says fromExtension.
    assert seen == [(True, False, "manual", False), (True, True, None)]
    assert not any(e.type == "compaction" for e in session.session_manager.get_entries())
    session.abort_compaction()  # no compaction in progress: nothing to abort
