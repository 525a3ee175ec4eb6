"""The book's manuscript, read from where the user keeps it: pinb commits no copy of a chapter or its code.

The book directory is, in this order: `PINB_BOOK` (which `pinb --book DIR` sets for everything it runs), or
`[tool.pinb] book = "…"` in the project's `pyproject.toml` (relative to that file). Without either, or when the
directory or a chapter's file is missing, the chapter text is not available: quotes and fingerprints are then
unverified, and a claim about the book's own code cannot run.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pinb.chapters.ledger import Ledger, TextSource
from pinb.errors import UsageError
from pinb.fingerprints import normalise

BOOK_ENV = "PINB_BOOK"
#: The start of what status, reports and verdicts say when a chapter's text cannot be read (`unavailable`).
TEXT_UNAVAILABLE = "the chapter text is not available"


def project_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` (default: the working directory) holding `pyproject.toml`."""
    here = (start or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if (folder / "pyproject.toml").is_file()), None)


def book_dir(root: Path | None = None) -> Path | None:
    """The book directory the user named (`PINB_BOOK`, else `[tool.pinb] book`), or None when none is named."""
    named = _named_book(root)
    return named[0] if named else None


def _named_book(root: Path | None) -> tuple[Path, str] | None:
    """The book directory the user named, resolved, and as they wrote it."""
    named = os.environ.get(BOOK_ENV)
    if named:
        return Path(named).expanduser().resolve(), named
    root = root or project_root()
    if root is None:
        return None
    try:
        config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    value = config.get("tool", {}).get("pinb", {}).get("book")
    if not isinstance(value, str) or not value:
        return None
    return (root / value).resolve(), value


def unavailable(ledger: Ledger, root: Path | None = None) -> str:
    """Why the chapter's text cannot be read, naming where it was looked for as configured (the same words on
    every machine) and how to point pinb at it."""
    named = _named_book(root)
    if named is None:
        return f"{TEXT_UNAVAILABLE}: no book directory is named; set {BOOK_ENV} (or `[tool.pinb] book`)"
    folder, written = named
    if not folder.is_dir():
        return f"{TEXT_UNAVAILABLE} at {written}: set {BOOK_ENV}"
    missing = [s.file for s in (ledger.text, *ledger.also_quoted_from) if not (folder / s.file).is_file()]
    shown = f" (no {missing[0]} there)" if missing else " (unreadable)"
    return f"{TEXT_UNAVAILABLE} at {written}{shown}: set {BOOK_ENV}"


def cut(text: str, source: TextSource) -> str:
    """The part of a file the ledger quotes: after the `start` marker's line, before the `end` marker's line."""
    lines = text.splitlines(keepends=True)
    first, last = 0, len(lines)
    if source.start is not None:
        found = next((i for i, line in enumerate(lines) if source.start in line), None)
        if found is None:
            raise UsageError(f"{source.file}: the start marker {source.start!r} is not in the text")
        first = found + 1
    if source.end is not None:
        found = next((i for i in range(first, len(lines)) if source.end in lines[i]), None)
        if found is None:
            raise UsageError(f"{source.file}: the end marker {source.end!r} is not in the text")
        last = found
    return "".join(lines[first:last])


@dataclass(frozen=True)
class ChapterText:
    path: Path
    text: str
    """The quoted part of the file (see `cut`), then that of each `also_quoted_from` file."""


def chapter_text(ledger: Ledger, root: Path | None = None) -> ChapterText | None:
    """The chapter's text from the book directory, or None when it is not available."""
    folder = book_dir(root)
    if folder is None:
        return None
    parts = []
    for source in (ledger.text, *ledger.also_quoted_from):
        try:
            parts.append(cut((folder / source.file).read_text(encoding="utf-8"), source))
        except (OSError, UnicodeDecodeError):
            return None
    return ChapterText(folder / ledger.text.file, "\n\n".join(parts))


def printed_code(text: str, first_line: str, last_line: str) -> str:
    """Code the chapter prints, verbatim: from the line starting with `first_line` to the next one starting with
    `last_line`, both included."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith(first_line)), None)
    if start is None:
        raise UsageError(f"the chapter text has no line starting with {first_line!r}")
    end = next((i for i in range(start, len(lines)) if lines[i].startswith(last_line)), None)
    if end is None:
        raise UsageError(f"the chapter text has no line starting with {last_line!r} after {first_line!r}")
    return "".join(lines[start : end + 1])


def missing_quotes(ledger: Ledger, text: str) -> list[tuple[str, str]]:
    """(claim id, quote) for each quote of the ledger that the chapter text does not contain (compared after the
    fingerprint's normalisation: line breaks and spacing are the typesetter's)."""
    haystack = normalise(text)
    return [(c.id, q) for c in ledger.claims for q in c.quotes if normalise(q) not in haystack]


def text_note(ledger: Ledger, text: ChapterText | None, root: Path | None = None) -> str:
    """Empty when the text holds every quote; else what a reader of status and reports must know."""
    if text is None:
        return f"{unavailable(ledger, root)}; its quotes and fingerprint are unverified"
    missing = missing_quotes(ledger, text.text)
    if not missing:
        return ""
    shown = "; ".join(f"{claim_id}: “{_short(quote)}”" for claim_id, quote in missing[:3])
    more = f" (and {len(missing) - 3} more)" if len(missing) > 3 else ""
    return f"{len(missing)} quote(s) no longer in the chapter text {text.path.name}: {shown}{more}"


def _short(quote: str, limit: int = 80) -> str:
    flat = normalise(quote)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


__all__ = [
    "BOOK_ENV",
    "TEXT_UNAVAILABLE",
    "ChapterText",
    "book_dir",
    "chapter_text",
    "cut",
    "missing_quotes",
    "printed_code",
    "project_root",
    "text_note",
    "unavailable",
]
