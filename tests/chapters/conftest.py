from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BOOK = REPO / ".." / "shared" / "book"


def _excerpt(brief: str) -> str:
    section = brief.split("== 2. Chapter text ==", 1)[1]
    return section.split("[... end of excerpt", 1)[0]


@pytest.fixture(scope="session")
def book_texts() -> dict[str, list[str]]:
    """Chapter id -> the texts its quotes may come from (skips when the book folder is absent)."""
    if not BOOK.is_dir():
        pytest.skip("the book texts (../shared/book) are not next to this checkout")
    ch01 = (BOOK / "ch01-the-loop-you-are-writing-for.txt").read_text(encoding="utf-8")
    brief01 = (BOOK / "brief-pi-01-chapter.txt").read_text(encoding="utf-8")
    brief16 = (BOOK / "brief-pi-16-chapter.txt").read_text(encoding="utf-8")
    return {"pi-01-chapter": [ch01, _excerpt(brief01)], "pi-16-chapter": [_excerpt(brief16)]}
