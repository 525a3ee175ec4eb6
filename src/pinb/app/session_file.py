"""Session entries and Pi's JSONL session format, version 3.

One JSON object per line: a ``session`` header, then entries that form a tree through ``id`` / ``parentId``.
Lines are written the way Pi writes them (``JSON.stringify`` of an object whose keys come in the order Pi's
``SessionManager`` builds them), so a file pinb writes loads in Pi, and a file Pi wrote is written back
byte for byte (each entry read from a file keeps its original line).

Reading follows Pi's ``loadEntriesFromFile``: blank lines and lines that are not JSON are skipped; a file whose first
parsed line is not a session header is "not a valid pi session"; v1 and v2 files are migrated to v3.
Unlike Pi, which loads entries without validating them, pinb validates every entry and raises
``SessionFileError`` naming the line when one does not fit Pi's declared shape.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Final, Literal, TypeAlias

from pydantic import Field, PrivateAttr, TypeAdapter, ValidationError

from pinb.ai.types import (
    ImageContent,
    PiRecord,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    now_ms,
)
from pinb.app.js_compat import json_stringify
from pinb.app.session_messages import SessionMessage
from pinb.errors import SessionFileError, UsageError

__all__ = [
    "CURRENT_SESSION_VERSION",
    "ENTRY_ADAPTER",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEditEntry",
    "ContextEditReplacement",
    "CustomEntry",
    "CustomMessageEntry",
    "IdFactory",
    "LabelEntry",
    "ModelChangeEntry",
    "ParsedSession",
    "SessionEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "SessionMessageEntry",
    "ThinkingLevelChangeEntry",
    "UsageEntry",
    "entry_line",
    "entry_to_json",
    "iso_timestamp",
    "parse_iso_ms",
    "parse_session_jsonl",
    "random_entry_id",
    "sequential_ids",
    "uuidv7",
    "write_session_jsonl",
]

CURRENT_SESSION_VERSION: Final = 3
APP_NAME: Final = "pi"


def iso_timestamp(ms: int) -> str:
    """JavaScript's ``new Date(ms).toISOString()``: ``2026-01-01T00:00:00.000Z``."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def parse_iso_ms(timestamp: str) -> int:
    """JavaScript's ``new Date(iso).getTime()`` for the ISO strings sessions hold."""
    text = timestamp.replace("Z", "+00:00")
    return round(datetime.fromisoformat(text).timestamp() * 1000)


class _Entry(PiRecord):
    """Base of entries: keeps the line it was read from, so writing it back is byte-identical."""

    _line: str | None = PrivateAttr(default=None)
    #: Fields written as ``null`` when None (Pi sets them to null); every other None field is left out.
    KEEP_NULL: ClassVar[tuple[str, ...]] = ("parentId",)


class SessionHeader(_Entry):
    """First line of a session file."""

    type: Literal["session"] = "session"
    #: Format version; absent in v1 files.
    version: int | None = None
    #: Session id (a UUIDv7 in Pi).
    id: str
    #: ISO creation time.
    timestamp: str
    #: Working directory the session belongs to.
    cwd: str = ""
    #: Path of the session this one was forked from.
    parent_session: str | None = None

    KEEP_NULL: ClassVar[tuple[str, ...]] = ()


class SessionMessageEntry(_Entry):
    """A transcript message."""

    type: Literal["message"] = "message"
    id: str
    parent_id: str | None
    timestamp: str
    message: SessionMessage


class ThinkingLevelChangeEntry(_Entry):
    """The thinking level changed (the last one on the branch wins)."""

    type: Literal["thinking_level_change"] = "thinking_level_change"
    id: str
    parent_id: str | None
    timestamp: str
    thinking_level: str


class ModelChangeEntry(_Entry):
    """The model changed (an assistant message also sets the current model)."""

    type: Literal["model_change"] = "model_change"
    id: str
    parent_id: str | None
    timestamp: str
    provider: str
    model_id: str


class UsageEntry(_Entry):
    """Usage outside the context (a cache warm-up, say)."""

    type: Literal["usage"] = "usage"
    id: str
    parent_id: str | None
    timestamp: str
    kind: str
    provider: str
    model: str
    usage: Usage
    note: str | None = None


