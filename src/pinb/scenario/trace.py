"""Traces (design.md §3, scenario-format.md "Trace"): the writer, the conformance projection and the diff.

The writer works on events in Pi's JSON shape (camelCase keys, undefined fields absent), so the stand-in's pydantic
events and the real runner's JavaScript objects go through the same field selection. Tool-call and entry ids become
``call#N`` / ``entry#N`` labels when a line is written, reading its fields in order, so labels follow first
appearance in the trace.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from pinb.ai.transcript import MessageView

__all__ = [
    "PROJECTIONS",
    "STREAM_TYPES",
    "Diff",
    "Labels",
    "TraceWriter",
    "conform",
    "dumps_jsonl",
    "event_fields",
    "first_difference",
    "loads_jsonl",
    "message_summary",
    "project",
    "render_diff",
    "to_pi_json",
]

STREAM_TYPES = frozenset({"message_update", "tool_execution_update"})
#: ``request`` and ``tree`` lines exist only where a scenario asks for them (pinb's application-layer fields).
COMPARED_SOURCES = ("agent", "session", "ext", "model", "request", "tree")
#: The conformance projection keeps these keys, in this order (``toolCalls`` reduced to names; ``text`` only on
#: toolResult and assistant message lines). The last six are the fields of ``request`` and ``tree`` lines.
PROJECTED_KEYS = (
    "source", "type", "extension", "handler", "role", "stopReason", "toolName", "toolCallId", "isError",
    "turnIndex", "outcome", "continue", "aborted", "toolCalls", "text",
    "systemPrompt", "model", "thinkingLevel", "branch", "entries", "leaf",
)  # fmt: skip
LOOSE_KEYS = ("source", "type", "role", "stopReason", "toolName", "isError")
MESSAGE_TYPES = frozenset({"message_start", "message_end"})


def to_pi_json(value: Any) -> Any:
    """``value`` as Pi's JSON would have it: records by their camelCase aliases, undefined (None) fields left out."""
    if isinstance(value, BaseModel):
        # Live objects some events carry (an abort signal) have no JSON form; they are not traced.
        return value.model_dump(mode="json", by_alias=True, exclude_none=True, fallback=lambda _v: None)
    if isinstance(value, Mapping):
        return {str(k): to_pi_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_pi_json(v) for v in value]
    return value


class Labels:
    """Stable labels for volatile ids, numbered per kind by first appearance."""

    def __init__(self) -> None:
        self._calls: dict[str, str] = {}
        self._entries: dict[str, str] = {}

    def call(self, raw: Any) -> Any:
        return _label(self._calls, "call", raw)

    def entry(self, raw: Any) -> Any:
        return _label(self._entries, "entry", raw)


def _label(table: dict[str, str], kind: str, raw: Any) -> Any:
    if raw is None:
        return None
    key = str(raw)
    if key not in table:
        table[key] = f"{kind}#{len(table) + 1}"
    return table[key]


def _field(value: Any, key: str, attribute: str | None = None) -> Any:
    """``value[key]`` of Pi JSON, or the attribute of a live object (a dataclass an event carries)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        # A dataclass inside a pinb event dumps with its Python (snake_case) field names.
        return value.get(key, value.get(attribute or key))
    return getattr(value, attribute or key, None)


def _defined(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    return {key: value for key, value in pairs if value is not None}


def blocks_text(content: Any) -> str | None:
    """Text blocks joined with no separator; a string content as is; ``None`` when there is no text block."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [block.get("text") for block in content if isinstance(block, Mapping) and block.get("type") == "text"]
    return "".join(t for t in texts if isinstance(t, str)) if texts else None


def _tool_calls(message: Mapping[str, Any], labels: Labels) -> list[dict[str, Any]] | None:
    content = message.get("content")
    if not isinstance(content, list):
        return None
    calls = [b for b in content if isinstance(b, Mapping) and b.get("type") == "toolCall"]
    if not calls:
        return None
    return [_defined([("id", labels.call(c.get("id"))), ("name", c.get("name")), ("args", c.get("arguments"))])
            for c in calls]  # fmt: skip


