"""What a chapter's runs depend on: its text, read from the book directory, and the code its verdicts depend on."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from pinb.chapters import book, registry
from pinb.fingerprints import code_fingerprint, fingerprint_text
from pinb.kit.project import Project
from pinb.kit.status import has_current_inputs

REPO = Path(__file__).resolve().parents[2]


def test_the_text_fingerprint_is_of_the_text_read_now(book: Path, book_texts: dict[str, str]) -> None:
    for chapter_id, chapter in registry.chapters().items():
        assert chapter.text_fingerprint == fingerprint_text(book_texts[chapter_id])
        assert chapter.text_note == ""


def test_without_the_book_the_text_is_unverified_not_assumed(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PINB_BOOK", str(tmp_path))
    for found in registry.folders().values():
        chapter = registry.chapter(found)
        assert chapter.text_fingerprint == ""
        assert chapter.text_note == (
            f"the chapter text is not available at {tmp_path} (no {found.ledger.text.file} there): set PINB_BOOK; "
            "its quotes and fingerprint are unverified"
        )


def test_the_missing_text_is_named_as_configured(monkeypatch, tmp_path: Path) -> None:
    """A fresh clone without the book: the note names the configured folder, the same words on every machine."""
    monkeypatch.delenv("PINB_BOOK", raising=False)
    (tmp_path / "pyproject.toml").write_text('[tool.pinb]\nbook = "../shared/book"\n', encoding="utf-8")
    found = registry.folder("pi-16-chapter")
    assert book.unavailable(found.ledger, tmp_path) == (
        "the chapter text is not available at ../shared/book: set PINB_BOOK"
    )
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    assert book.unavailable(found.ledger, tmp_path) == (
        "the chapter text is not available: no book directory is named; set PINB_BOOK (or `[tool.pinb] book`)"
    )


def _edited_book(book: Path, tmp_path: Path, file: str, old: str, new: str) -> Path:
    copy = tmp_path / "book"
    shutil.copytree(book, copy)
    text = (copy / file).read_text(encoding="utf-8")
    assert old in text
    (copy / file).write_text(text.replace(old, new, 1), encoding="utf-8")
    return copy


def test_an_edited_quote_makes_that_chapter_stale_and_is_named(book: Path, tmp_path: Path, monkeypatch) -> None:
    project = Project(root=REPO, chapters=registry.chapters())
    runs = {
        chapter_id: SimpleNamespace(
            record=SimpleNamespace(backend="standin", inputs=project.current_inputs(c, "standin"))
        )
        for chapter_id, c in project.chapters.items()
    }
    edited = _edited_book(
        book, tmp_path, "brief-pi-16-chapter.txt", "Handlers run in extension load", "Handlers run in load"
    )
    monkeypatch.setenv("PINB_BOOK", str(edited))
    now = Project(root=REPO, chapters=registry.chapters())
    sixteen = now.chapters["pi-16-chapter"]
    assert (
        "no longer in the chapter text" in sixteen.text_note
        and "pi-16.dispatch.registration-order" in sixteen.text_note
    )
    assert not has_current_inputs(now, sixteen, runs["pi-16-chapter"])  # type: ignore[arg-type]
    one = now.chapters["pi-01-chapter"]
    assert one.text_note == "" and has_current_inputs(now, one, runs["pi-01-chapter"])  # type: ignore[arg-type]
    # Without the text the fingerprint is unverified: the runs stay as they were, the note says why.
    monkeypatch.setenv("PINB_BOOK", str(tmp_path / "absent"))
    blind = Project(root=REPO, chapters=registry.chapters())
    assert has_current_inputs(blind, blind.chapters["pi-16-chapter"], runs["pi-16-chapter"])  # type: ignore[arg-type]


def test_a_chapter_fingerprints_its_folder_and_the_shared_code_not_other_chapters() -> None:
    sixteen = registry.folder("pi-16-chapter").code_files()
    assert "chapters/ch16/ledger.yaml" in sixteen and "chapters/ch16/experiments.py" in sixteen
    assert not any(name.startswith("chapters/ch01/") for name in sixteen)
    for shared in ("app/session.py", "scenario/standin.py", "chapters/experiments.py", "claims.py", "kit/execute.py"):
        assert shared in sixteen
    assert not any(name.startswith(("kit/status", "kit/report")) for name in sixteen)


def test_formatting_comments_and_docstrings_do_not_count_but_code_does(tmp_path: Path) -> None:
    path = tmp_path / "judge.py"

    def print_of(source: str) -> str:
        path.write_text(source, encoding="utf-8")
        return code_fingerprint({"judge.py": path})

    base = print_of('def judge(x):\n    """Say it."""\n    return x == 2\n')
    assert print_of("def judge(x):  # the book says two\n    return (x==2)\n\n\n") == base
    assert print_of('def judge(x):\n    """Say it otherwise."""\n    return x == 2\n') == base
    assert print_of("def judge(x):\n    return x == 3\n") != base
    ledger = tmp_path / "ledger.yaml"
    ledger.write_text("id: a\nclaims: [x, y]\n", encoding="utf-8")
    first = code_fingerprint({"ledger.yaml": ledger})
    ledger.write_text("# a comment\nid: a\nclaims:\n- x\n- y\n", encoding="utf-8")
    assert code_fingerprint({"ledger.yaml": ledger}) == first


def test_registry_builds_kit_chapters() -> None:
    found = registry.chapters()
    assert list(found) == sorted(found, key=lambda cid: found[cid].number.zfill(4))
    for chapter_id, chapter in found.items():
        ledger = registry.folder(chapter_id).ledger
        assert chapter.notebook == ledger.notebook and len(chapter.claims) == len(ledger.claims)
        assert chapter.code_fingerprint
        reported = [c for c in chapter.claims if c.kind == "reported"]
        assert all(c.reason and not c.backends for c in reported)


@pytest.fixture(autouse=True)
def _private_digest_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
