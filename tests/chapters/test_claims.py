from __future__ import annotations

import pytest

from pinb.chapters import ch01, ch16
from pinb.chapters._claimspec import ClaimSpec
from pinb.chapters.registry import claim_spec, claim_specs

MODULES = [ch01, ch16]
ALL = [spec for module in MODULES for spec in module.CLAIMS]


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_claim_ids_are_unique_and_prefixed() -> None:
    ids = [spec.id for spec in ALL]
    assert len(ids) == len(set(ids))
    for module in MODULES:
        for spec in module.CLAIMS:
            assert spec.id.startswith(f"pi-{module.NUMBER}.")


@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.id)
def test_claim_is_well_formed(spec: ClaimSpec) -> None:
    assert spec.quote.strip() and spec.location.strip()
    if spec.kind == "reported":
        assert spec.reason and spec.backends == ()
    else:
        assert spec.backends and set(spec.backends) <= {"standin", "pi"}
        assert spec.layer in {"agent", "app", "package"}


@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.id)
def test_quote_appears_in_the_chapter_text(spec: ClaimSpec, book_texts: dict[str, list[str]]) -> None:
    chapter = spec.id.split(".")[0] + "-chapter"
    texts = [_norm(text) for text in book_texts[chapter]]
    assert any(_norm(spec.quote) in text for text in texts), spec.quote


def test_issue_minimum_set_is_covered() -> None:
    ids = {spec.id for spec in ALL}
    for needed in [
        "pi-01.loop.turn-shape",
        "pi-01.loop.continuation-test",
        "pi-01.inputs.branch-injection",
        "pi-01.inputs.tool-registration",
        "pi-01.inputs.neither-changes-other",
        "pi-01.compaction.entries-stay",
        "pi-01.queue.abort-keeps-queued",
        "pi-01.packages.core-no-tui",
        "pi-01.packages.core-size",
        "pi-01.example.three-lines",
        "pi-01.seam.prepare-request-throw-stops",
        "pi-01.seam.before-tool-call-mutation",
        "pi-01.seam.before-agent-start-text-not-builder",
        "pi-16.guard.blocks-force-push",
        "pi-16.guard.not-unconditional",
        "pi-16.run.sequence-diagram",
        "pi-16.guard.confirm-with-ui",
    ]:
        assert needed in ids
    forks = [spec for spec in ch01.CLAIMS if spec.id.startswith("pi-01.fork.")]
    assert len(forks) == 3 and all(spec.kind == "reported" for spec in forks)


def test_lookup_helpers() -> None:
    assert claim_spec("pi-16.guard.blocks-force-push").layer == "app"
    assert claim_specs("pi-01-chapter") is ch01.CLAIMS
    with pytest.raises(KeyError):
        claim_spec("pi-99.nothing")
