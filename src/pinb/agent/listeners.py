"""A live listener set with JavaScript ``Set`` iteration semantics.

Pi keeps listeners in a ``Set`` and iterates it while awaiting each one: a listener removed during dispatch is
skipped if it was not reached yet, one added during dispatch is reached in the same dispatch, and adding a listener
that is already present changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pinb.agent.types import resolve
from pinb.ai.arity import positional_arity


class _Entry:
    __slots__ = ("alive", "arity", "listener")

    def __init__(self, listener: Callable[..., Any]) -> None:
        self.listener = listener
        self.alive = True
        # JavaScript ignores extra arguments: a listener written as (event) gets just the event.
        self.arity = positional_arity(listener)


class ListenerSet:
    """Ordered listeners; ``dispatch`` awaits each in turn and sees additions and removals at once."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._index: dict[Any, _Entry] = {}
        self._dispatching = 0
        self._dead = 0

    def add(self, listener: Callable[..., Any]) -> Callable[[], bool]:
        """Add ``listener`` (no-op if present); returns a function removing it (``True`` if it was present)."""
        if listener not in self._index:
            entry = _Entry(listener)
            self._entries.append(entry)
            self._index[listener] = entry

        def remove() -> bool:
            return self.remove(listener)

        return remove

    def remove(self, listener: Callable[..., Any]) -> bool:
        entry = self._index.pop(listener, None)
        if entry is None:
            return False
        entry.alive = False
        self._dead += 1
        self._compact()
        return True

    def __len__(self) -> int:
        return len(self._index)

    async def dispatch(self, *args: Any) -> None:
        """Call every live listener with ``args``, awaiting each before the next."""
        self._dispatching += 1
        try:
            entries = self._entries
            i = 0
            while i < len(entries):
                entry = entries[i]
                i += 1
                if entry.alive:
                    call_args = args if entry.arity is None or entry.arity >= len(args) else args[: entry.arity]
                    await resolve(entry.listener(*call_args))
        finally:
            self._dispatching -= 1
            self._compact()

    def _compact(self) -> None:
        # Entries are only dropped between dispatches, so indexes held by a running dispatch stay valid.
        if self._dispatching == 0 and self._dead:
            self._entries = [e for e in self._entries if e.alive]
            self._dead = 0
