"""A property claim checked through the notebook's `ChapterRun`: the hand witness, the reader's edit (a
premise-keeping edit keeps the verdict, a premise-removing one says NOT EXERCISED), seeded generated witnesses,
the structured observation recorded, and a false sentence's minimal counterexample."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pinb.chapters.experiments import EDITED, ChapterRun
from pinb.claims import recorded
from pinb.errors import UsageError

from .sample_chapter import CHAPTER, LAST_FIRST, LOAD_ORDER, sample_chapter


@pytest.fixture
def chapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with sample_chapter(tmp_path, monkeypatch) as folder:
        yield folder


async def test_the_hand_witness_alone_is_observed_in_part_with_its_structure(chapter: Path) -> None:
    run = ChapterRun(CHAPTER, "standin")
    observation = await run.check(LOAD_ORDER, show=False)
    outcome = recorded()[-1]
    assert outcome.claim_id == LOAD_ORDER and outcome.outcome == "holds"
    assert outcome.verdict == "OBSERVED (partial: not covered: “When several extensions handle the same event”)"
    assert outcome.evidence == "expected e1h1 → e1h2 → e2h1 → e3h1; observed e1h1 → e1h2 → e2h1 → e3h1"
    assert outcome.premise == "tool_call: 4 handlers in 3 extensions"
    assert outcome.covers == ("their handlers run in load order", "within one extension in registration order")
    assert [(w.name, w.status) for w in outcome.witnesses] == [("hand", "OBSERVED")]
    assert outcome.counterexample is None
    assert observation.result is not None and observation.result.status == "OBSERVED"
    assert run.summary_rows()[0]["status"].startswith("OBSERVED (partial")


async def test_a_premise_keeping_edit_keeps_the_verdict_and_says_it_is_edited(chapter: Path) -> None:
    run = ChapterRun(CHAPTER, "standin")
    view = run.experiment(LOAD_ORDER)
    view.scenarios["order"]["extensions"].reverse()
    await run.check(LOAD_ORDER, view, show=False)
    outcome = recorded()[-1]
    assert outcome.outcome == "holds"
    assert outcome.evidence == EDITED + "expected e3h1 → e2h1 → e1h1 → e1h2; observed e3h1 → e2h1 → e1h1 → e1h2"
    assert [w.name for w in outcome.witnesses] == ["edited"]


async def test_a_premise_removing_edit_is_not_exercised_never_observed(chapter: Path) -> None:
    run = ChapterRun(CHAPTER, "standin")
    view = run.experiment(LOAD_ORDER)
    del view.scenarios["order"]["extensions"][1:]
    await run.check(LOAD_ORDER, view, show=False)
    outcome = recorded()[-1]
    assert outcome.outcome == "not-exercised" and outcome.verdict == "NOT EXERCISED"
    assert outcome.evidence == EDITED + "not exercised: tool_call: 2 handlers in 1 extensions"
    assert run.summary_rows()[0]["status"] == "NOT EXERCISED"


async def test_generated_witnesses_are_seeded_and_recorded_with_the_hand_one(chapter: Path) -> None:
    first = ChapterRun(CHAPTER, "standin", witnesses=5)
    await first.check(LOAD_ORDER, show=False)
    outcome = recorded()[-1]
    assert [w.name for w in outcome.witnesses] == ["hand", "gen-1", "gen-2", "gen-3", "gen-4", "gen-5"]
    assert {w.status for w in outcome.witnesses} <= {"OBSERVED", "NOT EXERCISED"}
    again = ChapterRun(CHAPTER, "standin", witnesses=5)
    await again.check(LOAD_ORDER, show=False)
    assert recorded()[-1].witnesses == outcome.witnesses
    assert outcome.evidence.endswith(" witnesses exercised the sentence)")


async def test_a_false_sentence_is_contradicted_with_a_minimal_counterexample(chapter: Path, tmp_path: Path) -> None:
    run = ChapterRun(CHAPTER, "standin", witnesses=5, artifacts_dir=str(tmp_path / "artifacts"))
    await run.check(LAST_FIRST, show=False)
    outcome = recorded()[-1]
    assert outcome.outcome == "contradicted"
    assert outcome.witnesses[0].status == "CONTRADICTED"  # the hand witness already disagrees
    counterexample = outcome.counterexample
    assert counterexample is not None
    assert [len(e["handlers"]) for e in counterexample["order"]["extensions"]] == [1, 1]
    assert outcome.evidence.startswith("counterexample: expected e2h1 → e1h1; observed e1h1 → e2h1")
    assert outcome.witnesses[-1].name == "counterexample"
    assert len(list((tmp_path / "artifacts").glob("*.jsonl"))) >= 2  # the generated witnesses' traces are kept


@pytest.mark.parametrize("count", [-1, 10**9, 2.5, True])
def test_a_witness_count_out_of_range_is_a_usage_error(count: object) -> None:
    with pytest.raises(UsageError, match="witnesses must be a whole number from 0 to 10000"):
        ChapterRun("pi-16-chapter", "standin", witnesses=count)  # type: ignore[arg-type]
