"""Session JSONL v3: files real Pi wrote load in pinb and are written back byte for byte; files pinb writes are
the ones real Pi loaded (golden/pinb-session-pi-read.json) and Pi builds the same contexts from them.

Fixtures come from real Pi 1.6.0 (``golden/make_pi_session.mjs``, ``golden/read_with_pi.mjs``); no Node runs here.
Set ``PINB_UPDATE_GOLDEN=1`` to rewrite ``golden/pinb-session.jsonl`` (then re-run ``read_with_pi.mjs``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pinb.ai.types import to_json
from pinb.app.session_file import entry_line, iso_timestamp, parse_iso_ms, parse_session_jsonl
from pinb.app.session_messages import convert_to_llm
from pinb.app.session_tree import SessionManager, build_context_entries, build_session_context, sequential_ids
from pinb.errors import SessionFileError

from .session_scenario import build_pinb_session

GOLDEN = Path(__file__).parent / "golden"
PI_FILE = (GOLDEN / "pi-session.jsonl").read_text(encoding="utf-8")
PI_EXPECTED = json.loads((GOLDEN / "pi-session-contexts.json").read_text(encoding="utf-8"))
PINB_FILE = GOLDEN / "pinb-session.jsonl"
PI_READ_OF_PINB = json.loads((GOLDEN / "pinb-session-pi-read.json").read_text(encoding="utf-8"))


def _context_json(entries: list[Any], leaf_id: str | None) -> dict[str, Any]:
    context = build_session_context(entries, leaf_id)
    model = {"provider": context.model.provider, "modelId": context.model.model_id} if context.model else None
    return {
        "messages": [to_json(m) for m in context.messages],
        "thinkingLevel": context.thinking_level,
        "model": model,
    }


def _tree_json(nodes: list[Any]) -> list[dict[str, Any]]:
    return [{"id": n.entry.id, "label": n.label, "children": _tree_json(n.children)} for n in nodes]


# --- a file real Pi wrote --------------------------------------------------------------------------------------


def test_pi_file_round_trips_byte_for_byte() -> None:
    assert SessionManager.from_jsonl(PI_FILE).to_jsonl() == PI_FILE


def test_pi_file_reserialised_from_models_is_byte_identical() -> None:
    # Not the kept original lines: every entry re-serialised from pinb's models.
    parsed = parse_session_jsonl(PI_FILE)
    assert parsed is not None
    for entry, line in zip([parsed.header, *parsed.entries], PI_FILE.splitlines(), strict=True):
        entry._line = None
        assert entry_line(entry) == line


@pytest.mark.parametrize("name", list(PI_EXPECTED["contexts"]))
def test_contexts_of_pi_file_match_pi(name: str) -> None:
    expected = PI_EXPECTED["contexts"][name]
    entries = SessionManager.from_jsonl(PI_FILE).get_entries()
    assert _context_json(entries, expected["leafId"]) == expected["context"]
    ids = [e.id for e in build_context_entries(entries, expected["leafId"])]
    assert ids == expected["contextEntryIds"]
    llm = [to_json(m) for m in convert_to_llm(build_session_context(entries, expected["leafId"]).messages)]
    assert llm == expected["llm"]


def test_pi_file_tree_branch_and_name() -> None:
    sm = SessionManager.from_jsonl(PI_FILE)
    assert sm.get_leaf_id() == PI_EXPECTED["leafId"]
    assert [e.id for e in sm.get_branch()] == PI_EXPECTED["branch"]
    assert _tree_json(sm.get_tree()) == PI_EXPECTED["tree"]
    assert sm.get_session_name() == PI_EXPECTED["sessionName"]


# --- a file pinb wrote ------------------------------------------------------------------------------------------


def test_pinb_file_is_the_one_pi_loaded() -> None:
    sm, _ = build_pinb_session()
    text = sm.to_jsonl()
    if os.environ.get("PINB_UPDATE_GOLDEN"):
        PINB_FILE.write_text(text, encoding="utf-8")
    assert text == PINB_FILE.read_text(encoding="utf-8")
    assert PI_READ_OF_PINB["rewrittenEqualsInput"] is True


@pytest.mark.parametrize("name", list(PI_READ_OF_PINB["contexts"]))
def test_pinb_contexts_match_what_pi_built_from_pinb_file(name: str) -> None:
    sm, _ = build_pinb_session()
    expected = PI_READ_OF_PINB["contexts"][name]
    assert _context_json(sm.get_entries(), expected["leafId"]) == expected["context"]
    assert [e.id for e in build_context_entries(sm.get_entries(), expected["leafId"])] == expected["contextEntryIds"]


def test_pinb_tree_matches_pi() -> None:
    sm, _ = build_pinb_session()
    assert sm.get_leaf_id() == PI_READ_OF_PINB["leafId"]
    assert [e.id for e in sm.get_branch()] == PI_READ_OF_PINB["branch"]
    assert _tree_json(sm.get_tree()) == PI_READ_OF_PINB["tree"]
    assert sm.get_session_name() == PI_READ_OF_PINB["sessionName"]


# --- bad input and Pi's reading rules ---------------------------------------------------------------------------


def test_non_session_file_raises_pis_message() -> None:
    with pytest.raises(SessionFileError, match=r"^Session file is not a valid pi session: notes\.jsonl$"):
        parse_session_jsonl('{"type":"message","id":"x"}\n', "notes.jsonl")


def test_garbage_only_file_is_not_a_session() -> None:
    with pytest.raises(SessionFileError, match="not a valid pi session"):
        parse_session_jsonl("this is not json\n", "x.jsonl")


def test_empty_file_is_a_new_session() -> None:
    assert parse_session_jsonl("") is None
    sm = SessionManager.from_jsonl("\n\n")
    assert sm.get_entries() == [] and sm.get_leaf_id() is None


def test_malformed_lines_are_skipped_like_pi() -> None:
    lines = PI_FILE.splitlines()
    broken = "\n".join([lines[0], "{not json", lines[1], "NaN", *lines[2:]]) + "\n"
    parsed = parse_session_jsonl(broken)
    assert parsed is not None
    assert parsed.skipped_lines == [2, 4]
    assert len(parsed.entries) == len(lines) - 1


def test_invalid_entry_names_its_line() -> None:
    header = PI_FILE.splitlines()[0]
    text = header + '\n{"type":"model_change","id":"a","parentId":null,"timestamp":"t"}\n'
    with pytest.raises(SessionFileError, match=r"x\.jsonl:2: invalid 'model_change' entry"):
        parse_session_jsonl(text, "x.jsonl")


def test_v1_file_is_migrated() -> None:
    v1 = "\n".join(
        [
            '{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
            '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}',
            '{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"n",'
            '"content":"note","display":true,"timestamp":2}}',
            '{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":2,'
            '"tokensBefore":5}',
        ]
    )
    sm = SessionManager.from_jsonl(v1, id_factory=sequential_ids())
    assert sm.header.version == 3
    assert [(e.id, e.parent_id) for e in sm.get_entries()] == [
        ("00000001", None),
        ("00000002", "00000001"),
        ("00000003", "00000002"),
    ]
    assert sm.get_entries()[1].message.role == "custom"
    assert sm.get_entries()[2].first_kept_entry_id == "00000002"
    assert '"version":3' in sm.to_jsonl().splitlines()[0]


@pytest.mark.parametrize(
    ("ms", "iso"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (1767225600123, "2026-01-01T00:00:00.123Z"),
        (1796071318515, "2026-11-30T20:41:58.515Z"),
    ],
)
def test_iso_timestamps_are_javascripts(ms: int, iso: str) -> None:
    assert iso_timestamp(ms) == iso
    assert parse_iso_ms(iso) == ms
