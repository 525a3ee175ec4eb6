"""`pinb claims uncovered`: the chapter text no claim covers. Before chapter 16's missing claims were added, it
found them; with them in the ledger, it no longer lists them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinb.chapters.book import chapter_text
from pinb.chapters.ledger import Ledger
from pinb.chapters.registry import folders
from pinb.chapters.uncovered import uncovered
from pinb.cli import main

#: These tests read the chapter texts; a checkout without the book beside it skips them.
pytestmark = pytest.mark.skipif(
    not (Path(__file__).resolve().parents[2].parent / "shared" / "book").is_dir(),
    reason="the book texts (../shared/book) are not next to this checkout",
)


#: The claims added because `pinb claims uncovered pi-16-chapter` listed their sentences.
ADDED = {
    "pi-16.dispatch.return-value-declared": "a return value only matters for events declared to accept one",
    "pi-16.run.docs-describe-shape": "extensions.md describes it as:",
    "pi-16.run.drawing-simplified": "The drawing is a simplified event-order guide, not a trace of every execution",
    "pi-16.settle.wrong-agent-end-finished": '"agent_end means the agent is finished."',
    "pi-16.events.table-selection": "the table below covers the events relevant to this chapter",
}


@pytest.fixture(scope="module")
def ch16() -> tuple[Ledger, str]:
    ledger = folders()["pi-16-chapter"].ledger
    text = chapter_text(ledger)
    assert text is not None
    return ledger, text.text


def _listed(ledger: Ledger, text: str) -> str:
    return "\n".join(fragment.text for fragment in uncovered(ledger, text))


def test_it_found_the_missing_sentences_before_they_were_added(ch16: tuple[Ledger, str]) -> None:
    ledger, text = ch16
    before = ledger.model_copy(update={"claims": tuple(c for c in ledger.claims if c.id not in ADDED)})
    listed = _listed(before, text)
    for sentence in ADDED.values():
        assert sentence in listed
    assert "Rather than list every event name, these are the ones an extension author reaches for:" in listed


def test_with_them_added_none_is_listed(ch16: tuple[Ledger, str]) -> None:
    ledger, text = ch16
    listed = _listed(ledger, text)
    for sentence in ADDED.values():
        assert sentence not in listed


def test_quoted_text_and_headings_are_not_listed(ch16: tuple[Ledger, str]) -> None:
    ledger, text = ch16
    listed = _listed(ledger, text)
    assert "agent_settled is final and notification-only" not in listed  # quoted by a claim
    assert "How events dispatch" not in listed  # a section heading
    assert "Back to the force push" in listed  # prose no claim quotes


def test_the_command_lists_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", "uncovered", "pi-16-chapter"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("- ")
    assert "passage(s) of brief-pi-16-chapter.txt no claim of pi-16-chapter covers" in captured.err
    assert main(["claims", "uncovered", "pi-99-chapter"]) == 2
