"""The faux provider: Pi's event order, deterministic chunking, usage estimate, script errors, factories."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pinb.ai import (
    AbortController,
    Context,
    FauxProvider,
    MessageView,
    SystemMessage,
    Tool,
    ToolResultMessage,
    UserMessage,
    create_initial_system_message,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from pinb.errors import FauxScriptError, PinbError


async def collect(faux: FauxProvider, messages: list[Any], **options: Any) -> tuple[list[Any], Any]:
    stream = faux.stream(faux.get_model(), Context(messages=MessageView(messages)), options)
    events = [event async for event in stream]
    return events, await stream.result()


def chapter_context() -> list[Any]:
    tool = Tool(
        name="word_count",
        description="Count",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    )
    return [
        create_initial_system_message("You count words.", [tool]),
        UserMessage(content="How many words in 'the quick brown fox'? é😀", timestamp=1),
    ]


async def test_event_order_deltas_and_usage_match_pi() -> None:
    """Recorded on pi-ai 1.6.0 with tokenSize {min: 2, max: 2}: same event types, same deltas, same usage."""
    faux = FauxProvider(token_size=2)
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_thinking("let me think about it"),
                    faux_text("Hello there, general Kenobi"),
                    faux_tool_call("word_count", {"text": "the quick brown fox"}, id="a"),
                ],
                stop_reason="toolUse",
            )
        ]
    )
    events, final = await collect(faux, chapter_context())
    assert [(e.type, getattr(e, "delta", None)) for e in events] == [
        ("start", None),
        ("thinking_start", None),
        ("thinking_delta", "let me t"),
        ("thinking_delta", "hink abo"),
        ("thinking_delta", "ut it"),
        ("thinking_end", None),
        ("text_start", None),
        ("text_delta", "Hello th"),
        ("text_delta", "ere, gen"),
        ("text_delta", "eral Ken"),
        ("text_delta", "obi"),
        ("text_end", None),
        ("toolcall_start", None),
        ("toolcall_delta", '{"text":'),
        ("toolcall_delta", '"the qui'),
        ("toolcall_delta", "ck brown"),
        ("toolcall_delta", ' fox"}'),
        ("toolcall_end", None),
        ("done", None),
    ]
    assert final.usage.model_dump() == {
        "input": 49,
        "output": 23,
        "cache_read": 0,
        "cache_write": 0,
        "total_tokens": 72,
        "cost": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "total": 0},
    }
    # Partials grow: the tool call's arguments are parsed as they stream.
    args = [e.partial.content[2].arguments for e in events if e.type == "toolcall_delta"]
    assert args == [{}, {"text": "the qui"}, {"text": "the quick brown"}, {"text": "the quick brown fox"}]
    assert events[0].partial.stop_reason == "pending" and events[0].partial.content == ()
    assert final.stop_reason == "toolUse" and final.api == "faux" and final.model == "faux-1"


async def test_chunking_is_deterministic_for_a_seed() -> None:
    async def deltas(seed: int) -> list[str]:
        faux = FauxProvider(seed=seed)
        faux.set_responses([faux_assistant_message("a long answer with many many words in it, streamed in chunks")])
        events, _ = await collect(faux, [UserMessage(content="x")])
        return [e.delta for e in events if e.type == "text_delta"]

    first = await deltas(0)
    assert first == await deltas(0)
    assert all(12 <= len(d) <= 20 for d in first[:-1])  # 3..5 tokens of 4 characters
    assert "".join(first) == "a long answer with many many words in it, streamed in chunks"


async def test_usage_is_incremental_and_equals_a_fresh_measurement() -> None:
    faux = FauxProvider()
    fresh = FauxProvider()
    transcript: list[Any] = [UserMessage(content="start", timestamp=0)]
    for i in range(20):
        faux.set_responses([faux_assistant_message(f"answer {i}")])
        fresh.set_responses([faux_assistant_message(f"answer {i}")])
        _, grown = await collect(faux, transcript)  # views over the same growing list: incremental
        _, scratch = await collect(fresh, list(transcript))  # a new list each time: measured from scratch
        assert grown.usage == scratch.usage
        transcript.append(grown)
        transcript.append(ToolResultMessage(tool_call_id=f"c{i}", tool_name="t", timestamp=0))
    assert faux._meter.lengths is not None and len(faux._meter.lengths) == len(transcript) - 2


async def test_usage_of_a_plain_list_that_grows_or_is_rewritten_equals_a_fresh_measurement() -> None:
    async def usage(faux: FauxProvider, messages: Any, answer: str) -> Any:
        faux.set_responses([faux_assistant_message(answer)])
        stream = faux.stream(faux.get_model(), Context(messages=messages), {"session_id": "s"})
        return await stream.result()

    faux = FauxProvider()
    transcript: list[Any] = [UserMessage(content="start \ud800", timestamp=0)]
    previous: Any = None
    texts: list[str] = []
    for i in range(12):
        if i == 8:  # a rewrite: no longer an extension of the last request, though longer
            transcript = [UserMessage(content="rewritten", timestamp=0), *transcript[1:]]
        if i == 10:  # and one that is shorter (as compaction makes)
            transcript = [UserMessage(content="summary", timestamp=0), *transcript[-3:]]
        reply = await usage(faux, list(transcript), f"answer {i}")  # a new list each request
        fresh = FauxProvider()
        if previous is not None:
            await usage(fresh, previous, "warm the session cache")
        scratch = MessageView(list(transcript))  # a view over a new list: measured from scratch
        assert reply.usage == (await usage(fresh, scratch, f"answer {i}")).usage
        if 0 < i < 8:
            assert faux._meter.texts is texts  # extended in place: only the new messages were measured
        texts = faux._meter.texts
        previous = list(transcript)
        transcript += [reply, ToolResultMessage(tool_call_id=f"c{i}", tool_name="t", timestamp=0)]


async def test_session_cache_reads_the_previous_prompt() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("one"), faux_assistant_message("two")])
    transcript: list[Any] = [UserMessage(content="x" * 40, timestamp=0)]
    _, first = await collect(faux, transcript, session_id="s")
    transcript += [first, UserMessage(content="y" * 40, timestamp=0)]
    _, second = await collect(faux, transcript, session_id="s")
    assert (first.usage.input, first.usage.cache_read, first.usage.cache_write) == (0, 0, 12)
    assert second.usage.cache_read == 12 and second.usage.input == 0
    assert second.usage.cache_read + second.usage.cache_write == 27


async def test_script_running_dry_and_assert_complete() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("only")])
    with pytest.raises(FauxScriptError, match="never requested"):
        faux.assert_complete()
    await collect(faux, [UserMessage(content="a")])
    faux.assert_complete()
    events, final = await collect(faux, [UserMessage(content="b")])
    assert [e.type for e in events] == ["error"]
    assert (final.stop_reason, final.error_message, final.content) == ("error", "No more faux responses queued", ())
    assert faux.requests[-1].exhausted and faux.exhausted_requests == 1
    with pytest.raises(FauxScriptError, match="after the script ran out"):
        faux.assert_complete()
    faux.assert_complete(allow_exhausted=True)


async def test_factories_see_the_request() -> None:
    seen: list[Any] = []

    def echo(context: Any, options: Any, state: Any, model: Any) -> Any:
        seen.append((len(context.messages), options.get("session_id"), state.call_count, model.id))
        return faux_assistant_message(f"you said {context.messages[-1].content}")

    async def short(context: Any) -> str:
        await asyncio.sleep(0)
        return "a plain string becomes a text answer"

    faux = FauxProvider()
    faux.set_responses([echo, short])
    _, first = await collect(faux, [UserMessage(content="hi")], session_id="s1")
    _, second = await collect(faux, [UserMessage(content="hi")])
    assert seen == [(1, "s1", 1, "faux-1")]
    assert first.content[0].text == "you said hi"
    assert second.content[0].text == "a plain string becomes a text answer"


async def test_a_failing_factory_is_an_error_message() -> None:
    def broken(context: Any) -> Any:
        raise RuntimeError("factory broke")

    faux = FauxProvider()
    faux.set_responses([broken, lambda context: 42])
    _, first = await collect(faux, [UserMessage(content="x")])
    _, second = await collect(faux, [UserMessage(content="x")])
    assert (first.stop_reason, first.error_message) == ("error", "factory broke")
    assert second.error_message == "a faux response factory returned int, not an AssistantMessage"


def test_malformed_scripts_raise_at_once() -> None:
    faux = FauxProvider()
    with pytest.raises(FauxScriptError, match=r"#2 is a int"):
        faux.set_responses([faux_assistant_message("ok"), 3])
    with pytest.raises(FauxScriptError, match="not an assistant message"):
        faux.set_responses([{"content": [{"type": "nope"}]}])
    with pytest.raises(FauxScriptError, match="pending"):
        faux.append_responses([faux_assistant_message("x", stop_reason="pending")])
    assert issubclass(FauxScriptError, PinbError)
    faux.set_responses([{"content": [{"type": "text", "text": "from JSON"}], "stopReason": "stop"}])
    assert faux.pending_response_count == 1


async def test_error_and_aborted_stop_reasons_end_with_an_error_event() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("x", stop_reason="error", error_message="bad")])
    events, final = await collect(faux, [UserMessage(content="x")])
    assert [e.type for e in events][-1] == "error" and events[-1].reason == "error"
    assert final.error_message == "bad"


async def _abort_at_first_delta(faux: FauxProvider, controller: AbortController) -> tuple[list[str], Any]:
    stream = faux.stream(faux.get_model(), Context(messages=[UserMessage(content="x")]), {"signal": controller.signal})
    kinds = []
    async for event in stream:
        kinds.append(event.type)
        if event.type == "text_delta":
            controller.abort()
    return kinds, await stream.result()


async def test_a_reply_without_delays_is_streamed_ahead_of_its_consumer() -> None:
    """pi-ai 1.6.0's faux provider pushes its events from its own async function, each chunk waiting one microtask:
    a consumer that aborts at the first delta of a short reply still receives all of it. Observed on Pi 1.6.0 with
    ``fauxProvider({tokenSize: {min: 1, max: 1}})`` and this reply, aborting at the first ``text_delta``:
    ``start, text_start, text_delta ×4, text_end, done``."""
    faux = FauxProvider(token_size=1)
    faux.set_responses([faux_assistant_message("abcdefghijklmnop")])
    controller = AbortController()
    kinds, final = await _abort_at_first_delta(faux, controller)
    assert kinds == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_delta", "text_end", "done"]
    assert (final.stop_reason, final.content[0].text) == ("stop", "abcdefghijklmnop")


async def test_abort_mid_stream_and_before_the_request() -> None:
    faux = FauxProvider(token_size=1, tokens_per_second=1000)
    faux.set_responses([faux_assistant_message("abcdefghijklmnop"), faux_assistant_message("unused")])
    controller = AbortController()
    kinds, final = await _abort_at_first_delta(faux, controller)
    assert kinds == ["start", "text_start", "text_delta", "error"]
    assert (final.stop_reason, final.error_message, final.content[0].text) == ("aborted", "Request was aborted", "abcd")
    # An already-aborted request is refused like Models.streamSimple does: the script is not touched.
    refused = faux.stream(faux.get_model(), Context(messages=[]), {"signal": controller.signal})
    assert [e.type async for e in refused] == ["error"]
    result = await refused.result()
    assert (result.stop_reason, result.error_message) == ("aborted", "This operation was aborted")
    assert faux.pending_response_count == 1 and len(faux.requests) == 1


async def test_on_request_sees_each_request_before_its_reply() -> None:
    order: list[str] = []
    faux = FauxProvider(on_request=lambda request: order.append(f"request {request.n}"))
    faux.set_responses([faux_assistant_message("a")])
    stream = faux.stream(faux.get_model(), Context(messages=[SystemMessage(content="s")]), {})
    order.append("returned")
    async for event in stream:
        order.append(event.type)
    assert order[:3] == ["request 1", "returned", "start"]


async def test_session_cache_on_a_diverging_history_matches_pi() -> None:
    """Recorded on pi-ai 1.6.0 (Models.streamSimple, sessionId "s"): [input, output, cacheRead, cacheWrite, total]."""
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message(t) for t in ("one", "two", "three")])

    def user(text: str) -> UserMessage:
        return UserMessage(content=text, timestamp=0)

    usages = []
    for messages in (
        [user("hello there é")],
        [user("hello there é"), user("second question")],
        [user("hello there é"), user("second quibble")],
    ):
        stream = faux.stream(faux.get_model(), Context(messages=messages), {"session_id": "s"})
        async for _ in stream:
            pass
        u = (await stream.result()).usage
        usages.append([u.input, u.output, u.cache_read, u.cache_write, u.total_tokens])
    assert usages == [[0, 1, 0, 5, 6], [0, 1, 5, 5, 11], [0, 2, 9, 1, 12]]
