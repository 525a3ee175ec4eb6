"""A claim's card: one column per backend side by side, a contradiction anywhere as a banner above everything, the
partial check named, the details collapsed, the outcome carried exactly as the check recorded it."""

from __future__ import annotations

import asyncio
import re

from pinb.chapters.card import Cards, Column, columns, live_column
from pinb.chapters.experiments import ChapterRun
from pinb.claims import CLAIM_MIME, ClaimOutcome, recorded
from pinb.testing import faults

ORDER = "pi-16.dispatch.registration-order"
PARTIAL = "pi-16.guard.not-unconditional"


def _entry(backend: str, status: str, **more: str) -> dict[str, str]:
    return {"backend": backend, "status": status, "run_id": f"run-{backend}", "date": "2026-12-02", **more}


def _check(claim_id: str, entries: list[dict[str, str]] | None = None, **kwargs):  # type: ignore[no-untyped-def]
    run = ChapterRun("pi-16-chapter", "standin", recorded={claim_id: entries or []})
    return asyncio.run(Cards(run).check(claim_id, **kwargs))


def test_releases_that_agree_share_a_column_each_named_in_its_tooltip() -> None:
    said = {"expected": "a → b", "observed": "a → b"}
    live = live_column("standin", None, "not run here")
    found = columns(
        live,
        [
            _entry("standin", "OBSERVED", **said),
            _entry("pi@1.6.0", "OBSERVED", **said),
            _entry("pi@1.5.2", "OBSERVED", **said),
            _entry("pi@1.0.3", "CONTRADICTED", expected="a → b", observed="b → a"),
        ],
    )
    assert [c.header for c in found] == [
        "standin (this run)",
        "standin (recorded)",  # it disagrees with this run (UNRUN here): never folded into it
        "pi@1.5.2–1.6.0 (2 releases, recorded)",
        "pi@1.0.3 (recorded)",
    ]
    assert any("run-pi@1.5.2" in run for run in found[2].runs) and any("run-pi@1.6.0" in run for run in found[2].runs)


def test_releases_whose_premise_differs_only_by_their_own_number_share_a_column() -> None:
    def ran_on(version: str, status: str, observed: str) -> dict[str, str]:
        premise = f"the book's program, verbatim, run on Pi {version}"
        return _entry(f"pi@{version}", status, expected="a → b", observed=observed, premise=premise)

    found = columns(
        None,
        [
            ran_on("1.6.0", "CONTRADICTED", "fails at import"),
            ran_on("1.5.0", "CONTRADICTED", "fails at import"),
            ran_on("1.4.0", "OBSERVED", "a → b"),
            ran_on("1.3.0", "OBSERVED", "b → a"),
        ],
    )
    assert [(c.header, c.premise) for c in found] == [
        ("pi@1.5.0–1.6.0 (2 releases, recorded)", "the book's program, verbatim, run on Pi 1.5.0–1.6.0"),
        ("pi@1.4.0 (recorded)", "the book's program, verbatim, run on Pi 1.4.0"),
        ("pi@1.3.0 (recorded)", "the book's program, verbatim, run on Pi 1.3.0"),  # it observed something else
    ]


def test_a_recorded_run_of_this_backend_that_agrees_joins_this_runs_column() -> None:
    outcome = ClaimOutcome(claim_id=ORDER, outcome="holds", evidence="x", expected="a", observed="a")
    found = columns(live_column("standin", outcome, None), [_entry("standin", "OBSERVED", expected="a")])
    assert len(found) == 1 and found[0].runs == (
        "recorded standin: run run-standin (2026-12-02) gave the same verdict",
    )


def test_a_contradiction_on_a_recorded_backend_heads_the_card_never_under_a_tick() -> None:
    card = _check(ORDER, [_entry("pi@1.6.0", "CONTRADICTED", expected="e1 → e2", observed="e2 → e1")])
    assert card.columns[0].kind == "OBSERVED" and card.badge == "CONTRADICTED"
    html, text = card.html(), card.text()
    assert html.index("pinb-alarm") < html.index("<table") and "CONTRADICTED on pi@1.6.0 (recorded)" in html
    assert "✔" not in html.split("<table")[0]  # no green tick above the table
    assert text.splitlines()[0] == "!! CONTRADICTED on pi@1.6.0 (recorded)"
    assert "e2 → e1" in html and "pi@1.6.0 (recorded): CONTRADICTED" in text


