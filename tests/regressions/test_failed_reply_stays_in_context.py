"""After a reply cut off by the length limit or failing with a context overflow, the stand-in went straight to
settlement and sent the failed reply with every later request. Pi 1.6.0 hides it with a ``context_edit`` entry
(and compacts and retries when it can); the recorded traces are ``scenarios/app-recovery-*``."""

from __future__ import annotations

import pytest

from pinb.ai import FauxProvider, faux_assistant_message
from pinb.app.session import create_agent_session

OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"


def _reply(stop_reason: str) -> object:
    if stop_reason == "length":
        return faux_assistant_message("Once upon a ti", stop_reason="length")
    return faux_assistant_message([], stop_reason="error", error_message=OVERFLOW)


@pytest.mark.parametrize("stop_reason", ["length", "error"])
async def test_the_failed_reply_is_hidden_from_the_next_request(stop_reason: str) -> None:
    faux = FauxProvider()
    faux.set_responses([_reply(stop_reason), faux_assistant_message("Done.")])
    session = await create_agent_session(stream_fn=faux.stream, model=faux.get_model())
    seen: list[str] = []
    session.subscribe(lambda event: seen.append(getattr(getattr(event, "entry", None), "type", "") or event.type))
    await session.prompt("Tell me everything.")
    await session.prompt("Go on.")
    roles = [getattr(m, "role", None) for m in faux.requests[1].context.messages]
    assert roles == ["system", "user", "user"]
    assert "context_edit" in seen
    assert "compaction_start" not in seen  # nothing to compact in a one-turn session
