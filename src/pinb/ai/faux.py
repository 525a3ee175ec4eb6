"""The scripted faux provider, like pi-ai's ``providers/faux.ts``.

Each provider request takes the next scripted response (a message, or a factory that sees the request) and streams
it in Pi's event order: ``start``; per block ``text_start/delta/end``, ``thinking_*`` or ``toolcall_*``; then
``done`` (or ``error`` for an ``error``/``aborted`` stop reason). Chunking is deterministic: chunk sizes are drawn
from a seeded generator between ``token_size`` bounds (Pi draws them with ``Math.random``). Usage is estimated as
Pi's faux provider does (4 characters a token over the whole prompt) but computed incrementally, so a long run
stays linear. After the script runs dry a request gets an ``error`` message "No more faux responses queued".
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import random
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pinb.ai.abort import AbortSignal
from pinb.ai.arity import positional_arity
from pinb.ai.event_stream import AssistantMessageEventStream
from pinb.ai.jsjson import js_length, js_stringify
from pinb.ai.timers import timer_seconds
from pinb.ai.transcript import MessageView, system_message_text
from pinb.ai.types import (
    EMPTY_USAGE,
    AssistantMessage,
    Context,
    DoneEvent,
    ErrorEvent,
    ImageContent,
    Model,
    ModelCost,
    StartEvent,
    StopReason,
    SystemMessage,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolcallDeltaEvent,
    ToolcallEndEvent,
    ToolcallStartEvent,
    Usage,
    UserMessage,
    now_ms,
    replace_fields,
)
from pinb.errors import FauxScriptError

DEFAULT_MIN_TOKEN_SIZE = 3
DEFAULT_MAX_TOKEN_SIZE = 5
NO_MORE_RESPONSES = "No more faux responses queued"
#: What ``Models.streamSimple`` reports for a request made with an already-aborted signal.
REQUEST_ABORTED_BEFORE_START = "This operation was aborted"

_id_counter = 0


def _next_id(prefix: str) -> str:
    global _id_counter
    _id_counter += 1
    return f"{prefix}:{_id_counter}"


# --- script builders --------------------------------------------------------------------------------------------


def faux_text(text: str) -> TextContent:
    """A text block."""
    return TextContent(text=text)


def faux_thinking(thinking: str) -> ThinkingContent:
    """A thinking block."""
    return ThinkingContent(thinking=thinking)


def faux_tool_call(name: str, arguments: dict[str, Any], *, id: str | None = None) -> ToolCall:
    """A tool-call block (``id`` generated when not given)."""
    return ToolCall(id=id if id is not None else _next_id("tool"), name=name, arguments=arguments)


def faux_assistant_message(
    content: str | TextContent | ThinkingContent | ToolCall | Sequence[TextContent | ThinkingContent | ToolCall],
    *,
    stop_reason: StopReason = "stop",
    error_message: str | None = None,
    response_id: str | None = None,
    timestamp: int | None = None,
) -> AssistantMessage:
    """A scripted response: a string becomes one text block."""
    if isinstance(content, str):
        blocks: tuple[Any, ...] = (faux_text(content),)
    elif isinstance(content, TextContent | ThinkingContent | ToolCall):
        blocks = (content,)
    else:
        blocks = tuple(content)
    return AssistantMessage(
        content=blocks,
        stop_reason=stop_reason,
        error_message=error_message,
        response_id=response_id,
        timestamp=timestamp if timestamp is not None else now_ms(),
    )


#: A response factory: ``(context, options, state, model)`` → message (sync or async); may take fewer arguments.
FauxFactory = Callable[..., Any]
FauxResponse = AssistantMessage | FauxFactory


@dataclass
class FauxState:
    """Counters a factory can read."""

    call_count: int = 0


@dataclass(frozen=True)
class FauxRequest:
    """One request the provider took (recorded before any event of its reply)."""

    #: 1-based request number.
    n: int
    model: Model
    #: What the model received (a snapshot).
    context: Context
    options: dict[str, Any] = field(repr=False)
    #: True when the script had already run out.
    exhausted: bool


# --- usage estimate ---------------------------------------------------------------------------------------------


def _content_to_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, ImageContent):
            parts.append(f"[image:{block.mime_type}:{js_length(block.data)}]")
        else:
            parts.append(block.text)
    return "\n".join(parts)


def _assistant_content_to_text(content: Sequence[Any]) -> str:
    parts = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ThinkingContent):
            parts.append(block.thinking)
        else:
            parts.append(f"{block.name}:{js_stringify(block.arguments)}")
    return "\n".join(parts)


def message_to_text(message: Any) -> str:
    """The text Pi's faux provider measures for one message (without the ``role:`` prefix)."""
    if isinstance(message, SystemMessage):
        parts = [system_message_text(message)]
        parts += [f"tool-:{js_stringify(t)}" for t in message.tools_removed or ()]
        parts += [f"tool+:{js_stringify(t)}" for t in message.tools_added or ()]
        return "\n".join(p for p in parts if p)
    if isinstance(message, UserMessage):
        return _content_to_text(message.content)
    if isinstance(message, AssistantMessage):
        return _assistant_content_to_text(message.content)
    name = getattr(message, "tool_name", "")
    return "\n".join([name, *(_content_to_text([b]) for b in getattr(message, "content", ()) or ())])