class CompactionEntry(_Entry):
    """Older history summarised: context = snapshot + summary + entries from ``first_kept_entry_id`` on."""

    type: Literal["compaction"] = "compaction"
    id: str
    parent_id: str | None
    timestamp: str
    summary: str
    #: First entry kept verbatim (its own id when nothing is kept).
    first_kept_entry_id: str
    tokens_before: int
    #: Extension-specific data.
    details: Any = None
    usage: Usage | None = None
    #: True when an extension produced the summary.
    from_hook: bool | None = None
    #: Complete prompt and tool state at the boundary (replayed system messages).
    system_message: SystemMessage | None = None


class BranchSummaryEntry(_Entry):
    """Summary of the branch left when navigating elsewhere in the tree."""

    type: Literal["branch_summary"] = "branch_summary"
    id: str
    parent_id: str | None
    timestamp: str
    #: Leaf the summarised branch was left from (``"root"`` for an empty session).
    from_id: str
    summary: str
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None


class CustomEntry(_Entry):
    """Extension state; never part of the context."""

    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None
    id: str
    parent_id: str | None
    timestamp: str


class CustomMessageEntry(_Entry):
    """An extension message that enters the context as a ``custom`` message (a user message for the model)."""

    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | tuple[Annotated[TextContent | ImageContent, Field(discriminator="type")], ...]
    #: Whether the UI shows it.
    display: bool
    details: Any = None
    id: str
    parent_id: str | None
    timestamp: str


ContentBlock: TypeAlias = Annotated[
    TextContent | ImageContent | ThinkingContent | ToolCall, Field(discriminator="type")
]


class ContextEditReplacement(PiRecord):
    """New content for an earlier entry's contribution to the context (metadata unchanged)."""

    content: str | tuple[ContentBlock, ...]


class ContextEditEntry(_Entry):
    """Branch-local edit of an earlier entry: replace its content, or omit it (``replacement`` null)."""

    type: Literal["context_edit"] = "context_edit"
    id: str
    parent_id: str | None
    timestamp: str
    target_id: str
    replacement: ContextEditReplacement | None

    KEEP_NULL: ClassVar[tuple[str, ...]] = ("parentId", "replacement")


class LabelEntry(_Entry):
    """Set (or, without ``label``, clear) a bookmark on an entry."""

    type: Literal["label"] = "label"
    id: str
    parent_id: str | None
    timestamp: str
    target_id: str
    label: str | None = None


class SessionInfoEntry(_Entry):
    """Session metadata: its display name."""

    type: Literal["session_info"] = "session_info"
    id: str
    parent_id: str | None
    timestamp: str
    name: str | None = None


SessionEntry: TypeAlias = Annotated[
    SessionMessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | UsageEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | ContextEditEntry
    | LabelEntry
    | SessionInfoEntry,
    Field(discriminator="type"),
]
ENTRY_ADAPTER: TypeAdapter[Any] = TypeAdapter(SessionEntry)


def entry_to_json(entry: _Entry) -> dict[str, Any]:
    """The entry as the JSON object Pi writes: Pi's key order, camelCase, undefined fields left out."""
    dumped = entry.model_dump(mode="json", by_alias=True, exclude_none=True)
    out: dict[str, Any] = {}
    for name, info in type(entry).model_fields.items():
        key = info.alias or name
        if key in dumped:
            out[key] = dumped[key]
        elif key in entry.KEEP_NULL and getattr(entry, name) is None:
            out[key] = None
    return out


def entry_line(entry: _Entry) -> str:
    """One JSONL line (without the newline): the original line for an entry read from a file."""
    if entry._line is not None:
        return entry._line
    text = json_stringify(entry_to_json(entry))
    assert text is not None
    return text


def write_session_jsonl(header: SessionHeader, entries: Iterable[_Entry]) -> str:
    """The whole file: header and entries, one line each, each ending in a newline (as Pi writes it)."""
    return "".join(entry_line(item) + "\n" for item in (header, *entries))


# --- ids ------------------------------------------------------------------------------------------------------

IdFactory = Callable[[set[str]], str]


def random_entry_id(existing: Container[str]) -> str:
    """Pi's ``generateId``: the first 8 hex digits of a random UUID, retried on collision."""
    for _ in range(100):
        candidate = str(uuid.uuid4())[:8]
        if candidate not in existing:
            return candidate
    return str(uuid.uuid4())


