"""The session tree, like Pi's ``SessionManager`` (``core/session-manager.ts``), kept in memory.

A session is an append-only list of entries; each entry names its parent, so the list is a tree. A leaf pointer
marks the active branch; appending adds a child of the leaf and moves the leaf to it. Branching moves the leaf
back without deleting anything; compaction appends a summary entry that hides older entries from the model's
context without removing them from the tree.

``build_session_context`` is a pure projection of the active branch, step for step Pi's ``buildSessionContext``
(``pinb.app.session_context``); the entries and the JSONL format are in ``pinb.app.session_file``. Both modules'
public names are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pinb.ai.types import (
    AssistantMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
    now_ms,
)
from pinb.app.session_context import (
    LAST_ENTRY,
    ModelRef,
    ProjectedEntry,
    SessionContext,
    SessionProjection,
    build_context_entries,
    build_session_context,
    build_session_projection,
    session_entry_to_context_messages,
)
from pinb.app.session_file import (
    CURRENT_SESSION_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    ContextEditReplacement,
    CustomEntry,
    CustomMessageEntry,
    IdFactory,
    LabelEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    SessionMessageEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
    iso_timestamp,
    parse_iso_ms,
    parse_session_jsonl,
    random_entry_id,
    sequential_ids,
    uuidv7,
    write_session_jsonl,
)
from pinb.app.session_messages import current_system_message
from pinb.errors import SessionFileError, UsageError

__all__ = [
    "LAST_ENTRY",
    "ModelRef",
    "ProjectedEntry",
    "SessionContext",
    "SessionManager",
    "SessionProjection",
    "SessionTreeNode",
    "build_context_entries",
    "build_session_context",
    "build_session_projection",
    "collect_entries_for_branch_summary",
    "random_entry_id",
    "sequential_ids",
    "session_entry_to_context_messages",
    "uuidv7",
]


@dataclass
class SessionTreeNode:
    """A node of ``get_tree()``: the entry, its children (oldest first), its resolved label."""

    entry: Any
    children: list[SessionTreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: str | None = None


# --- the manager ------------------------------------------------------------------------------------------------

_EDITABLE_ROLES: Final = (UserMessage, AssistantMessage, ToolResultMessage)


class SessionManager:
    """An in-memory session tree with Pi's ``SessionManager`` operations, readable and writable as Pi JSONL.

    ``id_factory`` makes entry ids (default: Pi's random 8 hex digits; ``sequential_ids()`` for reproducible
    runs); ``clock`` gives milliseconds since the epoch for entry timestamps.
    """

    def __init__(
        self,
        cwd: str = "/project",
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
        id_factory: IdFactory | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self._make_id = id_factory or random_entry_id
        self._clock = clock or now_ms
        self.cwd = cwd
        self._entries: list[Any] = []
        self._by_id: dict[str, Any] = {}
        self._labels: dict[str, str] = {}
        self._label_timestamps: dict[str, str] = {}
        self._leaf_id: str | None = None
        self.header = SessionHeader(
            version=CURRENT_SESSION_VERSION,
            id=session_id or uuidv7(self._clock()),
            timestamp=self._now(),
            cwd=cwd,
            parent_session=parent_session,
        )

    # --- files ---------------------------------------------------------------------------------------------

    @classmethod
    def from_jsonl(
        cls,
        text: str,
        source: str = "<session>",
        *,
        id_factory: IdFactory | None = None,
        clock: Callable[[], int] | None = None,
    ) -> SessionManager:
        """Load a session from JSONL text (Pi's ``SessionManager.open``); the leaf is the last entry."""
        parsed = parse_session_jsonl(text, source, id_factory)
        if parsed is None:
            return cls(id_factory=id_factory, clock=clock)
        manager = cls(parsed.header.cwd, session_id=parsed.header.id, id_factory=id_factory, clock=clock)
        manager.header = parsed.header
        manager._entries = list(parsed.entries)
        manager._rebuild_index()
        return manager

    @classmethod
    def from_entries(cls, header: SessionHeader, entries: Sequence[Any]) -> SessionManager:
        """A session holding these very entries after `header` (Pi's ``SessionManager.inMemory(cwd, undefined,
        [header, ...entries])``, which keeps the objects it is given); the leaf is the last entry."""
        manager = cls(header.cwd, session_id=header.id)
        manager.header = header
        manager._entries = list(entries)
        manager._rebuild_index()
        return manager

    @classmethod
    def open(cls, path: str | Path, **kwargs: Any) -> SessionManager:
        """Read a session file (only reading: pinb never writes unless ``save`` is called)."""
        file = Path(path)
        if not file.exists():
            raise SessionFileError(f"Session file does not exist: {file}")
        return cls.from_jsonl(file.read_text(encoding="utf-8"), str(file), **kwargs)

    def to_jsonl(self) -> str:
        """The session as Pi writes it: header then entries, one JSON object per line."""
        return write_session_jsonl(self.header, self._entries)

    def save(self, path: str | Path) -> Path:
        """Write ``to_jsonl()`` to ``path`` (an explicit choice of the caller; nothing is written otherwise)."""
        target = Path(path)
        target.write_text(self.to_jsonl(), encoding="utf-8")
        return target

    def _rebuild_index(self) -> None:
        self._by_id.clear()
        self._labels.clear()
        self._label_timestamps.clear()
        self._leaf_id = None
        for entry in self._entries:
            self._by_id[entry.id] = entry
            self._leaf_id = entry.id
            if isinstance(entry, LabelEntry):
                self._apply_label(entry)

    # --- appending -----------------------------------------------------------------------------------------

    def _now(self) -> str:
        return iso_timestamp(self._clock())

    def _next_id(self) -> str:
        return self._make_id(set(self._by_id))

    def _base(self) -> dict[str, Any]:
        return {"id": self._next_id(), "parent_id": self._leaf_id, "timestamp": self._now()}

    def _append(self, entry: Any) -> str:
        self._entries.append(entry)
        self._by_id[entry.id] = entry
        self._leaf_id = entry.id
        return entry.id

    def append_message(self, message: Any) -> str:
        """Append a transcript message as a child of the leaf; returns the new entry's id."""
        return self._append(SessionMessageEntry(**self._base(), message=message))

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._append(ThinkingLevelChangeEntry(**self._base(), thinking_level=thinking_level))

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append(ModelChangeEntry(**self._base(), provider=provider, model_id=model_id))

    def append_usage(self, kind: str, provider: str, model: str, usage: Usage, note: str | None = None) -> Any:
        """Append usage outside the context; returns the entry (as Pi does)."""
        entry = UsageEntry(**self._base(), kind=kind, provider=provider, model=model, usage=usage, note=note or None)
        self._append(entry)
        return entry

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Append a compaction: ``first_kept_entry_id`` (None: the compaction itself) starts the kept history.

        Like Pi, it snapshots the current system message (prompt, sections and tools replayed from the context)
        with the compaction's timestamp, so the prompt survives although the system messages before it are hidden.
        """
        clock_ms = self._clock()
        system = current_system_message(self.build_session_projection().messages)
        entry_id = self._next_id()
        entry = CompactionEntry(
            id=entry_id,
            parent_id=self._leaf_id,
            timestamp=iso_timestamp(clock_ms),
            summary=summary,
            first_kept_entry_id=entry_id if first_kept_entry_id is None else first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
            usage=usage,
            from_hook=from_hook,
            system_message=system.model_copy(update={"timestamp": clock_ms}) if system else None,
        )
        return self._append(entry)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        """Extension state, kept in the session but never in the context."""
        return self._append(CustomEntry(custom_type=custom_type, data=data, **self._base()))

    def append_session_info(self, name: str) -> str:
        """Set the session's display name (line breaks become spaces, ends trimmed)."""
        clean = re.sub(r"[\r\n]+", " ", name).strip()
        return self._append(SessionInfoEntry(**self._base(), name=clean))

    def append_custom_message_entry(self, custom_type: str, content: Any, display: bool, details: Any = None) -> str:
        """An extension message that enters the context (as a user message for the model)."""
        entry = CustomMessageEntry(
            custom_type=custom_type, content=content, display=display, details=details, **self._base()
        )
        return self._append(entry)

    def append_context_edit(self, target_id: str, replacement: Mapping[str, Any] | None) -> str:
        """Replace (``{"content": ...}``) or omit (None) an earlier entry's contribution, on this branch only."""
        if replacement is not None and (
            not isinstance(replacement, Mapping)
            or "content" not in replacement
            or not isinstance(replacement["content"], str | list | tuple)
        ):
            raise UsageError("Context edit replacement must be null or contain string/array content")
        target = self._by_id.get(target_id)
        if target is None:
            raise SessionFileError(f"Entry {target_id} not found")
        if not any(entry.id == target_id for entry in self.get_branch()):
            raise SessionFileError(f"Entry {target_id} is not on the active branch")
        editable = isinstance(target, CustomMessageEntry) or (
            isinstance(target, SessionMessageEntry) and isinstance(target.message, _EDITABLE_ROLES)
        )
        if not editable:
            raise SessionFileError(f"Entry {target_id} does not contribute editable model content")
        normalized = None
        if replacement is not None:
            content = replacement["content"]
            if isinstance(content, str) and isinstance(
                getattr(target, "message", None), AssistantMessage | ToolResultMessage
            ):
                content = [{"type": "text", "text": content}]
            normalized = ContextEditReplacement.model_validate({"content": content})
        return self._append(ContextEditEntry(**self._base(), target_id=target_id, replacement=normalized))

    def append_label_change(self, target_id: str, label: str | None) -> str:
        """Set or (with None or "") clear a label on an entry."""
        if target_id not in self._by_id:
            raise SessionFileError(f"Entry {target_id} not found")
        entry = LabelEntry(**self._base(), target_id=target_id, label=label)
        self._append(entry)
        self._apply_label(entry)
        return entry.id

    def _apply_label(self, entry: LabelEntry) -> None:
        if entry.label:
            self._labels[entry.target_id] = entry.label
            self._label_timestamps[entry.target_id] = entry.timestamp
        else:
            self._labels.pop(entry.target_id, None)
            self._label_timestamps.pop(entry.target_id, None)

    # --- tree ----------------------------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.header.id

    def get_leaf_id(self) -> str | None:
        return self._leaf_id

    def get_leaf_entry(self) -> Any:
        return self._by_id.get(self._leaf_id) if self._leaf_id else None

    def get_entry(self, entry_id: str) -> Any:
        return self._by_id.get(entry_id)

    def get_children(self, parent_id: str | None) -> list[Any]:
        return [entry for entry in self._by_id.values() if entry.parent_id == parent_id]

    def get_label(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    def get_header(self) -> SessionHeader:
        return self.header

    def get_entries(self) -> list[Any]:
        """Every entry (not the header), in file order; a copy."""
        return list(self._entries)

    def get_entry_count(self) -> int:
        return len(self._by_id)

    def get_session_name(self) -> str | None:
        for entry in reversed(self._entries):
            if isinstance(entry, SessionInfoEntry):
                return (entry.name or "").strip() or None
        return None

    def get_branch(self, from_id: str | None = None) -> list[Any]:
        """The path root → ``from_id`` (default: the leaf), every entry type included."""
        path = []
        start = from_id if from_id is not None else self._leaf_id
        current = self._by_id.get(start) if start else None
        while current is not None:
            path.append(current)
            current = self._by_id.get(current.parent_id) if current.parent_id else None
        path.reverse()
        return path

    def get_tree(self) -> list[SessionTreeNode]:
        """Roots (normally one; orphans too) with children sorted oldest first, labels resolved."""
        nodes = {
            entry.id: SessionTreeNode(entry, [], self._labels.get(entry.id), self._label_timestamps.get(entry.id))
            for entry in self._entries
        }
        roots: list[SessionTreeNode] = []
        for entry in self._entries:
            node = nodes[entry.id]
            parent = nodes.get(entry.parent_id) if entry.parent_id and entry.parent_id != entry.id else None
            (parent.children if parent else roots).append(node)
        stack = list(roots)
        while stack:
            node = stack.pop()
            node.children.sort(key=lambda child: parse_iso_ms(child.entry.timestamp))  # stable, like Array.sort
            stack.extend(node.children)
        return roots

    def branch(self, branch_from_id: str) -> None:
        """Move the leaf to an earlier entry; the next append starts a new branch there."""
        if branch_from_id not in self._by_id:
            raise SessionFileError(f"Entry {branch_from_id} not found")
        self._leaf_id = branch_from_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append is a new root."""
        self._leaf_id = None

    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Branch, then append a summary of the branch being left (its ``from_id`` is the old leaf)."""
        if branch_from_id is not None and branch_from_id not in self._by_id:
            raise SessionFileError(f"Entry {branch_from_id} not found")
        from_id = self._leaf_id or "root"
        self._leaf_id = branch_from_id
        entry = BranchSummaryEntry(
            id=self._next_id(),
            parent_id=branch_from_id,
            timestamp=self._now(),
            from_id=from_id,
            summary=summary,
            details=details,
            usage=usage,
            from_hook=from_hook,
        )
        return self._append(entry)

    def create_branched_session(self, leaf_id: str) -> None:
        """Replace this session by one holding only the path root → ``leaf_id`` (Pi's in-memory mode).

        Label entries on the path are dropped and the path re-chained; the labels in effect for kept entries are
        re-appended at the end; the new session gets a new id.
        """
        path = self.get_branch(leaf_id)
        if not path:
            raise SessionFileError(f"Entry {leaf_id} not found")
        kept: list[Any] = []
        replacement: dict[str, str] = {}
        pending: list[str] = []
        parent: str | None = None
        for entry in path:
            if isinstance(entry, LabelEntry):
                pending.append(entry.id)
                continue
            for label_id in pending:
                replacement[label_id] = entry.id
            pending.clear()
            update: dict[str, Any] = {"parent_id": parent}
            if isinstance(entry, CompactionEntry) and entry.first_kept_entry_id != entry.id:
                first = entry.first_kept_entry_id
                update["first_kept_entry_id"] = replacement.get(first, first)
            copy = entry.model_copy(update=update)
            copy._line = None
            kept.append(copy)
            parent = entry.id
        kept_ids = {entry.id for entry in kept}
        labels = [(target, label) for target, label in self._labels.items() if target in kept_ids]
        taken = set(kept_ids)
        for target, label in labels:
            entry = LabelEntry(
                id=self._make_id(set(taken)),
                parent_id=parent,
                timestamp=self._label_timestamps[target],
                target_id=target,
                label=label,
            )
            taken.add(entry.id)
            kept.append(entry)
            parent = entry.id
        self.header = SessionHeader(
            version=CURRENT_SESSION_VERSION, id=uuidv7(self._clock()), timestamp=self._now(), cwd=self.cwd
        )
        self._entries = kept
        self._rebuild_index()

    # --- context -------------------------------------------------------------------------------------------

    def build_context_entries(self) -> list[Any]:
        return build_context_entries(self._entries, self._leaf_id, self._by_id)

    def build_session_projection(self) -> SessionProjection:
        return build_session_projection(self._entries, self._leaf_id, self._by_id)

    def build_session_context(self) -> SessionContext:
        """What the agent is given for the active branch (Pi's ``buildSessionContext``)."""
        return build_session_context(self._entries, self._leaf_id, self._by_id)

    build_context = build_session_context


def collect_entries_for_branch_summary(
    session: SessionManager, old_leaf_id: str | None, target_id: str
) -> tuple[list[Any], str | None]:
    """Pi's ``collectEntriesForBranchSummary``: the entries of the branch being left, oldest first, and the
    deepest common ancestor of the old leaf and the target (compactions on the way are included)."""
    if not old_leaf_id:
        return [], None
    old_path = {entry.id for entry in session.get_branch(old_leaf_id)}
    common = next((e.id for e in reversed(session.get_branch(target_id)) if e.id in old_path), None)
    entries = []
    current: str | None = old_leaf_id
    while current and current != common:
        entry = session.get_entry(current)
        if entry is None:
            break
        entries.append(entry)
        current = entry.parent_id
    entries.reverse()
    return entries, common
