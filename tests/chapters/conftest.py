from __future__ import annotations

from pathlib import Path

import pytest

from pinb.chapters import registry
from pinb.chapters.book import BOOK_ENV, chapter_text

REPO = Path(__file__).resolve().parents[2]
BOOK = (REPO / ".." / "shared" / "book").resolve()


@pytest.fixture
def book(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The book directory beside the checkout (skips when it is absent), named through `PINB_BOOK`."""
    if not BOOK.is_dir():
        pytest.skip("the book texts (../shared/book) are not next to this checkout")
    monkeypatch.setenv(BOOK_ENV, str(BOOK))
    return BOOK


@pytest.fixture(scope="session")
def book_texts() -> dict[str, str]:
    """Chapter id -> the text its quotes come from (skips when the book folder is absent)."""
    if not BOOK.is_dir():
        pytest.skip("the book texts (../shared/book) are not next to this checkout")
    mp = pytest.MonkeyPatch()
    mp.setenv(BOOK_ENV, str(BOOK))
    try:
        texts = {cid: chapter_text(found.ledger) for cid, found in registry.folders().items()}
    finally:
        mp.undo()
    return {cid: text.text for cid, text in texts.items() if text is not None}
