from __future__ import annotations

from pinb.chapters import ch01, ch16
from pinb.chapters.registry import chapters
from pinb.kit.fingerprint import fingerprint_text


def test_fingerprints_match_the_book_texts(book_texts: dict[str, list[str]]) -> None:
    assert fingerprint_text(book_texts["pi-01-chapter"][0]) == ch01.TEXT_FINGERPRINT
    assert fingerprint_text(book_texts["pi-16-chapter"][0]) == ch16.TEXT_FINGERPRINT


def test_registry_builds_kit_chapters() -> None:
    found = chapters()
    assert list(found) == ["pi-01-chapter", "pi-16-chapter"]
    assert found["pi-16-chapter"].notebook == "notebooks/16-chapter.ipynb"
    assert len(found["pi-01-chapter"].claims) == len(ch01.CLAIMS)
    reported = [c for c in found["pi-01-chapter"].claims if c.kind == "reported"]
    assert all(c.reason and not c.backends for c in reported)
