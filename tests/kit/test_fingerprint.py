"""The chapter prose fingerprint and its documented normalisation."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pinb.cli import main
from pinb.kit.fingerprint import fingerprint_file, fingerprint_text, normalise

BOOK = Path(__file__).resolve().parents[2] / ".." / "shared" / "book"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Two  words\n\nand\ta   line.\r\n", "Two words and a line."),
        ("\ufeffBOM first", "BOM first"),
        ("no\u00a0break\u2003space", "no break space"),
        ("cafe\u0301", "caf\u00e9"),
        ("“curly” quotes stay", "“curly” quotes stay"),
    ],
)
def test_normalisation(text: str, expected: str) -> None:
    assert normalise(text) == expected
    assert fingerprint_text(text) == hashlib.sha256(expected.encode()).hexdigest()


def test_rewrapping_does_not_change_it_a_word_does() -> None:
    base = fingerprint_text("The loop ends when\nno tool call remains.")
    assert fingerprint_text("The loop ends\nwhen no tool call remains.  ") == base
    assert fingerprint_text("The loop ends when no tool calls remain.") != base


def test_cli_prints_the_fingerprint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chapter.txt"
    path.write_text("A chapter.\n")
    assert main(["fingerprint", str(path)]) == 0
    assert capsys.readouterr().out == fingerprint_text("A chapter.") + "\n"
    assert main(["fingerprint", str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pinb: error: cannot read ") and err.count("\n") == 1
    path.write_bytes(b"\xff\xfe")
    assert main(["fingerprint", str(path)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err


@pytest.mark.skipif(not BOOK.is_dir(), reason="the book's shared material is not next to the repository")
def test_chapter_01_snapshot() -> None:
    """pinb's fingerprint of the plain-text snapshot; the brief's published value uses another normalisation."""
    text_file = BOOK / "ch01-the-loop-you-are-writing-for.txt"
    assert fingerprint_file(text_file) == "330a4820184657acc0274e2614f21e63a45c423f88c8d596810b8314ab226126"
