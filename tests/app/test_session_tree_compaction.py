"""Pi 1.6.0's compaction preparation (cut point, messages to summarise, split turns, token estimate, file lists),
against real Pi's ``prepareCompaction`` on a session real Pi wrote (golden/make_pi_compaction.mjs; no Node here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pinb.ai.types import TextContent, UserMessage
from pinb.app.session_compaction import (
    CompactionSettings,
    compaction_result,
    estimate_tokens,
    format_file_operations,
    prepare_compaction,
    should_compact,
)
from pinb.app.session_file import SessionMessageEntry
from pinb.app.session_tree import SessionManager, sequential_ids
from pinb.errors import UsageError

from .session_scenario import assistant, fixed_clock, user

GOLDEN = Path(__file__).parent / "golden"
SESSION = SessionManager.from_jsonl((GOLDEN / "pi-compaction-session.jsonl").read_text("utf-8"))
EXPECTED: dict[str, Any] = json.loads((GOLDEN / "pi-compaction-expected.json").read_text("utf-8"))


def test_token_estimates_match_pi() -> None:
    got = {e.id: estimate_tokens(e.message) for e in SESSION.get_entries() if isinstance(e, SessionMessageEntry)}
    assert got == EXPECTED["estimates"]


@pytest.mark.parametrize("case", list(EXPECTED["cases"]))
def test_prepare_compaction_matches_pi(case: str) -> None:
    leaf, keep = case.split("/")
    branch = SESSION.get_branch(EXPECTED["ids"][leaf])
    prep = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=int(keep)))
    expected = EXPECTED["cases"][case]
    if expected is None:
        assert prep is None
        return
    assert prep is not None
    got = {
        "firstKeptEntryId": prep.first_kept_entry_id,
        "messagesToSummarize": [[m.role, m.timestamp] for m in prep.messages_to_summarize],
        "turnPrefixMessages": [[m.role, m.timestamp] for m in prep.turn_prefix_messages],
        "isSplitTurn": prep.is_split_turn,
        "tokensBefore": prep.tokens_before,
        "previousSummary": prep.previous_summary,
        "readFiles": sorted(prep.file_ops.read),
        "editedFiles": sorted(prep.file_ops.edited),
        "writtenFiles": sorted(prep.file_ops.written),
    }
    assert got == expected


def test_should_compact() -> None:
    assert not should_compact(100_000, 128_000)
    assert should_compact(111_617, 128_000)
    assert not should_compact(10**9, 1, CompactionSettings(enabled=False))


def test_estimate_counts_utf16_units() -> None:
    assert estimate_tokens(UserMessage(content="😀😀", timestamp=0)) == 1  # 4 UTF-16 units / 4
    assert estimate_tokens(UserMessage(content=(TextContent(text="abcde"),), timestamp=0)) == 2


def test_compaction_result_appended_to_the_tree() -> None:
    sm = SessionManager("/p", session_id="s", id_factory=sequential_ids(), clock=fixed_clock())
    for i in range(6):
        sm.append_message(user("q" * 400, i))
        sm.append_message(assistant(TextContent(text="a" * 400), ts=i))
    prep = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=200))
    assert prep is not None and not prep.is_split_turn  # 100 tokens a message: the last question and answer
    result = compaction_result(prep, "They asked six questions.")
    sm.append_compaction(result.summary, result.first_kept_entry_id, result.tokens_before, result.details)
    kept = [e.id for e in sm.build_context_entries()[1:]]
    assert kept[0] == prep.first_kept_entry_id
    assert prepare_compaction(sm.get_branch()) is None  # a branch ending in a compaction


def test_split_turn_needs_prefix_summary_and_files_are_listed() -> None:
    branch = SESSION.get_branch(EXPECTED["ids"]["a5"])
    prep = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=500))
    assert prep is not None and prep.is_split_turn
    with pytest.raises(UsageError):
        compaction_result(prep, "history")
    result = compaction_result(prep, "history", "prefix")
    assert result.summary == (
        "history\n\n---\n\n**Turn Context (split turn):**\n\nprefix"
        "\n\n<read-files>\ndocs/c.md\n</read-files>\n\n<modified-files>\nsrc/a.py\nsrc/b.py\n</modified-files>"
    )
    assert result.details == {"readFiles": ["docs/c.md"], "modifiedFiles": ["src/a.py", "src/b.py"]}
    assert format_file_operations([], []) == ""