def message_summary(message: Any, labels: Labels, *, end: bool) -> dict[str, Any]:
    """The message summary of scenario-format.md (``end``: the ``message_end`` variant)."""
    if not isinstance(message, Mapping):
        return {}
    role = message.get("role")
    content = message.get("content")
    match role:
        case "user":
            pairs = [("role", role), ("text", blocks_text(content))]
        case "custom":
            pairs = [("role", role), ("customType", message.get("customType")), ("text", blocks_text(content))]
        case "assistant" if not end:
            pairs = [("role", role), ("stopReason", message.get("stopReason"))]
        case "assistant":
            pairs = [
                ("role", role),
                ("stopReason", message.get("stopReason")),
                ("text", blocks_text(content)),
                ("toolCalls", _tool_calls(message, labels)),
                ("errorMessage", message.get("errorMessage")),
            ]
        case "toolResult":
            pairs = [
                ("role", role),
                ("toolCallId", labels.call(message.get("toolCallId"))),
                ("toolName", message.get("toolName")),
                ("isError", message.get("isError")),
                ("text", blocks_text(content)),
            ]
        case _:
            pairs = [("role", role)]
    return _defined(pairs)


def _roles(messages: Any) -> list[Any] | None:
    if not isinstance(messages, list):
        return None
    return [m.get("role") if isinstance(m, Mapping) else None for m in messages]


def _tool_results(results: Any, labels: Labels) -> list[dict[str, Any]] | None:
    if not isinstance(results, list):
        return None
    return [_defined([("toolCallId", labels.call(r.get("toolCallId"))), ("isError", r.get("isError"))])
            for r in results]  # fmt: skip


def _model_name(model: Any) -> str | None:
    return f"{model.get('provider')}/{model.get('id')}" if isinstance(model, Mapping) else None


