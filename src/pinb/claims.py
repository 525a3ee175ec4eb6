"""Claims of the book and the one call a notebook makes to record what it observed about each.

A `Claim` is a sentence (or a few) of a chapter that can be true or false of Pi. A notebook checks a runnable
claim with `check(...)` or the `checking(...)` context manager; either records a `ClaimOutcome` and *displays* it
as an output with the MIME type `application/vnd.pinb.claim+json`, so the executed notebook is itself the
evidence. The kit reads those outputs back into the run record; nothing is ever typed into a ledger by hand.

Outcomes as stored: `holds` (observed as the book says), `contradicted` (observed otherwise: a finding, never
hidden), `error` (the check could not finish: an exception, or nothing recorded; never counts as holding),
`skipped` (the check does not apply on this backend, with the reason), `not-exercised` (the check ran, but no
witness exercised the sentence: it says nothing of it, and is never counted as holding). A person reads them in
the one vocabulary of status and reports (`VERDICT`): OBSERVED, CONTRADICTED, NOT EXERCISED, ERROR, UNRUN (and
STALE, which only status can say). A claim checked as a property also records its structured observation: the
premise, expected and observed values in words, the parts of the sentence it covers and leaves uncovered, each
witness's verdict and, for a contradiction, the minimal counterexample. An OBSERVED check with uncovered parts
reads "OBSERVED (partial: …)" wherever it is shown (`verdict_label`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from pinb.backends import FAMILIES, LABEL_RE, Backend
from pinb.errors import ExperimentFault, UsageError

#: MIME type of a claim outcome display output; its data is `ClaimOutcome.model_dump(mode="json")`.
CLAIM_MIME = "application/vnd.pinb.claim+json"

#: A claim id: the chapter's short prefix, then dot-separated slugs (`pi-16.guard.blocks-force-push`).
CLAIM_ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$")
#: A chapter's stable id (`pi-16-chapter`); used as a folder name under `runs/`, so slugs only.
CHAPTER_ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: A backend as recorded: `standin` or `pi@<version>` (`pinb.backends.Backend`); a claim names backend families.
BACKEND_RE = LABEL_RE
BACKEND_FAMILIES = FAMILIES

Kind = Literal["runnable", "reported"]
#: What a claim's experiment needs: pi-agent-core alone, a session, the published packages (`none`: reported).
Layer = Literal["agent", "app", "package", "none"]
Outcome = Literal["holds", "contradicted", "error", "skipped", "not-exercised"]
#: What a person reads, everywhere: notebooks, `pinb runs list`, `pinb status`, reports.
Verdict = Literal["OBSERVED", "CONTRADICTED", "NOT EXERCISED", "ERROR", "STALE", "UNRUN"]
VERDICTS: tuple[Verdict, ...] = ("OBSERVED", "CONTRADICTED", "NOT EXERCISED", "ERROR", "STALE", "UNRUN")
#: A stored outcome in the vocabulary a person reads.
VERDICT: dict[Outcome, Verdict] = {
    "holds": "OBSERVED",
    "contradicted": "CONTRADICTED",
    "error": "ERROR",
    "skipped": "UNRUN",
    "not-exercised": "NOT EXERCISED",
}
#: A witness's status (`pinb.chapters.properties`) as a stored outcome.
OUTCOME_OF: dict[str, Outcome] = {verdict: outcome for outcome, verdict in VERDICT.items()}
WitnessStatus = Literal["OBSERVED", "CONTRADICTED", "NOT EXERCISED", "ERROR"]


def verdict_label(verdict: str, uncovered: Sequence[str] = ()) -> str:
    """`OBSERVED (partial: not covered: “…”; “…”)` for an observed check that leaves parts of the sentence
    untested; any other verdict as it is."""
    if verdict != "OBSERVED" or not uncovered:
        return verdict
    return "OBSERVED (partial: not covered: " + "; ".join(f"“{part}”" for part in uncovered) + ")"


_FROZEN = ConfigDict(frozen=True, extra="forbid")


def validate_claim_id(value: str) -> str:
    if not isinstance(value, str) or not CLAIM_ID_RE.match(value):
        raise UsageError(f"invalid claim id {value!r}: use dot-separated lowercase slugs like 'pi-16.guard.blocks'")
    return value


def validate_chapter_id(value: str) -> str:
    if not isinstance(value, str) or not CHAPTER_ID_RE.match(value):
        raise UsageError(f"invalid chapter id {value!r}: use a lowercase slug like 'pi-16-chapter'")
    return value


def backend_family(backend: str) -> str:
    """`pi@1.6.0` → `pi`; `standin` → `standin`."""
    return backend.split("@", 1)[0]


class DocumentationScope(BaseModel):
    """A passage of the chapter that quotes or attributes a file of Pi's published package, checked in each release."""

    model_config = _FROZEN

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

    model_config = _FROZEN

    symbol: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The exported interface or type alias, e.g. `ToolResultEvent`."""
    fields: tuple[str, ...] = Field(min_length=1)
    """The fields the chapter names, as it writes them (`images?` says the field is optional)."""


class Scopes(BaseModel):
    """What a claim is checked against besides behaviour: Pi's documents and its type declarations."""

    model_config = _FROZEN

    documentation: tuple[DocumentationScope, ...] = ()
    declarations: tuple[DeclarationsScope, ...] = ()