def _entry_text(message: Any) -> str:
    return f"{message.role}:{message_to_text(message)}"


class _PromptMeter:
    """The prompt texts (one per message) of successive requests, measured incrementally.

    When a request's messages extend the previously measured ones (a ``MessageView`` over the same list with that
    prefix unchanged, or a new list whose first items are those messages), only the new messages are measured.
    Anything else is measured from scratch into new lists, so lists handed out earlier stay valid.
    """

    def __init__(self) -> None:
        self.base: list[Any] | None = None
        self.texts: list[str] = []
        self.lengths: list[int] = []
        self.last: Any = None
        #: The messages last measured, when they came as a plain list (compared by identity, item by item, in C).
        self.previous: list[Any] | None = None

    def measure(self, messages: Sequence[Any]) -> tuple[list[str], list[int], int]:
        """``(texts, UTF-16 lengths, count)`` for ``messages``; the lists may run past ``count`` later."""
        count = len(messages)
        texts, lengths = self.texts, self.lengths
        known = len(lengths)
        if isinstance(messages, MessageView):
            incremental = (
                messages.base is self.base and count >= known and (known == 0 or messages.base[known - 1] is self.last)
            )
        else:
            previous = self.previous
            incremental = previous is not None and count >= known and list(messages[:known]) == previous
        if not incremental:
            texts, lengths, known = [], [], 0
        for i in range(known, count):
            text = _entry_text(messages[i])
            texts.append(text)
            lengths.append(js_length(text))
        self.texts, self.lengths = texts, lengths
        if isinstance(messages, MessageView):
            self.base, self.previous = messages.base, None
            self.last = messages[count - 1] if count else None
        else:
            self.base, self.last, self.previous = None, None, list(messages)
        return texts, lengths, count


class _RunningTotals:
    """Prefix sums over a lengths list that only grows (rebuilt when the list changes)."""

    def __init__(self) -> None:
        self.source: list[int] | None = None
        self.prefix: list[int] = [0]

    def joined_length(self, lengths: list[int], count: int) -> int:
        """Length of the first ``count`` texts joined with blank lines."""
        if lengths is not self.source:
            self.source, self.prefix = lengths, [0]
        prefix = self.prefix
        for i in range(len(prefix) - 1, count):
            prefix.append(prefix[-1] + lengths[i])
        return prefix[count] + (count - 1) * 2 if count > 0 else 0


#: (texts, lengths, count, joined length) of one request's prompt.
_Prompt = tuple[list[str], list[int], int, int]


# --- the provider -----------------------------------------------------------------------------------------------


