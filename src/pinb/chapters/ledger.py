"""A chapter's claim ledger as data: `ledger.yaml` in the chapter's folder, validated here.

The ledger is what an author edits: the chapter's id, number, title and notebook, which text file of the book it
quotes, the sections its notebook groups claims under, and one entry per claim (its id, the quoted sentence(s),
where they stand, runnable or reported, which experiment of the chapter's folder checks it and which backends
can). A mistake is reported as one line naming the file and the claim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pinb.claims import Chapter, Claim, validate_chapter_id
from pinb.errors import UsageError
from pinb.files import FileError, read_text

LEDGER_FILE = "ledger.yaml"

_STRICT = ConfigDict(frozen=True, extra="forbid")


class LedgerError(UsageError):
    """A ledger that does not validate: the message names the file and, where it can, the claim."""


class TextSource(BaseModel):
    """Where the chapter's text is in the book directory: a file, optionally cut between two marker lines."""

    model_config = _STRICT

    file: str = Field(min_length=1)
    """A file name relative to the book directory, e.g. `ch01-the-loop-you-are-writing-for.txt`."""
    start: str | None = None
    """The text starts after the first line containing this marker (e.g. an excerpt inside a brief)."""
    end: str | None = None
    """The text ends before the first line, after the start, containing this marker."""


class Section(BaseModel):
    """A notebook section: the claims whose location starts with `starts` are grouped under `title`."""

    model_config = _STRICT

    starts: str = Field(min_length=1)
    title: str = Field(min_length=1)


class Ledger(BaseModel):
    """A chapter's ledger file."""

    model_config = _STRICT

    id: str
    number: str = Field(pattern=r"^[0-9A-Z][0-9A-Za-z]*$")
    title: str = Field(min_length=1)
    notebook: str = Field(min_length=1)
    text: TextSource
    also_quoted_from: tuple[TextSource, ...] = ()
    """Other renderings of the same chapter that quotes may come from (e.g. one that keeps the tables)."""
    intro: str = ""
    """What the notebook says under its title (markdown)."""
    sections: tuple[Section, ...] = ()
    claims: tuple[Claim, ...] = ()
    """Each claim as the ledger states it (its `chapter` is this ledger's id)."""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        try:
            return validate_chapter_id(value)
        except UsageError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="before")
    @classmethod
    def _chapter_of_claims(cls, raw: Any) -> Any:
        """Each claim belongs to this chapter: the ledger states it once, at the top."""
        if isinstance(raw, dict) and isinstance(raw.get("claims"), list):
            claims = [{**c, "chapter": raw.get("id")} if isinstance(c, dict) else c for c in raw["claims"]]
            return {**raw, "claims": claims}
        return raw

    @model_validator(mode="after")
    def _claims(self) -> Ledger:
        prefix = self.claim_prefix
        seen: set[str] = set()
        for claim in self.claims:
            if not claim.id.startswith(prefix):
                raise ValueError(f"claim {claim.id}: ids of this chapter start with {prefix!r}")
            if claim.id in seen:
                raise ValueError(f"claim {claim.id} is listed twice")
            if claim.kind == "runnable" and not claim.experiment_name:
                raise ValueError(f"claim {claim.id}: a runnable claim names the experiment that checks it")
            seen.add(claim.id)
        return self

    @property
    def claim_prefix(self) -> str:
        """`pi-16-chapter` → `pi-16.`: every claim id of the chapter starts with it."""
        return self.id.removesuffix("-chapter") + "."

    def claim(self, claim_id: str) -> Claim | None:
        return next((c for c in self.claims if c.id == claim_id), None)

    def section_of(self, claim: Claim) -> str:
        return next((s.title for s in self.sections if claim.location.startswith(s.starts)), "Other claims")

    def to_chapter(self, text_fingerprint: str = "", text_note: str = "", code_fingerprint: str = "") -> Chapter:
        """The kit's view of this chapter (with what was read of its text and code)."""
        return Chapter(
            id=self.id,
            number=self.number,
            title=self.title,
            notebook=self.notebook,
            text_fingerprint=text_fingerprint,
            text_note=text_note,
            code_fingerprint=code_fingerprint,
            claims=self.claims,
        )


def _where(raw: Any, loc: tuple[Any, ...]) -> str:
    """`claim pi-16.guard.x` for an error inside the claims list, else the field path."""
    if len(loc) >= 2 and loc[0] == "claims" and isinstance(loc[1], int):
        claims = raw.get("claims") if isinstance(raw, dict) else None
        entry = claims[loc[1]] if isinstance(claims, list) and loc[1] < len(claims) else None
        name = entry.get("id") if isinstance(entry, dict) and entry.get("id") else f"#{loc[1] + 1}"
        field = ".".join(str(part) for part in loc[2:] if not str(part).startswith(("str", "tuple")))
        return f"claim {name}" + (f" ({field})" if field else "")
    return ".".join(str(part) for part in loc)


def parse_ledger(raw: Any, source: str) -> Ledger:
    """Validate ledger data read from `source`; a `LedgerError` names the file and the claim when it is wrong."""
    if not isinstance(raw, dict):
        raise LedgerError(f"{source}: a ledger is a mapping with id, number, title, notebook, text and claims")
    try:
        return Ledger.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        where = _where(raw, tuple(first["loc"]))
        if not where and not message.startswith("claim "):
            where = "the ledger"
        raise LedgerError(f"{source}: {where + ': ' if where else ''}{message}{more}") from None


#: A chapter's ledger is a few hundred lines; anything this large is not one.
LEDGER_LIMIT = 4 * 1024 * 1024


def load_ledger(path: Path) -> Ledger:
    try:
        text = read_text(path, limit=LEDGER_LIMIT, what="ledger")
        raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except FileError as exc:
        raise LedgerError(str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise LedgerError(f"{path}:{where} is not valid YAML: {getattr(exc, 'problem', exc)}") from None
    return parse_ledger(raw, str(path))


__all__ = [
    "LEDGER_FILE",
    "Ledger",
    "LedgerError",
    "Section",
    "TextSource",
    "load_ledger",
    "parse_ledger",
]