class Claim(BaseModel):
    """One claim of a chapter: the sentence(s) quoted, located and classified, as its ledger entry states it.

    A chapter's ledger (`pinb.chapters.ledger`) validates its entries into `Claim`s, and the registry resolves each
    once (`pinb.chapters.registry.claim(id)`), binding it to its chapter folder: the claim then owns its
    `experiment` (found on first use), its `property`, and says why a backend cannot check it (`unrun`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    #: Stable id, `<chapter prefix>.<topic>.<slug>`, e.g. `pi-16.guard.blocks-force-push`.
    id: str
    #: The chapter's stable id, e.g. `pi-16-chapter`.
    chapter: str
    #: The sentence(s) of the chapter that make the claim, verbatim; a list when it quotes several passages.
    quote: str | tuple[str, ...]
    #: Where the quote stands: section heading and paragraph (¶) or bullet, e.g. `The guard ¶3`.
    location: str = Field(min_length=1)
    #: `runnable`: a notebook can observe it; `reported`: it can only be reported (see `reason`).
    kind: Kind = "runnable"
    #: Why a reported claim cannot be run (required for `reported`); optional note for a runnable one.
    reason: str = ""
    #: The name of the experiment in the chapter folder's `experiments.EXPERIMENTS` (the ledger's `experiment`).
    experiment_name: str | None = Field(default=None, alias="experiment")
    #: Backend families that can check it: `standin` and/or `pi` (default: both for a runnable claim, none for a
    #: reported one).
    backends: tuple[str, ...] = ("standin", "pi")
    #: What the experiment needs: `agent` (pi-agent-core alone), `app` (a session), `package` (the published
    #: packages). Default: `app` for a runnable claim, `none` for a reported one.
    layer: Layer = "app"
    #: What the experiment covers and does not, shown under the quote.
    notes: tuple[str, ...] = ()
    #: Named faults of the stand-in (`pinb.testing.faults`) under which this claim's check must not say OBSERVED;
    #: `pinb claims check-judges` runs them.
    faults: tuple[str, ...] = ()
    #: The parts of the quoted sentence(s) the check tests, each a phrase copied from the quote.
    covers: tuple[str, ...] = ()
    #: The parts it does not test (phrases from the quote): a check with any is shown as "OBSERVED (partial: …)".
    uncovered: tuple[str, ...] = ()
    #: Evidence scopes besides behaviour (`pinb scopes refresh` checks them in every release's tarball).
    scopes: Scopes | None = None
    #: The author's concern about the claim, its priority and the proposed response (the research brief's claim
    #: audit; "[author]" when empty).
    concern: str = ""
    priority: str = ""
    response: str = ""

    #: The chapter folder the registry resolved this claim in (finds its experiment); None outside a registry.
    _folder: Any = PrivateAttr(default=None)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _as_value_error(validate_claim_id, value)

    @field_validator("chapter")
    @classmethod
    def _chapter(cls, value: str) -> str:
        return _as_value_error(validate_chapter_id, value)

    @field_validator("quote")
    @classmethod
    def _quote(cls, value: str | tuple[str, ...]) -> str | tuple[str, ...]:
        parts = (value,) if isinstance(value, str) else value
        if not parts or not all(part.strip() for part in parts):
            raise ValueError("quote must be the chapter's sentence(s), not empty")
        return value

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, raw: Any) -> Any:
        """A reported claim runs nowhere: no backends unless it names some (which it may not), layer `none`."""
        if isinstance(raw, dict) and raw.get("kind") == "reported":
            return {"backends": (), **raw, "layer": "none"}
        return raw

    @field_validator("backends")
    @classmethod
    def _backends(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [b for b in value if b not in BACKEND_FAMILIES]
        if unknown:
            raise ValueError(f"unknown backend(s) {unknown}; use {BACKEND_FAMILIES}")
        return value

    @model_validator(mode="after")
    def _kind(self) -> Claim:
        if self.kind == "reported":
            if not self.reason.strip():
                raise ValueError(f"reported claim {self.id} needs the reason it cannot be run")
            if self.backends or self.experiment_name or self.faults or self.covers or self.uncovered:
                raise ValueError("a reported claim names no backends, experiment, faults, covers or uncovered")
            return self
        if not self.backends:
            raise ValueError(f"runnable claim {self.id} must name at least one backend")
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
    def text(self) -> str:
        """The quote as one string (several passages joined by ` … `)."""
        return " … ".join(self.quotes)

    @property
    def partial(self) -> bool:
        """Whether the check leaves parts of the sentence untested (its verdict reads "OBSERVED (partial: …)")."""
        return bool(self.uncovered)

    def __eq__(self, other: object) -> bool:
        """Claims are equal when they state the same (the folder a registry bound one to is not part of it)."""
        if not isinstance(other, Claim):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((self.chapter, self.id))

    def bind(self, folder: Any) -> Claim:
        """Resolve the claim in its chapter folder (`folder.experiments()` names its experiments); the registry
        does this once per claim."""
        self._folder = folder
        return self

    @property
    def experiment(self) -> Any | None:
        """The experiment the ledger names (None for a reported claim, a name the chapter does not define, or a
        claim no registry resolved)."""
        if self._folder is None or not self.experiment_name:
            return None
        return self._folder.experiments().get(self.experiment_name)

    @property
    def property(self) -> Any | None:
        """The claim's property (`pinb.chapters.properties.Property`) on the stand-in, else on Pi; None when it
        has no experiment."""
        experiment = self.experiment
        if experiment is None:
            return None
        found = experiment.on("standin") or experiment.on("pi")
        return getattr(found, "property", None)

    def unrun(self, backend: str, pi_version: str | None = None) -> str | None:
        """Why this claim cannot be checked on `backend` (`standin` or `pi` with its version), or None when it can."""
        if self.kind == "reported":
            return f"reported, not run: {self.reason}"
        if backend not in self.backends:
            note = f" ({self.notes[0]})" if self.notes else ""
            return f"the {backend} backend cannot check this claim; it is checked on {', '.join(self.backends)}{note}"
        ok, why = Backend(backend, pi_version).supports(self.layer)  # type: ignore[arg-type]
        if not ok:
            return why
        experiment = self.experiment
        if experiment is None:
            return "no experiment is written for this claim yet"
        return experiment.unrun(backend)


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


class Chapter(BaseModel):
    """A chapter as the registry describes it: its notebook and its claims."""

    model_config = _FROZEN

    #: The book's stable id, e.g. `pi-16-chapter`.
    id: str
    #: The chapter number as printed, e.g. `16`.
    number: str
    title: str
    #: The chapter notebook, relative to the project root, e.g. `notebooks/16-chapter.ipynb`.
    notebook: str
    #: sha256 of the chapter text as read now (`pinb.fingerprints`); empty when the text is not available.
    text_fingerprint: str
    claims: tuple[Claim, ...] = ()
    #: What a reader must know about the text: empty when it was read and holds every quote; otherwise that it is
    #: not available, or which quotes it no longer holds.
    text_note: str = ""
    #: sha256 of the code this chapter's verdicts depend on (`pinb.fingerprints.code_fingerprint`); empty: all of
    #: pinb's source counts.
    code_fingerprint: str = ""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _as_value_error(validate_chapter_id, value)

    @model_validator(mode="after")
    def _claims(self) -> Chapter:
        seen: set[str] = set()
        for claim in self.claims:
            if claim.chapter != self.id:
                raise ValueError(f"claim {claim.id} belongs to {claim.chapter}, not {self.id}")
            if claim.id in seen:
                raise ValueError(f"claim {claim.id} is listed twice")
            seen.add(claim.id)
        return self

    def claim(self, claim_id: str) -> Claim | None:
        return next((c for c in self.claims if c.id == claim_id), None)


def printable(text: str) -> str:
    """`text` with any lone surrogate (a JavaScript slice through an emoji, as observed) written as `\\udXXX`, so
    the words can be printed and stored as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(text, str) else text


