from __future__ import annotations

from pinb.chapters import registry
from pinb.kit.fingerprint import fingerprint_text


def test_ledger_fingerprints_match_the_book_texts(book_texts: dict[str, str]) -> None:
    for chapter_id, found in registry.folders().items():
        assert fingerprint_text(book_texts[chapter_id]) == found.ledger.text_fingerprint, chapter_id


def test_registry_builds_kit_chapters() -> None:
    found = registry.chapters()
    assert list(found) == sorted(found, key=lambda cid: found[cid].number.zfill(4))
    for chapter_id, chapter in found.items():
        ledger = registry.folder(chapter_id).ledger
        assert chapter.notebook == ledger.notebook and len(chapter.claims) == len(ledger.claims)
        reported = [c for c in chapter.claims if c.kind == "reported"]
        assert all(c.reason and not c.backends for c in reported)
