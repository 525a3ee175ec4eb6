"""Every chapter's ledger: well-formed, quoted from its text, and validated with errors that name file and claim."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pinb.chapters import registry
from pinb.chapters.book import missing_quotes
from pinb.chapters.ledger import LedgerError, load_ledger, parse_ledger
from pinb.claims import Claim

FOLDERS = registry.folders()
ALL = [(cid, spec) for cid, found in FOLDERS.items() for spec in found.ledger.claims]


def test_claim_ids_are_unique_and_prefixed() -> None:
    ids = [spec.id for _, spec in ALL]
    assert len(ids) == len(set(ids))
    for found in FOLDERS.values():
        assert all(spec.id.startswith(found.ledger.claim_prefix) for spec in found.ledger.claims)


@pytest.mark.parametrize(("chapter", "spec"), ALL, ids=[spec.id for _, spec in ALL])
def test_claim_is_well_formed(chapter: str, spec: Claim) -> None:
    if spec.kind == "reported":
        assert spec.reason and spec.backends == () and spec.experiment_name is None
    else:
        assert spec.backends and set(spec.backends) <= {"standin", "pi"}
        assert spec.layer in {"agent", "app", "package"}
        assert spec.experiment_name in registry.experiments(chapter), spec.experiment_name
        assert spec.experiment is registry.experiments(chapter)[spec.experiment_name]


@pytest.mark.parametrize("chapter", list(FOLDERS))
def test_quotes_appear_in_the_chapter_text(chapter: str, book_texts: dict[str, str]) -> None:
    assert missing_quotes(FOLDERS[chapter].ledger, book_texts[chapter]) == []


def test_a_claim_is_resolved_once() -> None:
    found = registry.claim("pi-16.guard.blocks-force-push")
    assert found.layer == "app" and found.chapter == "pi-16-chapter"
    assert found is registry.claim(found.id) is registry.folder("pi-16-chapter").ledger.claim(found.id)
    assert registry.claims("pi-01-chapter") == registry.folder("pi-01-chapter").ledger.claims
    assert registry.chapters()["pi-16-chapter"].claim(found.id) is found
    with pytest.raises(KeyError):
        registry.claim("pi-99.nothing")


def test_a_claim_read_again_from_its_ledger_is_the_same_claim_but_finds_no_experiment() -> None:
    found = registry.claim("pi-16.guard.blocks-force-push")
    again = load_ledger(registry.folder("pi-16-chapter").folder / "ledger.yaml").claim(found.id)
    assert again == found and hash(again) == hash(found) and again.experiment is None
    assert found.experiment is not None and found.property is not None
    assert again != again.model_copy(update={"location": "elsewhere"})


def _raw(chapter: str) -> dict:
    return yaml.safe_load((FOLDERS[chapter].folder / "ledger.yaml").read_text(encoding="utf-8"))


def test_a_wrong_claim_is_named_with_its_file() -> None:
    raw = _raw("pi-16-chapter")
    raw["claims"][1].pop("experiment")
    with pytest.raises(LedgerError) as caught:
        parse_ledger(raw, "ch16/ledger.yaml")
    message = str(caught.value)
    assert message.startswith(f"ch16/ledger.yaml: claim {raw['claims'][1]['id']}")
    assert "names the experiment" in message and "\n" not in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: c.update(kind="reported"), "needs the reason"),
        (lambda c: c.update(backends=["node"]), "backends"),
        (lambda c: c.update(id="Not An Id"), "invalid claim id"),
        (lambda c: c.update(colour="red"), "colour"),
        (lambda c: c.update(quote=""), "quote"),
    ],
)
def test_ledger_mistakes_are_one_line_errors(change, expected: str) -> None:
    raw = _raw("pi-01-chapter")
    change(next(c for c in raw["claims"] if c.get("kind", "runnable") == "runnable"))
    with pytest.raises(LedgerError) as caught:
        parse_ledger(raw, "ledger.yaml")
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_a_claim_of_another_chapter_and_a_duplicate_are_refused() -> None:
    raw = _raw("pi-01-chapter")
    raw["claims"].append(dict(raw["claims"][0], id="pi-16.elsewhere.x"))
    with pytest.raises(LedgerError, match=r"start with 'pi-01\.'"):
        parse_ledger(raw, "ledger.yaml")
    raw["claims"][-1] = dict(raw["claims"][0])
    with pytest.raises(LedgerError, match="listed twice"):
        parse_ledger(raw, "ledger.yaml")


def test_a_file_that_is_not_yaml_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ledger.yaml"
    path.write_text("id: x\nclaims: [\n", encoding="utf-8")
    with pytest.raises(LedgerError, match=r"ledger.yaml: line \d+ is not valid YAML"):
        load_ledger(path)


def test_quotes_may_be_a_list_of_passages() -> None:
    raw = _raw("pi-16-chapter")
    raw["claims"][1]["quote"] = ["First passage.", "Second passage."]
    raw["claims"][1]["covers"] = ["First passage."]  # the covered phrases must come from the new quote
    raw["claims"][1]["uncovered"] = []
    claim = parse_ledger(raw, "ledger.yaml").claims[1]
    assert claim.quotes == ("First passage.", "Second passage.") and claim.text == "First passage. … Second passage."