def event_fields(event: Mapping[str, Any], labels: Labels, *, ext: bool) -> dict[str, Any]:
    """The fields scenario-format.md keeps for ``event`` (Pi JSON); ``ext`` adds the extension-only fields."""
    get = event.get
    match get("type"):
        case "agent_end":
            # willRetry (session lines) is written only when true: a retry follows this agent_end.
            pairs = [("messages", _roles(get("messages"))), ("willRetry", True if get("willRetry") is True else None)]
        case "turn_start":
            pairs = [("turnIndex", get("turnIndex"))] if ext else []
        case "turn_end" if ext:
            pairs = [
                ("turnIndex", get("turnIndex")),
                ("toolResults", _tool_results(get("toolResults"), labels)),
                ("outcome", get("outcome")),
                ("continue", get("continue")),
            ]
        case "turn_end":
            pairs = [("toolResults", _tool_results(get("toolResults"), labels))]
        case "message_start":
            return message_summary(get("message"), labels, end=False)
        case "message_end":
            return message_summary(get("message"), labels, end=True)
        case "message_update":
            message = get("message")
            pairs = [("role", message.get("role") if isinstance(message, Mapping) else None)]
        case "tool_execution_start":
            pairs = [
                ("toolName", get("toolName")),
                ("toolCallId", labels.call(get("toolCallId"))),
                ("args", get("args")),
            ]
        case "tool_execution_update":
            pairs = [("toolName", get("toolName")), ("toolCallId", labels.call(get("toolCallId")))]
        case "tool_execution_end":
            result = get("result")
            result = result if isinstance(result, Mapping) else {}
            pairs = [
                ("toolName", get("toolName")),
                ("toolCallId", labels.call(get("toolCallId"))),
                ("isError", get("isError")),
                ("text", blocks_text(result.get("content"))),
                ("details", result.get("details")),
            ]
        case "agent_before_settle":
            pairs = [("outcome", get("outcome")), ("continue", get("continue"))] if ext else []
        case "agent_settled":
            pairs = [("aborted", get("aborted"))]
        case "queue_update":
            pairs = [("steering", get("steering")), ("followUp", get("followUp"))]
        case "entry_appended":
            entry = get("entry")
            entry = entry if isinstance(entry, Mapping) else {}
            pairs = [
                ("entryType", entry.get("type")),
                ("entryId", labels.entry(entry.get("id"))),
                ("customType", entry.get("customType")),
            ]
        case "input":
            pairs = [
                ("text", get("text")),
                ("inputSource", get("source")),
                ("streamingBehavior", get("streamingBehavior")),
            ]
        case "before_agent_start":
            pairs = [("messageType", get("messageType")), ("prompt", get("prompt"))]
        case "context" | "context_with_system":
            pairs = [("messages", _roles(get("messages")))]
        case "tool_call":
            pairs = [
                ("toolName", get("toolName")),
                ("toolCallId", labels.call(get("toolCallId"))),
                ("input", get("input")),
            ]
        case "tool_result":
            pairs = [
                ("toolName", get("toolName")),
                ("toolCallId", labels.call(get("toolCallId"))),
                ("isError", get("isError")),
                ("text", blocks_text(get("content"))),
            ]
        case "session_start" | "session_shutdown" | "resources_discover":
            pairs = [
                ("reason", get("reason")),
                ("previousSessionFile", get("previousSessionFile")),
                ("targetSessionFile", get("targetSessionFile")),
            ]
        case "session_before_switch":
            pairs = [("reason", get("reason")), ("targetSessionFile", get("targetSessionFile"))]
        case "session_before_fork":
            pairs = [("entryId", labels.entry(get("entryId"))), ("position", get("position"))]
        case "ui_prompt_start" | "ui_prompt_end":
            pairs = [("kind", get("kind")), ("title", get("title"))]
        case "compaction_start":
            pairs = [("reason", get("reason"))]
        case "compaction_end":
            result = get("result")
            pairs = [
                ("reason", get("reason")),
                ("aborted", get("aborted")),
                ("willRetry", get("willRetry")),
                ("errorMessage", get("errorMessage")),
                ("summary", _field(result, "summary")),
                ("firstKeptEntryId", labels.entry(_field(result, "firstKeptEntryId", "first_kept_entry_id"))),
            ]
        case "auto_retry_start":
            pairs = [
                ("attempt", get("attempt")),
                ("maxAttempts", get("maxAttempts")),
                ("delayMs", get("delayMs")),
                ("errorMessage", get("errorMessage")),
            ]
        case "auto_retry_end":
            pairs = [("success", get("success")), ("attempt", get("attempt")), ("finalError", get("finalError"))]
        case "session_before_compact":
            preparation = get("preparation")
            to_summarize = _field(preparation, "messagesToSummarize", "messages_to_summarize")
            pairs = [
                ("reason", get("reason")),
                ("willRetry", get("willRetry")),
                ("customInstructions", get("customInstructions")),
                ("firstKeptEntryId", labels.entry(_field(preparation, "firstKeptEntryId", "first_kept_entry_id"))),
                ("messagesToSummarize", len(to_summarize) if to_summarize is not None else None),
                ("isSplitTurn", _field(preparation, "isSplitTurn", "is_split_turn")),
            ]
        case "session_compact":
            entry = get("compactionEntry")
            pairs = [
                ("reason", get("reason")),
                ("willRetry", get("willRetry")),
                ("fromExtension", get("fromExtension")),
                ("entryId", labels.entry(_field(entry, "id"))),
                ("summary", _field(entry, "summary")),
            ]
        case "session_compact_failed":
            pairs = [
                ("reason", get("reason")),
                ("aborted", get("aborted")),
                ("willRetry", get("willRetry")),
                ("fromExtension", get("fromExtension")),
                ("errorMessage", get("errorMessage")),
            ]
        case "session_before_tree":
            preparation = get("preparation")
            pairs = [
                ("targetId", labels.entry(_field(preparation, "targetId", "target_id"))),
                ("oldLeafId", labels.entry(_field(preparation, "oldLeafId", "old_leaf_id"))),
                ("userWantsSummary", _field(preparation, "userWantsSummary", "user_wants_summary")),
            ]
        case "session_tree":
            pairs = [
                ("newLeafId", labels.entry(get("newLeafId"))),
                ("oldLeafId", labels.entry(get("oldLeafId"))),
                ("fromExtension", get("fromExtension")),
            ]
        case "thinking_level_changed":
            pairs = [("level", get("level"))]
        case "thinking_level_select":
            pairs = [("level", get("level")), ("previousLevel", get("previousLevel"))]
        case "model_select":  # extension API actions: a model change
            selected: list[tuple[str, Any]] = [
                ("model", _model_name(get("model"))),
                ("previousModel", _model_name(get("previousModel"))),
                ("selectSource", get("source")),
            ]
            pairs = selected
        case _:
            pairs = []
    return _defined(pairs)