class WitnessRecord(BaseModel):
    """What one witness said of a claim's sentence (`pinb.chapters.properties.WitnessVerdict`, as recorded)."""

    model_config = _FROZEN

    name: str = Field(min_length=1)
    status: WitnessStatus
    premise: str = ""
    expected: str = ""
    observed: str = ""

    @field_validator("premise", "expected", "observed", mode="before")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        return printable(value)


class ClaimOutcome(BaseModel):
    """What one check observed about one claim.

    The structured fields (premise … counterexample) are empty for checks that are not properties, and in the
    records of runs made before claims were checked as properties: those still load and verify."""

    model_config = _FROZEN

    claim_id: str
    outcome: Outcome
    #: What was observed, short and specific (the value, the event order, the error text).
    evidence: str
    #: Anything longer: the exact comparison, the trace line, the traceback's last line.
    detail: str = ""
    #: The backend the check ran on (`standin` or `pi@<version>`); `None` when the notebook did not say.
    backend: str | None = None
    #: What in the witnesses exercises the sentence, or what is missing (the hand witness's, else the first's).
    premise: str = ""
    #: The value the sentence makes us expect, in words (derived from the witness's inputs or the chapter text).
    expected: str = ""
    #: The value the traces show, in words.
    observed: str = ""
    #: The parts of the quoted sentence the check tests (the ledger's `covers`).
    covers: tuple[str, ...] = ()
    #: The parts it does not test (the ledger's `uncovered`): an OBSERVED outcome with any is partial.
    uncovered: tuple[str, ...] = ()
    #: Each witness's verdict: the hand-written one (or the reader's edit), then the generated ones.
    witnesses: tuple[WitnessRecord, ...] = ()
    #: For a contradiction on a generated witness: the minimal witness (scenario name → scenario) it shrank to.
    counterexample: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _without_empty_structure(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The structured fields are written only when the check set them: a check that is not a property records
        (and a run record stores) exactly what it always did."""
        data: dict[str, Any] = handler(self)
        for name in _STRUCTURE:
            if not getattr(self, name):
                data.pop(name, None)
        return data

    @property
    def verdict(self) -> str:
        """The outcome as a person reads it, `OBSERVED (partial: …)` included."""
        return verdict_label(VERDICT[self.outcome], self.uncovered)

    @field_validator("claim_id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _as_value_error(validate_claim_id, value)

    @field_validator("evidence", "detail", "premise", "expected", "observed", mode="before")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        return printable(value)

    @field_validator("backend")
    @classmethod
    def _backend(cls, value: str | None) -> str | None:
        if value is not None and not BACKEND_RE.match(value):
            raise ValueError(f"invalid backend {value!r}: use 'standin' or 'pi@<version>'")
        return value


_STRUCTURE = ("premise", "expected", "observed", "covers", "uncovered", "witnesses", "counterexample")


def _as_value_error(fn: Any, value: str) -> str:
    try:
        return fn(value)
    except UsageError as exc:  # pydantic reports ValueError as a validation error
        raise ValueError(str(exc)) from None


# --- the notebook API -------------------------------------------------------------------------------------------

_backend: str | None = None
_recorded: list[ClaimOutcome] = []


def use_backend(backend: str, pi_version: str | None = None) -> str:
    """Say which backend this notebook runs on (call it right after the parameters cell).

    `use_backend("standin")`, `use_backend("pi", "1.6.0")` or `use_backend("pi@1.6.0")`. Returns the recorded form.
    """
    global _backend
    if backend == "pi" and not pi_version:
        raise UsageError("invalid backend 'pi': use 'standin' or 'pi' with a version")
    name = Backend.parse(backend, pi_version).label
    _backend = name
    return name


def recorded() -> tuple[ClaimOutcome, ...]:
    """The outcomes recorded in this process so far, in order."""
    return tuple(_recorded)


def check(claim_id: str, holds: bool, evidence: str, detail: str = "", *, backend: str | None = None) -> ClaimOutcome:
    """Record whether a claim held, with the evidence, and display it. Returns the outcome.

    `holds=False` records `contradicted`: the book's claim is false here. That is a finding, not a failure of the
    notebook, so the notebook carries on.
    """
    if not isinstance(holds, bool):
        raise UsageError(f"check({claim_id!r}) needs holds=True or holds=False, not {holds!r}")
    return _record(claim_id, "holds" if holds else "contradicted", evidence, detail, backend)


def skip(claim_id: str, reason: str, *, backend: str | None = None) -> ClaimOutcome:
    """Record that a claim cannot be checked on this backend, with the reason."""
    return _record(claim_id, "skipped", reason, "", backend)


class ClaimCheck:
    """Handed out by `checking()`: record exactly one of `holds(...)` or `contradicted(...)`."""

    def __init__(self, claim_id: str, backend: str | None) -> None:
        self.claim_id = claim_id
        self.backend = backend
        self.outcome: ClaimOutcome | None = None
        self._pending: tuple[Outcome, str, str] | None = None
        self._structure: dict[str, Any] = {}

    def holds(self, evidence: str, detail: str = "") -> None:
        self._set("holds", evidence, detail)

    def contradicted(self, evidence: str, detail: str = "") -> None:
        self._set("contradicted", evidence, detail)

    def check(self, holds: bool, evidence: str, detail: str = "") -> None:
        if not isinstance(holds, bool):
            raise UsageError(f"check({self.claim_id!r}) needs holds=True or holds=False, not {holds!r}")
        self._set("holds" if holds else "contradicted", evidence, detail)

    def observed(self, outcome: Outcome, evidence: str, detail: str = "", **structure: Any) -> None:
        """Record a property's outcome with its structured observation (`ClaimOutcome`'s premise … counterexample)."""
        if outcome == "skipped":
            raise UsageError(f"claim {self.claim_id}: a check that ran records holds, contradicted, not-exercised")
        self._set(outcome, evidence, detail)
        self._structure = structure

    def _set(self, outcome: Outcome, evidence: str, detail: str) -> None:
        if self._pending is not None:
            raise UsageError(f"claim {self.claim_id} already has an outcome in this check; record one only")
        _require_evidence(self.claim_id, evidence)
        self._pending = (outcome, evidence, detail)


@contextmanager
def checking(claim_id: str, *, backend: str | None = None) -> Iterator[ClaimCheck]:
    """Check a claim in a block. The outcome is recorded when the block ends:

    - the block recorded `holds`/`contradicted` and finished → that outcome;
    - the block raised → `error` with the exception text (even if it had recorded `holds` first);
    - the block recorded nothing → `error`, "no outcome recorded".

    An exception inside the block is recorded, displayed and then swallowed so the notebook checks the next claim;
    `KeyboardInterrupt` and other non-`Exception`s still propagate, and so does an `ExperimentFault` (a killed or
    timed-out process) once its ERROR is recorded: a fault fails the run instead of standing as a result.
    """
    validate_claim_id(claim_id)
    handle = ClaimCheck(claim_id, backend)
    try:
        yield handle
    except ExperimentFault as exc:
        # Not a result about the claim: recorded as ERROR, and the run fails (findings of earlier runs stay).
        handle.outcome = _record(claim_id, "error", f"{type(exc).__name__}: {exc}", _exception_detail(exc), backend)
        raise
    except Exception as exc:
        handle.outcome = _record(claim_id, "error", f"{type(exc).__name__}: {exc}", _exception_detail(exc), backend)
        return
    if handle._pending is None:
        handle.outcome = _record(claim_id, "error", "no outcome recorded", "", backend)
    else:
        outcome, evidence, detail = handle._pending
        handle.outcome = _record(claim_id, outcome, evidence, detail, backend, handle._structure)


def _exception_detail(exc: BaseException) -> str:
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f"raised at {last.filename}:{last.lineno} in {last.name}"


def _require_evidence(claim_id: str, evidence: str) -> None:
    if not isinstance(evidence, str) or not evidence.strip():
        raise UsageError(f"claim {claim_id}: evidence must say what was observed (a non-empty string)")


def _record(
    claim_id: str,
    outcome: Outcome,
    evidence: str,
    detail: str,
    backend: str | None,
    structure: dict[str, Any] | None = None,
) -> ClaimOutcome:
    validate_claim_id(claim_id)
    _require_evidence(claim_id, evidence)
    result = ClaimOutcome(
        claim_id=claim_id,
        outcome=outcome,
        evidence=evidence,
        detail=str(detail),
        backend=backend or _backend,
        **(structure or {}),
    )
    _recorded.append(result)
    _display(result)
    return result


_SYMBOL = {"holds": "✔", "contradicted": "✘", "error": "⚠", "skipped": "–", "not-exercised": "○"}
_COLOUR = {
    "holds": "#1a7f37",
    "contradicted": "#cf222e",
    "error": "#9a6700",
    "skipped": "#57606a",
    "not-exercised": "#57606a",
}


def structure_lines(outcome: ClaimOutcome) -> list[str]:
    """The structured observation in lines a reader reads (none for a check that is not a property)."""
    lines = []
    if outcome.premise:
        lines.append(f"premise: {outcome.premise}")
    if outcome.covers:
        lines.append("covers: " + "; ".join(f"“{part}”" for part in outcome.covers))
    if outcome.witnesses:
        counts: dict[str, int] = {}
        for witness in outcome.witnesses:
            counts[witness.status] = counts.get(witness.status, 0) + 1
        said = ", ".join(f"{counts[status]} {status}" for status in VERDICTS if status in counts)
        lines.append(f"witnesses: {len(outcome.witnesses)} ({said})")
        lines += [
            f"  {witness.name}: {witness.status}: {_witness_words(witness)}"
            for witness in outcome.witnesses
            if witness.status != "OBSERVED"
        ]
    if outcome.counterexample is not None:
        lines.append("counterexample (the minimal witness): " + ", ".join(sorted(outcome.counterexample)))
    return lines


def _witness_words(witness: WitnessRecord) -> str:
    if witness.status in ("NOT EXERCISED", "ERROR"):
        return witness.premise
    return f"expected {witness.expected}; observed {witness.observed}"


def render_text(outcome: ClaimOutcome) -> str:
    line = f"{_SYMBOL[outcome.outcome]} {outcome.verdict} {outcome.claim_id}: {outcome.evidence}"
    more = structure_lines(outcome) + ([outcome.detail] if outcome.detail else [])
    return "\n".join([line, *(f"    {text}" for text in more)])


def render_html(outcome: ClaimOutcome) -> str:
    more = structure_lines(outcome) + ([outcome.detail] if outcome.detail else [])
    detail = "".join(f"<br><small>{html.escape(text)}</small>" for text in more)
    return (
        f'<div class="pinb-claim pinb-{outcome.outcome}" style="border-left:4px solid {_COLOUR[outcome.outcome]};'
        f'padding:2px 8px"><b>{_SYMBOL[outcome.outcome]} {html.escape(outcome.verdict)}</b> '
        f"<code>{html.escape(outcome.claim_id)}</code>: {html.escape(outcome.evidence)}{detail}</div>"
    )


def mime_bundle(outcome: ClaimOutcome) -> dict[str, Any]:
    return {
        CLAIM_MIME: outcome.model_dump(mode="json"),
        "text/plain": render_text(outcome),
        "text/html": render_html(outcome),
    }


def _display(outcome: ClaimOutcome) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python without IPython: the text rendering is the evidence
        print(render_text(outcome))
        return
    if get_ipython() is None:
        print(render_text(outcome))
    else:
        display(mime_bundle(outcome), raw=True)
