"""The faux provider's prompt-cache estimate encoded texts to UTF-16 without ``surrogatepass``: a prompt holding a
lone surrogate (one UTF-16 unit in JavaScript) turned the next request into an error message about a codec."""

from __future__ import annotations

from pinb.ai import FauxProvider, faux_assistant_message
from pinb.ai.types import Context, UserMessage


async def usages(first: str, second: str) -> list[tuple[str, int, int, int]]:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    out = []
    for text in (first, second):
        context = Context(messages=[UserMessage(content=text, timestamp=0)])
        message = await faux.stream(faux.get_model(), context, {"session_id": "s"}).result()
        out.append((message.stop_reason, message.usage.input, message.usage.cache_read, message.usage.cache_write))
    return out


async def test_a_lone_surrogate_counts_as_one_unit() -> None:
    assert await usages("x\ud800y" * 8, "x\ud800z" * 8) == await usages("xwy" * 8, "xwz" * 8)
    assert [stop for stop, *_ in await usages("x\ud800y", "x\ud800z")] == ["stop", "stop"]
