"""The property form of a claim: one witness judged (premise, expected, observed), the claim's status over several
witnesses, values in words, and the ledger's covers/uncovered phrases."""

from __future__ import annotations

from typing import Any

import pytest

from pinb.chapters.ledger import LedgerError, parse_ledger
from pinb.chapters.properties import (
    Premise,
    Property,
    Witness,
    WitnessVerdict,
    claim_status,
    judge_witness,
    to_words,
)


def _order(witness: Witness) -> list[str]:
    return list(witness.params["order"])


def _prop(**overrides: Any) -> Property:
    fields: dict[str, Any] = {
        "hand": lambda params: {"only": {"id": "only"}},
        "premise": lambda w: Premise(len(w.params["order"]) >= 2, f"{len(w.params['order'])} handlers"),
        "expected": _order,
        "observed": lambda w: list(w.params["ran"]),
    }
    fields.update(overrides)
    return Property(**fields)


def _witness(order: list[str], ran: list[str], name: str = "hand") -> Witness:
    return Witness(name, {}, params={"order": order, "ran": ran})


def test_a_witness_whose_observation_matches_its_expectation_is_observed() -> None:
    verdict = judge_witness(_prop(), _witness(["a1", "b1"], ["a1", "b1"]))
    assert verdict == WitnessVerdict("hand", "OBSERVED", "2 handlers", "a1 → b1", "a1 → b1")
    assert verdict.evidence == "expected a1 → b1; observed a1 → b1"


def test_a_witness_that_disagrees_is_contradicted_and_says_both_values() -> None:
    verdict = judge_witness(_prop(), _witness(["a1", "b1"], ["b1", "a1"], "gen-3"))
    assert (verdict.name, verdict.status) == ("gen-3", "CONTRADICTED")
    assert verdict.evidence == "expected a1 → b1; observed b1 → a1"


def test_a_witness_without_the_premise_is_not_exercised_and_never_observed() -> None:
    calls: list[str] = []

    def expected(w: Witness) -> list[str]:
        calls.append("expected")
        return _order(w)

    verdict = judge_witness(_prop(expected=expected), _witness(["a1"], ["a1"]))
    assert verdict == WitnessVerdict("hand", "NOT EXERCISED", "1 handlers")
    assert verdict.evidence == "not exercised: 1 handlers"
    assert calls == []


@pytest.mark.parametrize("stage", ["premise", "expected", "observed", "agree", "words"])
def test_a_function_that_raises_is_an_error_with_its_message(stage: str) -> None:
    def boom(*args: Any) -> Any:
        raise KeyError("trace")

    verdict = judge_witness(_prop(**{stage: boom}), _witness(["a1", "b1"], ["a1", "b1"]))
    assert verdict.status == "ERROR"
    assert verdict.error == "KeyError: 'trace'"
    assert verdict.evidence == "the check raised KeyError: 'trace'"


def test_agree_and_words_are_the_propertys_own() -> None:
    prop = _prop(agree=lambda e, o: set(e) == set(o), words=lambda v: "/".join(sorted(v)))
    verdict = judge_witness(prop, _witness(["b1", "a1"], ["a1", "b1"]))
    assert (verdict.status, verdict.expected, verdict.observed) == ("OBSERVED", "a1/b1", "a1/b1")


def _v(status: str) -> WitnessVerdict:
    return WitnessVerdict("w", status, "")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("statuses", "claim"),
    [
        (["OBSERVED", "OBSERVED"], "OBSERVED"),
        (["OBSERVED", "NOT EXERCISED"], "OBSERVED"),
        (["NOT EXERCISED", "NOT EXERCISED"], "NOT EXERCISED"),
        ([], "NOT EXERCISED"),
        (["OBSERVED", "CONTRADICTED", "NOT EXERCISED"], "CONTRADICTED"),
        (["CONTRADICTED", "ERROR"], "ERROR"),
    ],
)
def test_the_claims_status_over_its_witnesses(statuses: list[str], claim: str) -> None:
    assert claim_status([_v(s) for s in statuses]) == claim


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (None, "nothing"),
        (True, "yes"),
        (False, "no"),
        ("", "(empty text)"),
        (3, "3"),
        (["a1", "a2", "b1"], "a1 → a2 → b1"),
        ((), "none"),
        ({"b", "a"}, "a, b"),
        ({"tool_call": ["a1", "b1"], "turn_start": []}, "tool_call: (a1 → b1); turn_start: none"),
        ([["a", "b"], ["c"]], "(a → b) → (c)"),
    ],
)
def test_values_in_words(value: Any, words: str) -> None:
    assert to_words(value) == words


def _ledger(claim: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "pi-90-chapter",
        "number": "90",
        "title": "Sample",
        "notebook": "notebooks/90-chapter.ipynb",
        "text": {"file": "sample.txt"},
        "claims": [
            {
                "id": "pi-90.handlers.load-order",
                "quote": "When two extensions listen to the same event, the one loaded first runs first.",
                "location": "Handlers ¶1",
                "experiment": "handlers.load-order",
                **claim,
            }
        ],
    }


def test_covers_and_uncovered_are_phrases_of_the_quote() -> None:
    claim = parse_ledger(
        _ledger({"covers": ["the one  loaded first runs first"], "uncovered": ["Listen to the same event"]}), "l.yaml"
    ).claims[0]
    assert claim.covers == ("the one  loaded first runs first",)
    assert claim.uncovered == ("Listen to the same event",)
    assert claim.partial


def test_a_claim_without_uncovered_parts_is_not_partial_and_covers_may_be_absent_for_now() -> None:
    assert not parse_ledger(_ledger({"covers": ["runs first"]}), "l.yaml").claims[0].partial
    assert parse_ledger(_ledger({}), "l.yaml").claims[0].covers == ()


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ({"covers": ["runs last"]}, "l.yaml: claim pi-90.handlers.load-order: covers: 'runs last' is not a phrase"),
        ({"uncovered": [" "]}, "l.yaml: claim pi-90.handlers.load-order: uncovered: a phrase is empty"),
        (
            {"covers": ["runs first"], "uncovered": ["runs first"]},
            "l.yaml: claim pi-90.handlers.load-order: 'runs first' is listed in both covers and uncovered",
        ),
    ],
)
def test_a_phrase_not_in_the_quote_is_a_one_line_ledger_error(claim: dict[str, Any], message: str) -> None:
    with pytest.raises(LedgerError) as caught:
        parse_ledger(_ledger(claim), "l.yaml")
    assert str(caught.value).startswith(message)


def test_a_reported_claim_names_no_covers() -> None:
    raw = _ledger({"kind": "reported", "reason": "terminal only", "covers": ["runs first"]})
    del raw["claims"][0]["experiment"]
    with pytest.raises(LedgerError, match="names no backends, experiment, faults, covers or uncovered"):
        parse_ledger(raw, "l.yaml")
