"""A claim's sentence as a property over any witness: a premise, an expected value, an observed value.

A `Witness` is one situation the sentence is checked in: its scenarios (the inputs) and, once they ran, their
traces. A `Property` says, for any witness, whether it exercises the sentence at all (`premise`), what the
sentence makes us expect of it (`expected`, derived from the witness's own inputs or the chapter's text, never from
the code under test), and what the traces show (`observed`). `judge_witness` turns one witness into a
`WitnessVerdict`; `claim_status` turns the verdicts of several witnesses into the claim's status.

The hand-written witness (`Property.hand`) is the one the ledger's experiment has always run; `Property.family`
is a hypothesis strategy of witnesses around it (the domain the sentence quantifies over), written with `st`:
hypothesis's strategies, imported when a family is first drawn from, so a verify whose draws are kept
(`witnesses.planned_draws`) and a reader's notebook never import hypothesis. `@st.composite` defers too: the
decorated function becomes hypothesis's strategy on its first call. Type checkers see hypothesis's own module.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pinb.claims import WitnessStatus

if TYPE_CHECKING:
    from hypothesis import strategies as st
    from hypothesis.strategies import SearchStrategy

Trace = list[dict[str, Any]]
Params = Mapping[str, Any]
Scenarios = dict[str, dict[str, Any]]
#: A claim's check of one edited run: (the edited scenario, its trace lines) → (status, evidence).
EditJudge = Callable[[Mapping[str, Any], Sequence[Any]], tuple[str, str]]

#: What one witness says of the sentence.
WITNESS_STATUSES: tuple[WitnessStatus, ...] = ("OBSERVED", "CONTRADICTED", "NOT EXERCISED", "ERROR")


def to_words(value: Any) -> str:
    """A value as a reader reads it: a sequence as `a1 → a2 → b1`, a mapping as `key: value; …`, never a repr."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value if value else "(empty text)"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Mapping):
        if not value:
            return "none"
        return "; ".join(f"{to_words(key)}: {_nested(item)}" for key, item in value.items())
    if isinstance(value, set | frozenset):
        if not value:
            return "none"
        return ", ".join(sorted(_nested(item) for item in value))
    if isinstance(value, Sequence):
        if not value:
            return "none"
        return " → ".join(_nested(item) for item in value)
    return str(value)


def _nested(value: Any) -> str:
    """An item inside a sequence or mapping; a nested collection is bracketed so the outer one still reads."""
    words = to_words(value)
    if isinstance(value, Mapping | set | frozenset) or (isinstance(value, Sequence) and not isinstance(value, str)):
        return f"({words})" if value else words
    return words


@dataclass(frozen=True)
class Witness:
    """One situation the sentence is checked in: its scenarios (the inputs) and, once run, their traces."""

    name: str
    """`hand` (the ledger's hand-written witness), `gen-3` (a generated one), `edited` (the reader's edit), …"""
    scenarios: Mapping[str, Mapping[str, Any]]
    """Scenario name → scenario dict (the format of `scenarios/*.json`); empty for a claim that runs none."""
    traces: Mapping[str, Trace] = field(default_factory=dict)
    """Scenario name → trace, filled after running."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """The notebook's knobs (and, for a claim that runs no scenario, its inputs, e.g. `params["facts"]`)."""


@dataclass(frozen=True)
class Premise:
    """Whether a witness exercises the sentence, in words either way."""

    holds: bool
    says: str
    """What in this witness exercises the sentence ("tool_call: 4 handlers in 3 extensions"), or what is missing
    ("no event had handlers in two extensions")."""


@dataclass(frozen=True)
class Property:
    """A claim's sentence as a property over any witness."""

    hand: Callable[[Params], Scenarios]
    """The hand-written witness's scenarios, built from the notebook's knobs."""
    premise: Callable[[Witness], Premise]
    """Does this witness exercise the sentence? May read scenarios and traces."""
    expected: Callable[[Witness], Any]
    """From the witness's own scenarios and/or the chapter's text only; never via pinb.ai / agent / app code."""
    observed: Callable[[Witness], Any]
    """From the traces only."""
    family: Callable[[Params], SearchStrategy[Scenarios]] | None = None
    """A hypothesis strategy of witness scenario sets around the hand one; None only where the domain has one
    point (the claim's ledger then says so in its uncovered parts)."""
    agree: Callable[[Any, Any], bool] = operator.eq
    """`agree(expected, observed)`: does the observation bear the sentence out?"""
    words: Callable[[Any], str] = to_words
    """A value (expected or observed) in words a reader reads."""
    picture: str | None = None
    """Which scenario's trace the notebook draws (default: the first)."""


