"""A chapter's claim ledger as data: `ledger.yaml` in the chapter's folder, validated here.

The ledger is what an author edits: the chapter's id, number, title and notebook, which text file of the book it
quotes, the sections its notebook groups claims under, and one entry per claim (its id, the quoted sentence(s),
where they stand, runnable or reported, which experiment of the chapter's folder checks it and which backends
can). A mistake is reported as one line naming the file and the claim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pinb.claims import Chapter, Claim, validate_chapter_id, validate_claim_id
from pinb.errors import UsageError

LEDGER_FILE = "ledger.yaml"
BackendFamily = Literal["standin", "pi"]
Layer = Literal["agent", "app", "package", "none"]

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


class DocumentationScope(BaseModel):
    """A passage of the chapter that quotes or attributes a file of Pi's published package, checked in each release."""

    model_config = _STRICT

    file: str = Field(pattern=r"^[A-Za-z0-9_./-]+\.md$")
    """The file inside the package, e.g. `docs/extensions.md` or `CHANGELOG.md`."""
    quotes: tuple[str, ...] = ()
    """Chapter text the chapter attributes to the file: each must be in it verbatim (after normalisation)."""
    mentions: tuple[str, ...] = ()
    """Words a passage of the file must all contain (e.g. a changelog entry a reason depends on)."""

    @model_validator(mode="after")
    def _what(self) -> DocumentationScope:
        if not self.quotes and not self.mentions:
            raise ValueError(f"a documentation scope of {self.file} names the quotes or the mentions it looks for")
        return self


class DeclarationsScope(BaseModel):
    """A type of Pi's published `.d.ts` whose shape the chapter states: the fields it names, checked per release."""

    model_config = _STRICT

    symbol: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The exported interface or type alias, e.g. `ToolResultEvent`."""
    fields: tuple[str, ...] = Field(min_length=1)
    """The fields the chapter names, as it writes them (`images?` says the field is optional)."""


class Scopes(BaseModel):
    """What a claim is checked against besides behaviour: Pi's documents and its type declarations."""

    model_config = _STRICT

    documentation: tuple[DocumentationScope, ...] = ()
    declarations: tuple[DeclarationsScope, ...] = ()