def test_the_card_carries_the_recorded_outcome_and_reads_as_plain_text() -> None:
    before = len(recorded())
    card = _check(ORDER)
    outcome = [o for o in recorded()[before:] if o.claim_id == ORDER][-1]
    bundle = card._repr_mimebundle_()
    assert bundle[CLAIM_MIME] == outcome.model_dump(mode="json")
    text = bundle["text/plain"]
    assert "<" not in text and "> Handlers run in extension load and registration order." in text
    assert re.search(r"standin \(this run\): OBSERVED\n    expected: tool_call: .+\n    observed: turn_start: ", text)
    html = bundle["text/html"]
    assert html.count("<details") == 1 and "<details open" not in html  # steps, timeline, trace: one, collapsed
    assert "svg" in html and "raw trace: order" in html and "scenario order" in html


def test_a_partial_check_names_what_it_leaves_out() -> None:
    card = _check(PARTIAL)
    assert "partial: not covered: “a useful extension-level guard”" in card.text()
    assert "partial: not covered: “a useful extension-level guard”" in card.html()


def test_the_card_follows_a_fault_and_an_edit() -> None:
    with faults.injected("handlers-reverse-order"):
        card = _check(ORDER)
    assert card.badge == "CONTRADICTED" and "CONTRADICTED on standin (this run)" in card.html()
    run = ChapterRun("pi-16-chapter", "standin")
    cards = Cards(run)
    card = asyncio.run(cards.check(ORDER))
    del card.experiment.scenarios["order"]["extensions"][1:]
    edited = asyncio.run(cards.check(ORDER, card.experiment))
    assert edited.columns[0].verdict == "NOT EXERCISED" and edited.outcome is not None
    assert edited.outcome.evidence.startswith("[edited scenario")


def test_pictures_drawn_into_the_card_go_inside_its_details() -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import HTML, display

    InteractiveShell.instance()  # a shell, so displays are captured as in a notebook
    try:
        card = _check(ORDER, show=False)
        with card.pictures():
            display(HTML("<p class='picture'>drawn</p>"))
            print("printed")
        details = card.html().split("<details")[1]
        assert "<p class='picture'>drawn</p>" in details and "<pre>printed\n</pre>" in details
    finally:
        InteractiveShell.clear_instance()


def test_the_summary_lists_what_did_not_hold_and_folds_the_rest() -> None:
    run = ChapterRun("pi-16-chapter", "standin")
    cards = Cards(run)
    with faults.injected("handlers-reverse-order"):
        asyncio.run(cards.check(ORDER))
    asyncio.run(cards.check(PARTIAL))
    shown = cards.summary()
    assert shown.html is not None
    flagged, folded = shown.html.split("<details", 1)
    assert ORDER in flagged and PARTIAL not in flagged and PARTIAL in folded


def test_a_column_without_a_check_says_why() -> None:
    column = live_column("pi@1.6.0", None, "Pi 1.6.0 is not installed")
    assert column == Column(("pi@1.6.0",), "UNRUN", observed="Pi 1.6.0 is not installed", live=True)


def test_a_counterfactual_is_shown_under_the_card_and_the_outcome_only_in_it() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from pinb.testing.counterfactual import attach

    InteractiveShell.instance()
    try:
        run = ChapterRun("pi-16-chapter", "standin", recorded={ORDER: [_entry("pi@1.6.0", "OBSERVED")]})
        attach(run, "first")
        card = asyncio.run(Cards(run).check(ORDER, show=False))
        texts = [str(output.data.get("text/html", "")) for output in card.under]
        assert len(texts) == 1 and "counterfactual" in texts[0]  # neither the outcome nor the recorded table
    finally:
        InteractiveShell.clear_instance()