def sequential_ids(start: int = 1) -> IdFactory:
    """A deterministic id factory for tests and notebooks: ``00000001``, ``00000002``, ... (8 hex digits)."""
    counter = iter(range(start, 2**32))

    def make(existing: set[str]) -> str:
        for number in counter:
            candidate = f"{number:08x}"
            if candidate not in existing:
                return candidate
        raise UsageError("sequential_ids ran out of 8-hex-digit ids")

    return make


def uuidv7(ms: int | None = None) -> str:
    """A time-ordered UUIDv7 string, the form of Pi's session ids."""
    timestamp = (now_ms() if ms is None else ms) & 0xFFFF_FFFF_FFFF
    rand = uuid.uuid4().int
    value = (timestamp << 80) | (0x7 << 76) | ((rand >> 64) & 0x0FFF) << 64 | (0b10 << 62) | (rand & (2**62 - 1))
    return str(uuid.UUID(int=value))


# --- reading ----------------------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JSON.parse rejects NaN / Infinity, so Pi skips such lines


@dataclass
class ParsedSession:
    """A session file read into validated entries."""

    header: SessionHeader
    entries: list[Any]
    #: 1-based numbers of lines Pi would skip (not JSON).
    skipped_lines: list[int] = field(default_factory=list)
    #: True when the file was v1/v2 and was migrated (Pi then rewrites the file).
    migrated: bool = False


def parse_session_jsonl(
    text: str, source: str = "<session>", id_factory: Callable[[set[str]], str] | None = None
) -> ParsedSession | None:
    """Parse a session file's text. ``None`` for a file with no entries at all (Pi starts a new session then).

    Raises ``SessionFileError`` with Pi's message for a file that is not a session, and naming the line for an
    entry pinb cannot validate.
    """
    raw: list[tuple[int, str, dict[str, Any]]] = []
    skipped: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, parse_constant=_reject_constant)
        except ValueError:
            skipped.append(number)
            continue
        if not isinstance(value, dict):
            # JSON.parse accepts it, but Pi then reads `.type` of a non-object: it is not a usable entry.
            raise SessionFileError(f"{source}:{number}: a session line must be a JSON object")
        raw.append((number, line, value))
    if not raw:
        if text.strip():
            raise SessionFileError(f"Session file is not a valid {APP_NAME} session: {source}")
        return None
    first = raw[0][2]
    if first.get("type") != "session" or not isinstance(first.get("id"), str):
        raise SessionFileError(f"Session file is not a valid {APP_NAME} session: {source}")
    migrated = _migrate([value for _, _, value in raw], id_factory)
    header: SessionHeader | None = None
    entries: list[Any] = []
    for number, line, value in raw:
        try:
            if value.get("type") == "session":
                parsed: _Entry = SessionHeader.model_validate(value)
            else:
                parsed = ENTRY_ADAPTER.validate_python(value)
        except ValidationError as exc:
            kind = value.get("type")
            raise SessionFileError(f"{source}:{number}: invalid {kind!r} entry: {exc.errors()[0]['msg']}") from exc
        if not migrated:
            parsed._line = line.rstrip("\r")
        if isinstance(parsed, SessionHeader):
            header = header or parsed
        else:
            entries.append(parsed)
    assert header is not None
    return ParsedSession(header=header, entries=entries, skipped_lines=skipped, migrated=migrated)


def _migrate(values: Sequence[dict[str, Any]], id_factory: Callable[[set[str]], str] | None) -> bool:
    """Pi's ``migrateToCurrentVersion``, in place: v1 gains ids and parent ids, v2 renames ``hookMessage``."""
    header = next((v for v in values if v.get("type") == "session"), None)
    version = (header or {}).get("version") or 1
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        make_id = id_factory or random_entry_id
        ids: set[str] = set()
        previous: str | None = None
        for value in values:
            if value.get("type") == "session":
                value["version"] = 2
                continue
            value["id"] = make_id(ids)
            ids.add(value["id"])
            value["parentId"] = previous
            previous = value["id"]
            if value.get("type") == "compaction" and isinstance(value.get("firstKeptEntryIndex"), int):
                index = value["firstKeptEntryIndex"]
                if 0 <= index < len(values) and values[index].get("type") != "session":
                    value["firstKeptEntryId"] = values[index]["id"]
                del value["firstKeptEntryIndex"]
    for value in values:
        if value.get("type") == "session":
            value["version"] = 3
        elif value.get("type") == "message" and (value.get("message") or {}).get("role") == "hookMessage":
            value["message"]["role"] = "custom"
    return True