def model_message(message: Mapping[str, Any], labels: Labels) -> dict[str, Any]:
    """One message of a ``model`` line: what the model received."""
    role = message.get("role")
    match role:
        case "user":
            return _defined([("role", role), ("text", blocks_text(message.get("content")))])
        case "assistant":
            return _defined(
                [
                    ("role", role),
                    ("text", blocks_text(message.get("content"))),
                    ("toolCalls", _tool_calls(message, labels)),
                ]
            )
        case "toolResult":
            return _defined(
                [
                    ("role", role),
                    ("toolCallId", labels.call(message.get("toolCallId"))),
                    ("isError", message.get("isError")),
                    ("text", blocks_text(message.get("content"))),
                ]
            )
        case _:
            return {"role": role}


def declared_tools(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Tool names declared to the model: the system messages' ``toolsAdded``/``toolsRemoved`` folded in order."""
    tools: dict[str, None] = {}
    for message in messages:
        if message.get("role") != "system":
            continue
        for tool in message.get("toolsRemoved") or ():
            tools.pop(tool.get("name"), None)
        for tool in message.get("toolsAdded") or ():
            tools[tool.get("name")] = None
    return list(tools)


_UNSET: Any = object()
Fields = Mapping[str, Any] | Callable[[Labels], Mapping[str, Any]]


class TraceWriter:
    """Collects trace lines: ``seq``, ``source``, ``type``, the stream flag, then the fields (None = undefined)."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.labels = Labels()
        self._messages: dict[int, _Seen] = {}
        self._context: _Context | None = None

    def write(self, source: str, type_: str, fields: Fields | None = None, *, stream: bool = False) -> dict[str, Any]:
        line: dict[str, Any] = {"seq": len(self.lines) + 1, "source": source, "type": type_}
        if stream:
            line["stream"] = True
        resolved = fields(self.labels) if callable(fields) else (fields or {})
        line.update((k, v) for k, v in resolved.items() if v is not None)
        self.lines.append(line)
        return line

    def event(self, source: str, event: Any) -> dict[str, Any]:
        """An ``agent`` or ``session`` line for one event received by the public listener."""
        data = to_pi_json(event)
        type_ = data["type"]
        return self.write(
            source, type_, lambda labels: event_fields(data, labels, ext=False), stream=type_ in STREAM_TYPES
        )

    def ext(
        self,
        extension: str,
        handler: str | None,
        entry_snapshot: Mapping[str, Any],
        *,
        result: Any = _UNSET,
        error: str | None = None,
    ) -> dict[str, Any]:
        """An ``ext`` line, written when the handler returned (``result``) or threw (``error``).

        ``entry_snapshot`` is the event as the handler saw it on entry (see ``snapshot``).
        """
        type_ = entry_snapshot["type"]

        def fields(labels: Labels) -> dict[str, Any]:
            out: dict[str, Any] = {"extension": extension, "handler": handler}
            out.update(event_fields(entry_snapshot, labels, ext=True))
            if error is not None:
                out["error"] = error
            elif result is not _UNSET and result is not None:
                out["result"] = _result_json(result, labels)
            return out

        return self.write("ext", type_, fields, stream=type_ in STREAM_TYPES)

    def command(
        self, extension: str, name: str, args: str, *, result: Any = _UNSET, error: str | None = None
    ) -> dict[str, Any]:
        """An ``ext`` line ``command``: one invocation of an extension command, written when it returned or threw."""

        def fields(labels: Labels) -> dict[str, Any]:
            out: dict[str, Any] = {"extension": extension, "command": name, "args": args}
            if error is not None:
                out["error"] = error
            elif result is not _UNSET and result is not None:
                out["result"] = _result_json(result, labels)
            return out

        return self.write("ext", "command", fields)

    def model_request(self, n: int, messages: Sequence[Any], tools: Sequence[str] | None, *, exhausted: bool) -> None:
        """A ``model`` line: one provider request, written before any event of its reply.

        A request repeats the whole context, so each message is summarised and serialised once, on the first request
        that carries it (the stand-in's messages are frozen records), and later lines reuse both; when a request
        extends the previous one's context, only the new messages are looked at. The cost is linear in the trace
        written. Labels are unchanged by this: a message's ids got theirs when it was first summarised.
        """
        current = messages.base[: len(messages)] if isinstance(messages, MessageView) else list(messages)
        context = self._context
        known = len(context.messages) if context is not None else 0
        if context is None or len(current) < known or current[:known] != context.messages:
            context, known = _Context([], SummaryList(), [], []), 0
        summaries, texts, systems = SummaryList(context.summaries), list(context.texts), list(context.systems)
        frozen = True
        for message in current[known:]:
            item, cached = self._seen(message)
            frozen = frozen and cached
            summaries.append(item.summary)
            texts.append(item.text)
            if item.data is not None:
                systems.append(item.data)
        summaries.texts = texts
        # Only a context of frozen records is carried to the next request (a plain mapping could change meanwhile).
        self._context = _Context(current, summaries, texts, systems) if frozen else None
        names = list(tools) if tools is not None else declared_tools(systems)
        self.write(
            "model",
            "request",
            {"n": n, "messages": summaries, "tools": names, "exhausted": True if exhausted else None},
        )

    def _seen(self, message: Any) -> tuple[_Seen, bool]:
        """The message's summary, and whether it is cached (a frozen record; a plain mapping could change)."""
        cached = self._messages.get(id(message))
        if cached is not None and cached.message is message:
            return cached, True
        data = to_pi_json(message)
        summary = model_message(data, self.labels)
        item = _Seen(message, summary, _dumps(summary), data if data.get("role") == "system" else None)
        frozen = isinstance(message, BaseModel) and bool(message.model_config.get("frozen"))
        if frozen:
            self._messages[id(message)] = item
        return item, frozen


@dataclass(frozen=True, slots=True)
class _Context:
    """The previous request's messages, with their summaries, serialised forms and system messages' Pi JSON."""

    messages: list[Any]
    summaries: SummaryList
    texts: list[str]
    systems: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _Seen:
    """One context message as a ``model`` line shows it: its summary, serialised, and its Pi JSON if a system one."""

    message: Any  # held so its id is not reused while cached
    summary: dict[str, Any]
    text: str
    data: dict[str, Any] | None


class SummaryList(list[dict[str, Any]]):
    """A ``model`` line's messages, with each one's serialised form (``texts``) so ``dumps_jsonl`` reuses them."""

    texts: list[str]


def snapshot(event: Any) -> dict[str, Any]:
    """A deep copy of ``event`` in Pi JSON, so later mutation (by this or another handler) cannot change it."""
    return _copied(to_pi_json(event))


_IMMUTABLE = (str, int, float, bool, type(None))


def _copied(value: Any) -> Any:
    """``copy.deepcopy`` for the JSON trees ``to_pi_json`` returns, without its memo: plain dicts and lists are
    rebuilt, immutable scalars shared, anything else deep-copied."""
    kind = type(value)
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list:
        return [_copied(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


def _result_json(result: Any, labels: Labels) -> Any:
    data = to_pi_json(result)
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = {**data, "messages": [message_summary(m, labels, end=True) for m in data["messages"]]}
    if isinstance(data, dict) and isinstance(data.get("compaction"), Mapping):
        # A supplied compaction: its entry id is labelled; tokensBefore is an estimate and is not traced.
        compaction = {k: v for k, v in data["compaction"].items() if k != "tokensBefore"}
        compaction["firstKeptEntryId"] = labels.entry(compaction.get("firstKeptEntryId"))
        data = {**data, "compaction": compaction}
    message = data.get("message") if isinstance(data, dict) else None
    # Only a real message (one with a role) is summarised; inject_message's draft is written as returned.
    if isinstance(message, Mapping) and isinstance(message.get("role"), str):
        data = {**data, "message": message_summary(message, labels, end=True)}
    return _copied(data)


# --- JSONL -----------------------------------------------------------------------------------------------------------


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps_jsonl(lines: Iterable[Mapping[str, Any]]) -> str:
    """Compact JSON lines; a lone surrogate is escaped as JavaScript's JSON.stringify does, so the text is UTF-8."""
    return "".join(_dump_line(line) + "\n" for line in lines)


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _dump_line(line: Mapping[str, Any]) -> str:
    messages = line.get("messages")
    texts = getattr(messages, "texts", None) if isinstance(messages, SummaryList) else None
    if texts is None or len(texts) != len(messages):  # type: ignore[arg-type]
        return _dumps(line)
    # A model line: the messages' serialised forms are spliced in between the keys before and after them.
    keys = list(line)
    at = keys.index("messages")
    head = _dumps({key: line[key] for key in keys[:at]})
    tail = _dumps({key: line[key] for key in keys[at + 1 :]})
    body = ",".join(texts)
    return f'{head[:-1]}{"," if at else ""}"messages":[{body}]{"," if len(tail) > 2 else ""}{tail[1:]}'


def loads_jsonl(text: str) -> list[dict[str, Any]]:
    # Split on "\n" only: str.splitlines() would also split inside strings holding U+2028, which JSON leaves raw.
    return [json.loads(line) for line in text.split("\n") if line.strip()]


# --- conformance -----------------------------------------------------------------------------------------------------


#: The comparisons, strictest first. ``full`` (the default of ``pinb scenario diff`` and ``conform``): every field of
#: every line but ``seq``, the ``meta`` line aside, stream lines included and in order, volatile values normalised.
#: ``strict``: the same without stream lines. ``contract``: the contract's conformance projection (``--loose``).
#: ``loose``: the contract's loose projection.
PROJECTIONS = ("full", "strict", "contract", "loose")
#: Keys whose values depend on the clock, dropped wherever they appear (no writer emits them today; a line that ever
#: carries one still compares on everything else).
VOLATILE_KEYS = frozenset({"durationMs", "elapsedMs", "timestamp", "startedAt", "endedAt"})
#: A temporary folder's absolute path inside a string; compared as ``<tmp>`` (the writers already write Pi's home
#: and package folders as ``<home>`` and ``<pi>``).
_TEMP_PATH = re.compile(r"(?:/private)?(?:/tmp|/var/folders|/var/tmp)/[^\s\"'`:,)\]}]*")


def normalise_volatile(value: Any) -> Any:
    """``value`` with ``VOLATILE_KEYS`` dropped at any depth and temporary paths in strings written ``<tmp>``."""
    if isinstance(value, str):
        return _TEMP_PATH.sub("<tmp>", value)
    if isinstance(value, Mapping):
        return {key: normalise_volatile(item) for key, item in value.items() if key not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [normalise_volatile(item) for item in value]
    return value


def _project_line(line: Mapping[str, Any], projection: str) -> dict[str, Any]:
    if projection in ("full", "strict"):
        return {
            key: normalise_volatile(value) for key, value in line.items() if key != "seq" and key not in VOLATILE_KEYS
        }
    if projection == "loose":
        return {key: line[key] for key in LOOSE_KEYS if key in line}
    out: dict[str, Any] = {}
    for key in PROJECTED_KEYS:
        if key not in line:
            continue
        if key == "text" and not (
            line.get("type") in MESSAGE_TYPES and line.get("role") in ("toolResult", "assistant")
        ):
            continue
        value = line[key]
        if key == "toolCalls" and isinstance(value, list):
            value = [call.get("name") if isinstance(call, Mapping) else call for call in value]
        out[key] = value
    return out


@dataclass(frozen=True)
class Projected:
    """One projected line and the ``seq`` of the line it came from."""

    seq: Any
    line: dict[str, Any]


def _kept(line: Mapping[str, Any], projection: str) -> bool:
    if projection == "full":
        return line.get("source") != "meta"
    if line.get("stream"):
        return False
    return line.get("source") != "meta" if projection == "strict" else line.get("source") in COMPARED_SOURCES


def choose_projection(projection: str | None = None, *, loose: bool = False, strict: bool = False) -> str:
    """The projection named by ``projection`` or by the older flags (``loose``: the contract's loose projection,
    ``strict``: every field without stream lines); none of them: ``contract``."""
    if loose and strict:
        raise ValueError("a projection is loose or strict, not both")
    named = "loose" if loose else "strict" if strict else None
    if projection is not None and named is not None and projection != named:
        raise ValueError(f"projection {projection!r} contradicts {'loose' if loose else 'strict'}=True")
    chosen = projection or named or "contract"
    if chosen not in PROJECTIONS:
        raise ValueError(f"unknown projection {chosen!r}: one of {', '.join(PROJECTIONS)}")
    return chosen


def project_with_seq(
    lines: Iterable[Mapping[str, Any]],
    loose: bool = False,
    *,
    strict: bool = False,
    projection: str | None = None,
) -> list[Projected]:
    chosen = choose_projection(projection, loose=loose, strict=strict)
    return [Projected(line.get("seq"), _project_line(line, chosen)) for line in lines if _kept(line, chosen)]


def project(
    lines: Iterable[Mapping[str, Any]], loose: bool = False, *, strict: bool = False, projection: str | None = None
) -> list[dict[str, Any]]:
    """A comparison projection of a trace (docs/scenario-format.md, "Comparing traces").

    Without arguments the contract's conformance projection; ``loose``: the contract's loose projection; ``strict``:
    every field of every line except ``seq``, the ``meta`` line and stream lines; ``projection="full"``: the same with
    stream lines, in order.
    """
    return [p.line for p in project_with_seq(lines, loose, strict=strict, projection=projection)]


@dataclass(frozen=True)
class Diff:
    """The first projected line where two traces differ (``None`` on a side that ended first)."""

    index: int
    left_name: str
    right_name: str
    left: Projected | None
    right: Projected | None
    context: tuple[Projected, ...]

    def render(self) -> str:
        return render_diff(self)

    def __str__(self) -> str:
        return self.render()


def first_difference(
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    *,
    loose: bool = False,
    strict: bool = False,
    projection: str | None = None,
    names: tuple[str, str] = ("a", "b"),
    context: int = 3,
) -> Diff | None:
    """The first differing projected line of two traces, or ``None`` when they conform (see :func:`project`)."""
    left = project_with_seq(a, loose, strict=strict, projection=projection)
    right = project_with_seq(b, loose, strict=strict, projection=projection)
    for index in range(max(len(left), len(right))):
        lhs = left[index] if index < len(left) else None
        rhs = right[index] if index < len(right) else None
        if lhs is None or rhs is None or lhs.line != rhs.line:
            before = tuple(left[max(0, index - context) : index])
            return Diff(index + 1, names[0], names[1], lhs, rhs, before)
    return None


def conform(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]], *, loose: bool = False) -> Diff | None:
    """``None`` when the traces conform, else their first difference."""
    return first_difference(a, b, loose=loose)


def _show(p: Projected | None) -> str:
    return "(end of trace)" if p is None else json.dumps(p.line, ensure_ascii=False, separators=(",", ":"))


def render_diff(diff: Diff) -> str:
    """A readable report: the agreed lines just before, then both versions of the first differing line."""
    width = max(len(diff.left_name), len(diff.right_name))
    where = [f"{name} seq {p.seq}" for name, p in ((diff.left_name, diff.left), (diff.right_name, diff.right)) if p]
    out = [f"first difference at projected line {diff.index}" + (f" ({', '.join(where)})" if where else "") + ":"]
    out += [f"  {'':{width}}   {_show(p)}" for p in diff.context]
    out.append(f"- {diff.left_name:{width}} : {_show(diff.left)}")
    out.append(f"+ {diff.right_name:{width}} : {_show(diff.right)}")
    return "\n".join(out)
