"""Chapter 01's program is read from the chapter text at run time (pinb keeps no copy); its committed runs are
readable offline and were runs of exactly that program."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pinb.chapters.ch01 import program as ch01_program
from pinb.errors import ReferenceError_, UsageError
from pinb.scenario import reference

ROOT = Path(__file__).resolve().parents[2]


def test_the_program_is_cut_from_the_chapter_text(book: Path) -> None:
    program = ch01_program.program()
    assert program is not None
    assert program.startswith('import { Agent, type AgentTool } from "@earendil-works/pi-agent-core";\n')
    assert program.rstrip().endswith("await agent.prompt(\"How many words in 'the quick brown fox'?\");")
    assert program in (book / "ch01-the-loop-you-are-writing-for.txt").read_text(encoding="utf-8")


def test_without_a_book_there_is_no_program(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PINB_BOOK", str(tmp_path))
    assert ch01_program.program() is None


def test_the_repository_keeps_no_copy_of_the_books_code() -> None:
    assert not (ROOT / "reference" / "book-examples").exists()


def test_a_text_without_the_program_says_which_line_is_missing() -> None:
    from pinb.chapters.book import printed_code

    with pytest.raises(UsageError, match=r"no line starting with 'await agent\.prompt\('"):
        printed_code('import { Agent, type AgentTool } from "x";\n', ch01_program.FIRST_LINE, ch01_program.LAST_LINE)


@pytest.mark.parametrize("version", ["1.0.3", "1.6.0"])
def test_committed_runs_are_readable_offline_and_ran_the_printed_program(version: str, book: Path) -> None:
    run = reference.recorded_book_example(ch01_program.NAME, version)
    program = ch01_program.program()
    assert program is not None
    assert run.name == ch01_program.NAME and run.pi_version == version
    assert run.program_sha256 == hashlib.sha256(program.encode("utf-8")).hexdigest()
    assert run.command == ["node", f"{ch01_program.NAME}.ts"]
    assert run.ran_at.endswith("Z") and "run_book_example" in run.how


def test_unknown_recordings_are_one_line_errors() -> None:
    with pytest.raises(ReferenceError_):
        reference.recorded_book_example(ch01_program.NAME, "9.9.9")
