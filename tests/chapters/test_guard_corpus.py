"""Chapter 16's review guard: the patterns as printed in the book, and verdicts as JavaScript gives them.

The corpus verdicts (``EvasionCase.js_blocked`` / ``js_pattern``) were recorded by running the book's handler body
(``JSON.stringify(event.input)`` tested against the three regex literals) in Node 22; ``guard_verdict`` computes
its answer independently through ``pinb.app.js_compat``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pinb.app.guard import guard_reason, guard_verdict
from pinb.chapters.ch16.guard import EVASION_CORPUS, EvasionCase, pattern_sources

BOOK_BRIEF = Path(__file__).resolve().parents[2] / ".." / "shared" / "book" / "brief-pi-16-chapter.txt"

BOOK_PATTERNS = tuple(pattern_sources())


def test_patterns_are_the_books() -> None:
    if not BOOK_BRIEF.exists():
        pytest.skip("the book's chapter 16 text is not next to the repository")
    text = BOOK_BRIEF.read_text(encoding="utf-8")
    block = re.search(r"const BLOCKED = \[(.*?)\];", text, re.S)
    assert block, "chapter 16 no longer shows a BLOCKED array"
    literals = tuple(re.findall(r"/(.+?)/,", block.group(1)))
    assert literals == BOOK_PATTERNS


@pytest.mark.parametrize("case", EVASION_CORPUS, ids=[c.command for c in EVASION_CORPUS])
def test_verdict_matches_javascript(case: EvasionCase) -> None:
    verdict = guard_verdict(case.tool_name, case.input, BOOK_PATTERNS)
    assert (verdict.blocked, verdict.pattern) == (case.js_blocked, case.js_pattern)


def test_corpus_has_both_outcomes_for_destructive_commands() -> None:
    destructive = [c for c in EVASION_CORPUS if not c.destroys.startswith("nothing")]
    assert any(c.js_blocked for c in destructive)
    assert sum(not c.js_blocked for c in destructive) >= 10


# Subjects below are what Node printed for JSON.stringify(event.input).
@pytest.mark.parametrize(
    ("command", "subject"),
    [
        ("git push --force", '{"command":"git push --force"}'),
        ("git\tpush --force", '{"command":"git\\tpush --force"}'),
        ('sh -c "git push --force"', '{"command":"sh -c \\"git push --force\\""}'),
        ("cd repo\ngit push --force", '{"command":"cd repo\\ngit push --force"}'),
    ],
)
def test_subject_is_json_stringify_of_input(command: str, subject: str) -> None:
    assert guard_verdict("bash", {"command": command}, BOOK_PATTERNS).subject == subject


def test_tab_blocks_only_when_matching_the_raw_command() -> None:
    tab = {"command": "git\tpush --force"}
    assert not guard_verdict("bash", tab, BOOK_PATTERNS).blocked
    assert guard_verdict("bash", tab, BOOK_PATTERNS, match_on="command").blocked


def test_reason_names_the_pattern_source() -> None:
    verdict = guard_verdict("powershell", {"command": "git reset --hard"}, BOOK_PATTERNS)
    assert guard_reason(verdict) == r"Guard blocked: \bgit\s+reset\s+--hard\b"
    assert guard_reason(guard_verdict("bash", {"command": "ls"}, BOOK_PATTERNS)) is None


def test_other_tools_are_not_inspected() -> None:
    verdict = guard_verdict("write", {"path": "x.sh", "content": "git push --force"}, BOOK_PATTERNS)
    assert verdict == verdict.model_copy(update={"blocked": False, "pattern": None, "subject": None})


def test_first_pattern_in_order_wins() -> None:
    verdict = guard_verdict("bash", {"command": "git reset --hard && git push -f"}, BOOK_PATTERNS)
    assert verdict.pattern == BOOK_PATTERNS[0]


def test_pattern_variants_with_flags() -> None:
    # Node: /\bgit\s+push\b[^\n]*(--force(?:-with-lease)?|-f)\b/i.test('{"command":"GIT PUSH --FORCE"}') === true
    shout = {"command": "GIT PUSH --FORCE"}
    assert not guard_verdict("bash", shout, BOOK_PATTERNS).blocked
    assert guard_verdict("bash", shout, patterns=[(BOOK_PATTERNS[0], "i")]).blocked


def test_the_extension_is_cut_from_the_chapter_text(book: Path) -> None:
    from pinb.chapters.ch16.guard import book_patterns, extension_source, regex_literals

    source = extension_source()
    assert source is not None
    assert source.startswith('import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";')
    assert source.endswith("}") and "export default function (pi: ExtensionAPI)" in source
    block = re.search(r"const BLOCKED = \[(.*?)\];", source, re.S)
    assert block and regex_literals(f"[{block.group(1)}]") == book_patterns()


def test_without_the_text_there_is_no_extension(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pinb.chapters.ch16.guard import extension_source

    monkeypatch.setenv("PINB_BOOK", str(tmp_path))
    assert extension_source() is None


def test_no_python_source_keeps_a_copy_of_the_books_patterns() -> None:
    src = Path(__file__).resolve().parents[2] / "src"
    copies = [p for p in src.rglob("*.py") if r"\bgit\s+reset\s+--hard\b" in p.read_text(encoding="utf-8")]
    assert copies == []
