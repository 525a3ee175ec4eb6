"""The book's programs kept in reference/book-examples/: verbatim, and their committed runs readable offline."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pinb.errors import ReferenceError_
from pinb.scenario import reference

ROOT = Path(__file__).resolve().parents[2]
CHAPTER_01 = ROOT / ".." / "shared" / "book" / "ch01-the-loop-you-are-writing-for.txt"


def _printed_program(chapter: str) -> str:
    """The chapter's program as printed: from its first import to the line that prompts the agent."""
    lines = chapter.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('import { Agent, type AgentTool } from "'))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("await agent.prompt("))
    return "".join(lines[start : end + 1])


def test_the_committed_program_is_exactly_the_one_the_chapter_prints() -> None:
    if not CHAPTER_01.is_file():
        pytest.skip("the book texts (../shared/book) are not next to this checkout")
    printed = _printed_program(CHAPTER_01.read_text(encoding="utf-8"))
    assert reference.book_example_program("ch01-agent-core") == printed


def test_the_header_is_a_comment_and_the_program_starts_after_it() -> None:
    text = reference.book_example_file("ch01-agent-core").read_text(encoding="utf-8")
    header, _, program = text.partition("\n\n")
    assert all(line.startswith("//") for line in header.splitlines())
    assert "Pi Agents" in header and "verbatim" in header
    assert program == reference.book_example_program("ch01-agent-core")
    assert program.startswith("import { Agent")


@pytest.mark.parametrize("version", reference.SUPPORTED_VERSIONS)
def test_recorded_runs_are_of_this_program_with_provenance(version: str) -> None:
    run = reference.recorded_book_example("ch01-agent-core", version)
    program = reference.book_example_program("ch01-agent-core")
    assert run.program_sha256 == hashlib.sha256(program.encode("utf-8")).hexdigest()
    assert run.pi_version == version and run.packages["@earendil-works/pi-agent-core"] == version
    assert run.node.startswith("v22.") and run.command == ["node", "ch01-agent-core.ts"]
    assert run.ran_at.endswith("Z") and "run_book_example" in run.how
    assert not any("/tmp" in line or "/home" in line for line in run.stderr_head)


def test_unknown_example_and_missing_record_are_one_line_errors() -> None:
    with pytest.raises(ReferenceError_, match="unknown book example"):
        reference.book_example_file("nope")
    with pytest.raises(ReferenceError_, match="no recorded run"):
        reference.recorded_book_example("ch01-agent-core", "9.9.9")
