"""Recovery after agent_end on the stand-in's session: which continuations Pi starts on its own, and when it does
nothing (the recorded real-Pi evidence is the scenarios/app-recovery-* and app-retry-* corpus)."""

from __future__ import annotations

from pinb.ai import FauxProvider, faux_assistant_message
from pinb.app.session import create_agent_session
from pinb.app.session_compaction import CompactionSettings
from pinb.app.settlement import RetrySettings

OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"


async def _session(responses: list[object], **options: object) -> tuple[object, FauxProvider]:
    faux = FauxProvider()
    faux.set_responses(responses)
    session = await create_agent_session(stream_fn=faux.stream, model=faux.get_model(), **options)
    return session, faux


async def test_a_retry_and_an_overflow_recovery_are_recorded_as_continuations() -> None:
    session, _ = await _session(
        [
            faux_assistant_message([], stop_reason="error", error_message="503 overloaded"),
            faux_assistant_message("One."),
            faux_assistant_message([], stop_reason="error", error_message=OVERFLOW),
            faux_assistant_message("History."),
            faux_assistant_message("Prefix."),
            faux_assistant_message("Two."),
        ],
        retry=RetrySettings(base_delay_ms=1),
        compaction=CompactionSettings(keep_recent_tokens=1),
    )
    await session.prompt("First.")
    await session.prompt("Second.")
    assert [(c.boundary, c.settlement) for c in session.continuations] == [("retry", 1), ("recovery", 2)]
    assert session.messages[-1].stop_reason == "stop"


async def test_with_compaction_disabled_an_overflow_stays_in_context() -> None:
    session, faux = await _session(
        [faux_assistant_message([], stop_reason="error", error_message=OVERFLOW), faux_assistant_message("Done.")],
        compaction=CompactionSettings(enabled=False),
    )
    await session.prompt("First.")
    await session.prompt("Second.")
    assert [m.role for m in faux.requests[1].context.messages] == ["system", "user", "assistant", "user"]
    assert session.continuations == []
