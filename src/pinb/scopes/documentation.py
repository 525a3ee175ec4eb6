"""The documentation scope's judge: is a passage in a Markdown file verbatim, and if not, which passage is closest.

Both sides are normalised the same way before they are compared: inline Markdown markup a reader does not see is
dropped (backticks, emphasis markers, link targets, table pipes), typographic quotes become straight ones, and runs
of whitespace become one space; a sentence's closing punctuation mark is not compared (the chapter may end with a
full stop the sentence the docs continue with a colon), nor is the case of its first letter (a quote may start
mid-sentence). Nothing else is changed, so a changed word is a difference.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

_STRICT = ConfigDict(frozen=True, extra="forbid")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"`+|\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[:;])\s+(?=[A-Z`\"'(])")
_VERSION_HEADING = re.compile(r"^##\s+\[?([0-9][0-9A-Za-z.+-]*)\]?")
#: Below this similarity no passage is "closest": the file says nothing like the quote.
CLOSEST_MIN_RATIO = 0.5


def normalise(text: str) -> str:
    """The text as compared: no inline markup, straight quotes, single spaces."""
    text = _LINK.sub(r"\1", text).translate(_QUOTES)
    text = _MARKUP.sub("", text).replace("|", " ")
    return " ".join(text.split())


def sentences(text: str) -> list[str]:
    """A normalised passage cut into sentences (a colon or semicolon before a capital ends one too)."""
    return [part for part in _SENTENCE_END.split(normalise(text)) if part]


@dataclass(frozen=True)
class _Passage:
    line: int
    text: str


def _passages(markdown: str) -> list[_Passage]:
    """Every sentence of the file with the line it starts on (code fences included: docs quote code too)."""
    out: list[_Passage] = []
    for number, line in enumerate(markdown.splitlines(), start=1):
        out.extend(_Passage(number, sentence) for sentence in sentences(line))
    return out


class PassageCheck(BaseModel):
    """One sentence of a quote, looked up in one file."""

    model_config = _STRICT

    quote: str
    status: str
    """`verbatim`, `differs` (the closest passage is given) or `absent` (nothing similar in the file)."""
    line: int | None = None
    closest: str = ""
    difference: str = ""
    """What the file says instead, in words: `"A" where the chapter has "B"`."""


def _difference(quote: str, passage: str) -> str:
    left, right = quote.split(), passage.split()
    parts: list[str] = []
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(a=left, b=right, autojunk=False).get_opcodes():
        chapter, docs = " ".join(left[a1:a2]), " ".join(right[b1:b2])
        if op == "replace":
            parts.append(f'"{docs}" where the chapter has "{chapter}"')
        elif op == "delete":
            parts.append(f'no "{chapter}"')
        elif op == "insert":
            parts.append(f'adds "{docs}"')
    return "; ".join(parts)


def check_sentence(sentence: str, markdown: str) -> PassageCheck:
    """Whether `sentence` is in `markdown` verbatim after normalisation; else its closest sentence and the change."""
    wanted = normalise(sentence).rstrip(".:;")
    whole = normalise(markdown)
    passages = _passages(markdown)
    for form in dict.fromkeys((wanted, wanted[:1].upper() + wanted[1:])):
        if form in whole:
            line = next((p.line for p in passages if form in p.text or p.text.rstrip(".:;") in form), None)
            return PassageCheck(quote=wanted, status="verbatim", line=line)
    best: tuple[float, _Passage] | None = None
    for passage in passages:
        ratio = difflib.SequenceMatcher(a=wanted, b=passage.text, autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, passage)
    if best is None or best[0] < CLOSEST_MIN_RATIO:
        return PassageCheck(quote=wanted, status="absent")
    ratio, passage = best
    return PassageCheck(
        quote=wanted,
        status="differs",
        line=passage.line,
        closest=passage.text,
        difference=_difference(wanted, passage.text.rstrip(".:;")),
    )


def check_quote(quote: str, markdown: str) -> list[PassageCheck]:
    """Each sentence of a quoted passage, looked up in the file."""
    return [check_sentence(sentence, markdown) for sentence in sentences(quote)]


class Mention(BaseModel):
    """A passage (a paragraph or list item) that contains every word asked for."""

    model_config = _STRICT

    line: int
    text: str
    section: str = ""
    """The release heading above it in a changelog (`0.83.0`), else empty."""


def find_mentions(words: tuple[str, ...], markdown: str) -> list[Mention]:
    """The paragraphs and list items of `markdown` that contain all `words` (case-sensitive, after normalisation)."""
    found: list[Mention] = []
    section = ""
    block: list[str] = []
    start = 0

    def flush() -> None:
        text = normalise(" ".join(block))
        if block and all(word in text for word in words):
            found.append(Mention(line=start, text=text, section=section))

    for number, line in enumerate(markdown.splitlines(), start=1):
        heading = _VERSION_HEADING.match(line)
        if not line.strip() or line.lstrip().startswith(("- ", "* ", "#")):
            flush()
            block, start = [], number
            if heading:
                section = heading[1]
            if line.lstrip().startswith("#"):
                continue
        if line.strip():
            if not block:
                start = number
            block.append(line)
    flush()
    return found


__all__ = [
    "CLOSEST_MIN_RATIO",
    "Mention",
    "PassageCheck",
    "check_quote",
    "check_sentence",
    "find_mentions",
    "normalise",
]