class FauxProvider:
    """A scripted model provider. ``stream`` is a stream function for ``Agent(stream_fn=...)``."""

    def __init__(
        self,
        *,
        api: str = "faux",
        provider: str = "faux",
        model_id: str = "faux-1",
        token_size: int | tuple[int, int] | None = None,
        tokens_per_second: float | None = None,
        seed: int = 0,
        on_request: Callable[[FauxRequest], Any] | None = None,
    ) -> None:
        self.api = api
        self.provider = provider
        if isinstance(token_size, int):
            low, high = token_size, token_size
        elif token_size is None:
            low, high = DEFAULT_MIN_TOKEN_SIZE, DEFAULT_MAX_TOKEN_SIZE
        else:
            low, high = token_size
        self.min_token_size = max(1, min(low, high))
        self.max_token_size = max(self.min_token_size, high)
        self.tokens_per_second = tokens_per_second
        self._random = random.Random(seed)
        self.state = FauxState()
        self.requests: list[FauxRequest] = []
        self.on_request = on_request
        self._pending: list[FauxResponse] = []
        self._meter = _PromptMeter()
        self._totals = _RunningTotals()
        self._prompt_cache: dict[str, _Prompt] = {}
        self.model = Model(
            id=model_id,
            name="Faux Model",
            api=api,
            provider=provider,
            base_url="http://localhost:0",
            input=("text", "image"),
            cost=ModelCost(),
            context_window=128000,
            max_tokens=16384,
        )

    # script ------------------------------------------------------------------------------------------------------

    def set_responses(self, responses: Sequence[Any]) -> None:
        """Replace the script."""
        self._pending = [self._checked(r, i) for i, r in enumerate(responses)]

    def append_responses(self, responses: Sequence[Any]) -> None:
        """Add to the end of the script."""
        start = len(self._pending)
        self._pending.extend(self._checked(r, start + i) for i, r in enumerate(responses))

    @property
    def pending_response_count(self) -> int:
        """Responses not used yet."""
        return len(self._pending)

    @property
    def exhausted_requests(self) -> int:
        """Requests that found the script empty."""
        return sum(1 for r in self.requests if r.exhausted)

    def assert_complete(self, *, allow_exhausted: bool = False) -> None:
        """Raise ``FauxScriptError`` unless every scripted response was used (and, by default, none was missing)."""
        if self._pending:
            raise FauxScriptError(
                f"{len(self._pending)} scripted faux response(s) were never requested: the run made fewer provider "
                "requests than the script expects (check stop reasons and tool calls)"
            )
        if not allow_exhausted and self.exhausted_requests:
            raise FauxScriptError(
                f"{self.exhausted_requests} request(s) came after the script ran out (they got "
                f'"{NO_MORE_RESPONSES}"): add responses, or pass allow_exhausted=True if that is the point'
            )

    def get_model(self, model_id: str | None = None) -> Model | None:
        """The provider's model (``None`` for an unknown id)."""
        if model_id is None or model_id == self.model.id:
            return self.model
        return None

    @staticmethod
    def _checked(response: Any, index: int) -> FauxResponse:
        if isinstance(response, AssistantMessage):
            message = response
        elif callable(response):
            return response
        elif isinstance(response, dict):
            try:
                message = AssistantMessage.model_validate({"role": "assistant", **response})
            except ValidationError as error:
                raise FauxScriptError(
                    f"scripted response #{index + 1} is not an assistant message ({error.error_count()} problem(s): "
                    f"{error.errors()[0]['msg']}); build it with faux_assistant_message(...)"
                ) from error
        else:
            raise FauxScriptError(
                f"scripted response #{index + 1} is a {type(response).__name__}: give an AssistantMessage "
                "(faux_assistant_message), a dict in Pi's message shape, or a factory (context, options, state, model)"
            )
        if message.stop_reason == "pending":
            raise FauxScriptError(
                f"scripted response #{index + 1} has stop reason 'pending': use stop, toolUse, length, error or aborted"
            )
        return message

    # requests ----------------------------------------------------------------------------------------------------

    def stream(
        self, model: Model, context: Context, options: dict[str, Any] | None = None
    ) -> AssistantMessageEventStream:
        """Answer one request with the next scripted response.

        Like ``Models.streamSimple`` (the stream function the book's programs use), a request whose signal is
        already aborted never reaches the script: it ends at once with stop reason ``aborted`` and Pi's
        "This operation was aborted", and is not counted or recorded.
        """
        options = options or {}
        signal = options.get("signal")
        if signal is not None and signal.aborted:
            refused = AssistantMessage(
                content=(),
                api=model.api,
                provider=model.provider,
                model=model.id,
                usage=EMPTY_USAGE,
                stop_reason="aborted",
                error_message=REQUEST_ABORTED_BEFORE_START,
            )
            return AssistantMessageEventStream.of_message(refused)
        step = self._pending.pop(0) if self._pending else None
        self.state.call_count += 1
        request = FauxRequest(
            n=self.state.call_count, model=model, context=context, options=options, exhausted=step is None
        )
        self.requests.append(request)
        if self.on_request is not None:
            self.on_request(request)
        return AssistantMessageEventStream(self._respond(step, model, context, options))

    async def _respond(
        self, step: FauxResponse | None, model: Model, context: Context, options: dict[str, Any]
    ) -> AsyncIterator[Any]:
        signal: AbortSignal | None = options.get("signal")
        try:
            if step is None:
                message = self._error_message(NO_MORE_RESPONSES, model)
                message = self._with_usage(message, context, options)
                yield ErrorEvent(reason="error", error=message)
                return
            message = await self._resolve(step, model, context, options)
        except Exception as error:  # a failing factory is a provider failure: data, not an exception
            yield ErrorEvent(reason="error", error=self._error_message(_error_text(error), model))
            return
        inner = self._stream_with_deltas(message, signal)
        # pi-ai's faux provider pushes its events into the stream from its own async function, which runs ahead of
        # the consumer (its chunks wait a microtask each): an abort that lands while the consumer handles an early
        # event finds the reply already streamed to its end. The producer runs as its own task likewise, and without
        # stream delays it never waits between chunks.
        queue: asyncio.Queue[Any] = asyncio.Queue()
        finished = object()

        async def produce() -> None:
            try:
                async for event in inner:
                    queue.put_nowait(event)
            except BaseException as error:  # handed to the consumer
                queue.put_nowait(error)
            finally:
                queue.put_nowait(finished)

        producer = asyncio.ensure_future(produce())
        try:
            while True:
                item = await queue.get()
                if item is finished:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            if not producer.done():
                producer.cancel()
            await inner.aclose()  # not left to the garbage collector

    async def _resolve(self, step: FauxResponse, model: Model, context: Context, options: dict[str, Any]) -> Any:
        if isinstance(step, AssistantMessage):
            resolved: Any = step
        else:
            args = (context, options, self.state, model)
            resolved = step(*args[: positional_arity(step)])
            if inspect.isawaitable(resolved):
                resolved = await resolved
            if isinstance(resolved, str):
                resolved = faux_assistant_message(resolved)
            elif isinstance(resolved, dict):
                resolved = AssistantMessage.model_validate({"role": "assistant", **resolved})
            elif not isinstance(resolved, AssistantMessage):
                raise TypeError(f"a faux response factory returned {type(resolved).__name__}, not an AssistantMessage")
        message = replace_fields(resolved, api=self.api, provider=self.provider, model=model.id)
        return self._with_usage(message, context, options)

    def _error_message(self, text: str, model: Model) -> AssistantMessage:
        return AssistantMessage(
            content=(),
            api=self.api,
            provider=self.provider,
            model=model.id,
            usage=EMPTY_USAGE,
            stop_reason="error",
            error_message=text,
        )

    def _with_usage(self, message: AssistantMessage, context: Context, options: dict[str, Any]) -> AssistantMessage:
        texts, lengths, count = self._meter.measure(context.messages)
        prompt_length = self._totals.joined_length(lengths, count)
        prompt_tokens = math.ceil(prompt_length / 4)
        output = math.ceil(js_length(_assistant_content_to_text(message.content)) / 4)
        input_tokens, cache_read, cache_write = prompt_tokens, 0, 0
        session_id = options.get("session_id")
        if session_id and options.get("cache_retention") != "none":
            previous = self._prompt_cache.get(session_id)
            if previous is None:
                cache_write = prompt_tokens
            else:
                cache_read = math.ceil(_common_prefix_length(previous, (texts, lengths, count, prompt_length)) / 4)
                cache_write = max(0, prompt_tokens - cache_read)
            input_tokens = 0
            self._prompt_cache[session_id] = (texts, lengths, count, prompt_length)
        usage = Usage(
            input=input_tokens,
            output=output,
            cache_read=cache_read,
            cache_write=cache_write,
            total_tokens=input_tokens + output + cache_read + cache_write,
        )
        return replace_fields(message, usage=usage)

    # streaming ---------------------------------------------------------------------------------------------------

    def _chunks(self, text: str) -> list[str]:
        chunks = []
        index = 0
        while index < len(text):
            size = self._random.randint(self.min_token_size, self.max_token_size) * 4
            chunks.append(text[index : index + size])
            index += size
        return chunks or [""]

    async def _schedule(self, chunk: str) -> None:
        if not self.tokens_per_second or self.tokens_per_second <= 0:
            return  # pi-ai waits a microtask: the reply's producer stays ahead of its consumer (see _respond)
        # pi-ai: setTimeout(resolve, tokens / tokensPerSecond * 1000), with Node's clamp of huge delays to 1 ms.
        await asyncio.sleep(timer_seconds(math.ceil(js_length(chunk) / 4) / self.tokens_per_second * 1000))

    async def _stream_with_deltas(self, message: AssistantMessage, signal: AbortSignal | None) -> AsyncIterator[Any]:
        partial = replace_fields(message, content=(), stop_reason="pending")

        def aborted() -> ErrorEvent:
            final = partial.model_copy(
                update={"stop_reason": "aborted", "error_message": "Request was aborted", "timestamp": now_ms()}
            )
            return ErrorEvent(reason="aborted", error=final)

        if signal is not None and signal.aborted:
            yield aborted()
            return
        yield StartEvent(partial=partial)
        content: list[Any] = []

        def update(index: int, block: Any) -> AssistantMessage:
            if index == len(content):
                content.append(block)
            else:
                content[index] = block
            return replace_fields(partial, content=tuple(content))

        for index, block in enumerate(message.content):
            if signal is not None and signal.aborted:
                yield aborted()
                return
            if isinstance(block, ThinkingContent | TextContent):
                is_text = isinstance(block, TextContent)
                whole = block.text if is_text else block.thinking
                empty = TextContent(text="") if is_text else ThinkingContent(thinking="")
                partial = update(index, empty)
                start, delta_event, end = (
                    (TextStartEvent, TextDeltaEvent, TextEndEvent)
                    if is_text
                    else (ThinkingStartEvent, ThinkingDeltaEvent, ThinkingEndEvent)
                )
                yield start(content_index=index, partial=partial)
                so_far = ""
                for chunk in self._chunks(whole):
                    await self._schedule(chunk)
                    if signal is not None and signal.aborted:
                        yield aborted()
                        return
                    so_far += chunk
                    grown = TextContent(text=so_far) if is_text else ThinkingContent(thinking=so_far)
                    partial = update(index, grown)
                    yield delta_event(content_index=index, delta=chunk, partial=partial)
                partial = update(index, block)
                yield end(content_index=index, content=whole, partial=partial)
                continue
            partial = update(index, ToolCall(id=block.id, name=block.name, arguments={}))
            yield ToolcallStartEvent(content_index=index, partial=partial)
            so_far = ""
            for chunk in self._chunks(js_stringify(block.arguments)):
                await self._schedule(chunk)
                if signal is not None and signal.aborted:
                    yield aborted()
                    return
                so_far += chunk
                partial = update(index, ToolCall(id=block.id, name=block.name, arguments=parse_partial_json(so_far)))
                yield ToolcallDeltaEvent(content_index=index, delta=chunk, partial=partial)
            partial = update(index, block)
            yield ToolcallEndEvent(content_index=index, tool_call=block, partial=partial)
        if message.stop_reason in ("error", "aborted"):
            yield ErrorEvent(reason=message.stop_reason, error=message)  # type: ignore[arg-type]
            return
        yield DoneEvent(reason=message.stop_reason, message=message)  # type: ignore[arg-type]


