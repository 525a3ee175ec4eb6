"""Automatic retry of transient provider errors, as Pi 1.6.0's session does it (settings.retry)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from app_harness import make_session

from pinb.ai import AssistantMessage
from pinb.ai.faux import faux_assistant_message
from pinb.app.settlement import RetrySettings, is_context_overflow, is_retryable_error, retry_delay_ms

FAST = RetrySettings(base_delay_ms=1)


def failure(text: str) -> AssistantMessage:
    return faux_assistant_message([], stop_reason="error", error_message=text)


def lines(session: Any) -> list[str]:
    out: list[str] = []

    def listen(event: Any) -> None:
        if event.type == "auto_retry_start":
            out.append(f"retry_start {event.attempt}/{event.max_attempts} {event.delay_ms} {event.error_message}")
        elif event.type == "auto_retry_end":
            out.append(f"retry_end {event.success} {event.attempt} {event.final_error}")
        elif event.type == "agent_end":
            out.append(f"agent_end will_retry={event.will_retry}")
        elif event.type == "entry_appended":
            out.append(f"entry_appended {event.entry.type}")
        elif event.type in ("agent_start", "agent_settled"):
            out.append(event.type)

    session.subscribe(listen)
    return out


@pytest.mark.parametrize(
    ("text", "retryable"),
    [
        ("503 Service Unavailable", True),
        ("overloaded_error", True),
        ("Rate limit exceeded", True),
        ("read ECONNRESET", True),
        ("request 15032 failed", False),
        ("insufficient_quota: billing", False),
        ("prompt is too long: 210000 tokens", False),
        ("No more faux responses queued", False),
    ],
)
def test_classifier_follows_pi(text: str, retryable: bool) -> None:
    assert is_retryable_error(failure(text)) is retryable


def test_overflow_is_not_retried_and_delays_double_up_to_the_cap() -> None:
    assert is_context_overflow(failure("prompt is too long"))
    assert [retry_delay_ms(RetrySettings(), n) for n in (1, 2, 3, 7)] == [2000, 4000, 8000, 60000]


async def test_transient_errors_are_retried_until_a_response_succeeds() -> None:
    session, faux = await make_session(
        [failure("503 overloaded"), failure("rate limit"), faux_assistant_message("OK.")]
    )
    session.retry_settings = FAST
    seen = lines(session)
    await session.prompt("Go.")
    assert seen == [
        "agent_start",
        "agent_end will_retry=True",
        "retry_start 1/3 1 503 overloaded",
        "entry_appended context_edit",
        "agent_start",
        "agent_end will_retry=True",
        "retry_start 2/3 2 rate limit",
        "entry_appended context_edit",
        "agent_start",
        "retry_end True 2 None",
        "agent_end will_retry=False",
        "agent_settled",
    ]
    assert [m.role for m in session.messages] == ["system", "user", "assistant"]
    assert all([m.role for m in r.context.messages] == ["system", "user"] for r in faux.requests)


async def test_retries_run_out_and_the_final_error_is_announced() -> None:
    session, faux = await make_session([failure("overloaded")] * 4)
    session.retry_settings = FAST
    seen = lines(session)
    await session.prompt("Go.")
    assert len(faux.requests) == 4
    assert seen[-3:] == ["agent_end will_retry=False", "retry_end False 3 overloaded", "agent_settled"]


async def test_abort_during_the_backoff_cancels_the_retry() -> None:
    session, faux = await make_session([failure("overloaded"), faux_assistant_message("never")])
    session.retry_settings = RetrySettings(base_delay_ms=5000)
    seen = lines(session)

    def on_event(event: Any) -> None:
        if event.type == "auto_retry_start":
            asyncio.get_running_loop().call_later(0.01, session.abort)

    session.subscribe(on_event)
    await session.prompt("Go.")
    assert seen[-2:] == ["retry_end False 1 Retry cancelled", "agent_settled"]
    assert len(faux.requests) == 1


async def test_retry_can_be_turned_off() -> None:
    session, faux = await make_session([failure("overloaded"), faux_assistant_message("never")])
    session.retry_settings = RetrySettings(enabled=False)
    await session.prompt("Go.")
    assert len(faux.requests) == 1 and session.messages[-1].error_message == "overloaded"