class ClaimEntry(BaseModel):
    """One claim as the ledger states it."""

    model_config = _STRICT

    id: str
    quote: str | tuple[str, ...]
    """The sentence(s) of the chapter, verbatim; a list when the claim quotes several passages."""
    location: str = Field(min_length=1)
    """Section heading and paragraph (¶) or bullet, e.g. `The guard ¶3`."""
    kind: Literal["runnable", "reported"] = "runnable"
    reason: str = ""
    """Why a reported claim cannot be run (required for `reported`)."""
    experiment: str | None = None
    """The name of the experiment in the chapter folder's `experiments.EXPERIMENTS` (required for `runnable`)."""
    backends: tuple[BackendFamily, ...] | None = None
    """Which backends can check it (default: both for a runnable claim, none for a reported one)."""
    layer: Layer | None = None
    """What the experiment needs: `agent` (pi-agent-core alone), `app` (a session), `package` (the published
    packages). Default: `app` for a runnable claim, `none` for a reported one."""
    notes: tuple[str, ...] = ()
    """What the experiment covers and does not, shown under the quote."""
    faults: tuple[str, ...] = ()
    """Named faults of the stand-in (`pinb.testing.faults`) under which this claim's judge must not say OBSERVED;
    `pinb claims check-judges` runs them. Every runnable claim the stand-in can check names at least one."""
    covers: tuple[str, ...] = ()
    """The parts of the quoted sentence(s) the check tests, each a phrase copied from the quote."""
    uncovered: tuple[str, ...] = ()
    """The parts it does not test (phrases from the quote): a check with any is shown as "OBSERVED (partial: …)"."""
    scopes: Scopes | None = None
    """Evidence scopes besides behaviour (`pinb reference scopes` checks them in every release's tarball)."""
    concern: str = ""
    """The author's concern about the claim (the research brief's claim audit; "[author]" when empty)."""
    priority: str = ""
    """The author's priority for it."""
    response: str = ""
    """The response the author proposes."""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        try:
            return validate_claim_id(value)
        except UsageError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("quote")
    @classmethod
    def _quote(cls, value: str | tuple[str, ...]) -> str | tuple[str, ...]:
        parts = (value,) if isinstance(value, str) else value
        if not parts or not all(part.strip() for part in parts):
            raise ValueError("quote must be the chapter's sentence(s), not empty")
        return value

    @model_validator(mode="after")
    def _kind(self) -> ClaimEntry:
        if self.kind == "reported":
            if not self.reason.strip():
                raise ValueError("a reported claim needs the reason it cannot be run")
            if self.backends or self.experiment or self.faults or self.covers or self.uncovered:
                raise ValueError("a reported claim names no backends, experiment, faults, covers or uncovered")
            object.__setattr__(self, "backends", ())
            object.__setattr__(self, "layer", "none")
        else:
            if not self.experiment:
                raise ValueError("a runnable claim names the experiment that checks it")
            if self.backends is None:
                object.__setattr__(self, "backends", ("standin", "pi"))
            if not self.backends:
                raise ValueError("a runnable claim names at least one backend")
            if self.layer is None:
                object.__setattr__(self, "layer", "app")
            if self.layer == "none":
                raise ValueError("a runnable claim's layer is agent, app or package")
            self._phrases_quoted()
        return self

    def _phrases_quoted(self) -> None:
        """Every `covers`/`uncovered` phrase is copied from the quote (spacing and case aside), and none is both."""
        quoted = _plain(" ".join(self.quotes))
        for name, phrases in (("covers", self.covers), ("uncovered", self.uncovered)):
            for phrase in phrases:
                if not phrase.strip():
                    raise ValueError(f"{name}: a phrase is empty")
                if _plain(phrase) not in quoted:
                    raise ValueError(f"{name}: {phrase!r} is not a phrase of the quote")
        both = {_plain(p) for p in self.covers} & {_plain(p) for p in self.uncovered}
        if both:
            raise ValueError(f"{sorted(both)[0]!r} is listed in both covers and uncovered")

    @property
    def quotes(self) -> tuple[str, ...]:
        return (self.quote,) if isinstance(self.quote, str) else self.quote

    @property
    def partial(self) -> bool:
        """Whether the check leaves parts of the sentence untested (its verdict reads "OBSERVED (partial: …)")."""
        return bool(self.uncovered)

    @property
    def text(self) -> str:
        """The quote as one string (several passages joined by ` … `)."""
        return " … ".join(self.quotes)


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
    claims: tuple[ClaimEntry, ...] = ()

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        try:
            return validate_chapter_id(value)
        except UsageError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _claims(self) -> Ledger:
        prefix = self.claim_prefix
        seen: set[str] = set()
        for claim in self.claims:
            if not claim.id.startswith(prefix):
                raise ValueError(f"claim {claim.id}: ids of this chapter start with {prefix!r}")
            if claim.id in seen:
                raise ValueError(f"claim {claim.id} is listed twice")
            seen.add(claim.id)
        return self

    @property
    def claim_prefix(self) -> str:
        """`pi-16-chapter` → `pi-16.`: every claim id of the chapter starts with it."""
        return self.id.removesuffix("-chapter") + "."

    def claim(self, claim_id: str) -> ClaimEntry | None:
        return next((c for c in self.claims if c.id == claim_id), None)

    def section_of(self, claim: ClaimEntry) -> str:
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
            claims=tuple(
                Claim(
                    id=c.id,
                    chapter=self.id,
                    quote=c.text,
                    location=c.location,
                    kind=c.kind,
                    reason=c.reason,
                    backends=c.backends or (),
                )
                for c in self.claims
            ),
        )


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def _where(raw: Any, loc: tuple[Any, ...]) -> str:
    """`claim pi-16.guard.x` for an error inside the claims list, else the field path."""
    if len(loc) >= 2 and loc[0] == "claims" and isinstance(loc[1], int):
        claims = raw.get("claims") if isinstance(raw, dict) else None
        entry = claims[loc[1]] if isinstance(claims, list) and loc[1] < len(claims) else None
        name = entry.get("id") if isinstance(entry, dict) and entry.get("id") else f"#{loc[1] + 1}"
        field = ".".join(str(part) for part in loc[2:] if not str(part).startswith(("str", "tuple")))
        return f"claim {name}" + (f" ({field})" if field else "")
    return ".".join(str(part) for part in loc) or "the ledger"


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
        raise LedgerError(f"{source}: {_where(raw, tuple(first['loc']))}: {message}{more}") from None


def load_ledger(path: Path) -> Ledger:
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError as exc:
        raise LedgerError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise LedgerError(f"{path}:{where} is not valid YAML: {getattr(exc, 'problem', exc)}") from None
    return parse_ledger(raw, str(path))


__all__ = [
    "LEDGER_FILE",
    "ClaimEntry",
    "DeclarationsScope",
    "DocumentationScope",
    "Ledger",
    "LedgerError",
    "Scopes",
    "Section",
    "TextSource",
    "load_ledger",
    "parse_ledger",
]