@dataclass(frozen=True)
class PropertyExperiment:
    """A claim's experiment stated as a property (registered in a chapter's `EXPERIMENTS` like the others)."""

    property: Property
    facts: Callable[[str], tuple[Any, str]] | None = None
    """For a claim judged from the published packages rather than scenarios: `facts(pi_version)` → (the facts,
    or None and why they cannot be had), loaded once per notebook and given to the witness as `params["facts"]`
    (the witness then has no scenarios; `Property.hand` returns `{}`)."""

    # The experiment kind's own `on / unrun / view / observe / edit_judge` (see `pinb.chapters.experiments`).

    def on(self, backend: str) -> PropertyExperiment | None:
        """What runs on this backend: the property, or nothing where its facts cannot be had."""
        return self if self.facts is None or backend == "pi" else None

    def unrun(self, backend: str) -> str | None:
        if self.facts is not None and backend != "pi":
            return "this property is judged from the published Pi packages' facts (pi backend)"
        return None

    def view(self, run: Any, claim_id: str, unrun: str | None) -> Any:
        from pinb.chapters.experiment_view import code_view, scenarios_view

        if self.facts is not None:
            what = "a property of the published Pi packages' facts (pi backend)"
            return code_view(claim_id, "package facts", self.property.expected, what, unrun)
        view = scenarios_view(claim_id, self.property.hand(run.knobs), unrun)
        if run.witnesses and self.property.family is not None:
            view.description += f"; then {run.witnesses} generated witnesses (seeded)"
        return view

    async def observe(self, run: Any, observation: Any, claim: Any, view: Any) -> Any:
        return await run._observe_scenarios_or_facts(observation, claim, self, view)

    def edit_judge(self, scenario: str | None, params: Params) -> EditJudge:
        """The property on one edited run standing in for the hand witness's scenario `scenario` (default: the one
        the notebook draws): NOT EXERCISED when the edit removed the premise."""
        if self.facts is not None:
            raise ValueError("this property is judged from package facts, so an edited scenario cannot be judged")
        prop = self.property
        name = scenario or prop.picture or next(iter(prop.hand(params)))

        def by_property(edited: Mapping[str, Any], lines: Sequence[Any]) -> tuple[str, str]:
            verdict = judge_witness(prop, Witness("edited", {name: dict(edited)}, {name: list(lines)}, params))
            return verdict.status, verdict.evidence

        return by_property


@dataclass(frozen=True)
class BookExampleExperiment:
    """A claim about a program the chapter prints: the program, run as printed by Node on the pi backend, and the
    sentence as a property of that run.

    The witness of `property` runs no scenario: its `params["run"]` is the program's run on the release
    (`pinb.scenario.reference.BookExampleRun`) and `params["release"]` the release. The stand-in runs no TypeScript:
    there the claim is checked by the property of the stand-in's port (`standin`), or stays UNRUN without one.
    """

    example: str
    """The program's name (its file is `<example>.ts`; its recorded runs are named after it)."""
    program: Callable[[], str | None]
    """The program's source as the book prints it (taken from the chapter text); None when that is unavailable."""
    property: Property
    """The sentence as a property of the program's run."""
    standin: PropertyExperiment | None = None
    """The stand-in port's property, or None."""

    # The experiment kind's own `on / unrun / view / observe / edit_judge` (see `pinb.chapters.experiments`).

    def on(self, backend: str) -> BookExampleExperiment | PropertyExperiment | None:
        """What runs on this backend: the book's program on pi, the stand-in's port elsewhere (None: nothing)."""
        return self if backend == "pi" else self.standin

    def unrun(self, backend: str) -> str | None:
        if self.on(backend) is None:
            return "the book's program is TypeScript run by Node; only the pi backend runs it"
        return None

    def view(self, run: Any, claim_id: str, unrun: str | None) -> Any:
        from pinb.chapters.experiment_view import code_view

        ported = self.on(run.backend)
        if ported is not None and ported is not self:
            return ported.view(run, claim_id, unrun)
        what = f"the book's program {self.example!r}, taken from the chapter text and run by Node"
        return code_view(claim_id, "book program", self.property.observed, what, unrun)

    async def observe(self, run: Any, observation: Any, claim: Any, view: Any) -> Any:
        ported = self.on(run.backend)
        assert ported is not None  # `unrun` said so otherwise
        if ported is not self:
            return await ported.observe(run, observation, claim, view)
        return await run._observe_book_example(observation, claim, self)

    def edit_judge(self, scenario: str | None, params: Params) -> EditJudge:
        if self.standin is None:
            raise ValueError("the book's program is not checked by scenarios, so an edited scenario cannot be judged")
        return self.standin.edit_judge(scenario, params)


