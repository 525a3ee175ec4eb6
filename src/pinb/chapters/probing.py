"""What the chapters' stand-in probes share: a scripted faux provider and a session built on it."""

from __future__ import annotations

from typing import Any

Shown = dict[str, Any]


def faux(*responses: Any) -> Any:
    from pinb.ai.faux import FauxProvider

    provider = FauxProvider()
    provider.set_responses(list(responses))
    return provider


async def session_with(provider: Any, extensions: list[Any] | None = None, tools: list[Any] | None = None) -> Any:
    from pinb.app.session import create_agent_session

    return await create_agent_session(stream_fn=provider.stream, extensions=extensions or [], tools=tools or [])
