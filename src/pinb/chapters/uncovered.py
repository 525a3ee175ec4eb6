"""The chapter text no claim covers: what `pinb claims uncovered CH` lists, so an author sees what the ledger
leaves out.

Every claim marks the text it covers: the phrases its check tests (`covers`, where the ledger gives them), else
its quoted passages, and the passages and fields its evidence scopes check (a declarations scope's field names,
inside the claim's own quote: a table row's Shape cell). What is left is cut at sentence ends
(and at the `|` of a table, where the text keeps them); a fragment of fewer than `MIN_WORDS` words, or one that is
a section heading of the ledger, is not listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pinb.chapters.ledger import Ledger
from pinb.claims import Claim
from pinb.fingerprints import normalise

MIN_WORDS = 3
_BREAK = re.compile(r"(?<=[.!?:])\s+|\s*\|\s*|\s+(?=(?:Wrong|Correct):)")
_WORD = re.compile(r"[A-Za-z0-9_]{2,}")


@dataclass(frozen=True)
class Uncovered:
    text: str
    start: int
    """Offset in the normalised chapter text."""


def covered_phrases(claim: Claim) -> list[str]:
    """The passages a claim covers: its `covers` phrases (when the ledger gives them) or quotes, and its
    documentation scopes' quotes."""
    covers = [str(phrase) for phrase in getattr(claim, "covers", ()) or ()]
    phrases = covers or list(claim.quotes)
    if claim.scopes is not None:
        phrases += [quote for doc in claim.scopes.documentation for quote in doc.quotes]
    return phrases


def uncovered(ledger: Ledger, text: str) -> list[Uncovered]:
    flat = normalise(text)
    mask = [False] * len(flat)

    def mark(phrase: str, lo: int = 0, hi: int | None = None) -> None:
        wanted = normalise(phrase)
        start = flat.find(wanted, lo, hi)
        while wanted and start >= 0:
            mask[start : start + len(wanted)] = [True] * len(wanted)
            start = flat.find(wanted, start + 1, hi)

    for claim in ledger.claims:
        for phrase in covered_phrases(claim):
            mark(phrase)
        fields = [f for d in (claim.scopes.declarations if claim.scopes else ()) for f in d.fields]
        for quote in claim.quotes if fields else ():
            at = flat.find(normalise(quote))
            for name in fields if at >= 0 else ():
                mark(name, at, at + len(normalise(quote)))
    headings = {normalise(section.starts) for section in ledger.sections}
    found: list[Uncovered] = []
    seen: set[str] = set()
    index = 0
    while index < len(flat):
        if mask[index]:
            index += 1
            continue
        end = index
        while end < len(flat) and not mask[end]:
            end += 1
        for fragment in _fragments(flat[index:end], index, headings):
            if fragment.text not in seen:  # a passage the text repeats (another rendering) is listed once
                seen.add(fragment.text)
                found.append(fragment)
        index = end
    return found


def _fragments(span: str, offset: int, headings: set[str]) -> list[Uncovered]:
    out: list[Uncovered] = []
    position = 0
    for piece in _BREAK.split(span):
        at = span.find(piece, position)
        position = at + len(piece)
        text = piece.strip(" .,;")
        for heading in headings:
            if text.startswith(heading + " ") or text == heading:
                text = text[len(heading) :].strip()
        if len(_WORD.findall(text)) >= MIN_WORDS:
            out.append(Uncovered(text=text, start=offset + at))
    return out


__all__ = ["MIN_WORDS", "Uncovered", "covered_phrases", "uncovered"]