#: What a chapter's `EXPERIMENTS` maps each experiment name to.
Experiment = PropertyExperiment | BookExampleExperiment


@dataclass(frozen=True)
class WitnessVerdict:
    """What one witness said of the sentence, in words."""

    name: str
    status: WitnessStatus
    premise: str
    """`Premise.says`, or what raised."""
    expected: str = ""
    observed: str = ""
    error: str = ""
    """`Type: message` of what raised (status ERROR), else empty."""

    @property
    def evidence(self) -> str:
        """One line: what was expected and observed (or why the witness says nothing of the sentence)."""
        if self.status == "ERROR":
            return f"the check raised {self.error}"
        if self.status == "NOT EXERCISED":
            return f"not exercised: {self.premise}"
        return f"expected {self.expected}; observed {self.observed}"

    def as_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "status": self.status,
            "premise": self.premise,
            "expected": self.expected,
            "observed": self.observed,
        }


def _raised(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def judge_witness(prop: Property, witness: Witness) -> WitnessVerdict:
    """The property on one witness: NOT EXERCISED without its premise, else OBSERVED when expected and observed
    agree and CONTRADICTED when they do not; ERROR when one of the property's functions raised."""
    stage = "premise"
    premise_says = ""
    try:
        premise = prop.premise(witness)
        premise_says = premise.says
        if not premise.holds:
            return WitnessVerdict(witness.name, "NOT EXERCISED", premise.says)
        stage = "expected"
        expected = prop.expected(witness)
        stage = "observed"
        observed = prop.observed(witness)
        stage = "agree"
        agrees = prop.agree(expected, observed)
        stage = "words"
        expected_words, observed_words = prop.words(expected), prop.words(observed)
    except Exception as exc:
        return WitnessVerdict(witness.name, "ERROR", premise_says or f"({stage} raised)", error=_raised(exc))
    status: WitnessStatus = "OBSERVED" if agrees else "CONTRADICTED"
    return WitnessVerdict(witness.name, status, premise_says, expected_words, observed_words)


def claim_status(verdicts: Sequence[WitnessVerdict]) -> WitnessStatus:
    """The claim's status over its witnesses: ERROR if any raised; CONTRADICTED if any exercised witness disagrees;
    OBSERVED if every exercised one agrees and at least one is exercised; NOT EXERCISED if none is."""
    statuses = {verdict.status for verdict in verdicts}
    for status in ("ERROR", "CONTRADICTED", "OBSERVED"):
        if status in statuses:
            return status  # type: ignore[return-value]
    return "NOT EXERCISED"


class _Strategies:
    """`st` at run time: every attribute is hypothesis.strategies' own, looked up on use."""

    def __getattr__(self, name: str) -> Any:
        from hypothesis import strategies

        return getattr(strategies, name)

    def composite(self, function: Callable[..., Any]) -> Callable[..., Any]:
        built: Callable[..., Any] | None = None

        @functools.wraps(function)
        def strategy(*args: Any, **kwargs: Any) -> Any:
            nonlocal built
            if built is None:
                from hypothesis import strategies

                built = strategies.composite(function)
            return built(*args, **kwargs)

        return strategy


if not TYPE_CHECKING:
    st = _Strategies()

__all__ = [
    "WITNESS_STATUSES",
    "BookExampleExperiment",
    "EditJudge",
    "Experiment",
    "Params",
    "Premise",
    "Property",
    "PropertyExperiment",
    "Scenarios",
    "Trace",
    "Witness",
    "WitnessStatus",
    "WitnessVerdict",
    "claim_status",
    "judge_witness",
    "st",
    "to_words",
]