def _common_prefix_length(previous: _Prompt, current: _Prompt) -> int:
    """Pi's ``commonPromptPrefixLength``: equal messages compared whole, then characters from the first difference."""
    prev_texts, prev_lengths, prev_count, prev_total = previous
    texts, _, count, _ = current
    if prev_texts is texts and prev_count <= count:
        return prev_total  # the previous prompt is a prefix of this one (the common case, O(1))
    index = 0
    while index < prev_count and index < count and prev_texts[index] == texts[index]:
        index += 1

    def rest(items: list[str], n: int) -> str:
        return "" if index == n else ("\n\n" if index > 0 else "") + "\n\n".join(items[index:n])

    joined = sum(prev_lengths[:index]) + (index - 1) * 2 if index > 0 else 0
    return joined + _common_utf16_prefix(rest(prev_texts, prev_count), rest(texts, count))


def _common_utf16_prefix(a: str, b: str) -> int:
    left, right = a.encode("utf-16-le", "surrogatepass"), b.encode("utf-16-le", "surrogatepass")
    n = min(len(left), len(right))
    i = 0
    while i < n and left[i] == right[i]:
        i += 1
    return i // 2


def parse_partial_json(text: str) -> dict[str, Any]:
    """Best-effort parse of an incomplete JSON object (the tool arguments so far); ``{}`` when nothing parses."""
    for candidate in _completions(text):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        return value if isinstance(value, dict) else {}
    return {}


def _completions(text: str) -> list[str]:
    stack: list[str] = []
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    closer = "".join(reversed(stack))
    base = text[:-1] if escaped else text
    quoted = base + '"' if in_string else base
    trimmed = quoted.rstrip().rstrip(",:")
    return [text, quoted + closer, trimmed + closer, trimmed.rsplit(",", 1)[0] + closer]


def _error_text(error: BaseException) -> str:
    return str(error) if str(error) else type(error).__name__
