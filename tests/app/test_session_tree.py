"""The session tree's rules (Pi 1.6.0 ``SessionManager``): append, branch, reset, summaries, compaction, edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pinb.ai.types import CustomMessage, SystemMessage, TextContent, Tool, UserMessage
from pinb.app.session_file import CompactionEntry, entry_to_json
from pinb.app.session_messages import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    convert_to_llm,
)
from pinb.app.session_tree import (
    SessionManager,
    collect_entries_for_branch_summary,
    random_entry_id,
    sequential_ids,
    uuidv7,
)
from pinb.errors import SessionFileError, UsageError

from .session_scenario import assistant, fixed_clock, user


def new_session() -> SessionManager:
    return SessionManager("/project", session_id="s", id_factory=sequential_ids(), clock=fixed_clock())


def texts(sm: SessionManager) -> list[str]:
    out = []
    for message in convert_to_llm(sm.build_context().messages):
        content = message.content
        out.append(content if isinstance(content, str) else "".join(b.text for b in content if hasattr(b, "text")))
    return out


def chat(sm: SessionManager, *turns: str) -> list[str]:
    ids = []
    for i, text in enumerate(turns):
        ids.append(sm.append_message(user(text, i)))
        ids.append(sm.append_message(assistant(TextContent(text=f"re: {text}"), ts=i)))
    return ids


def test_ids_are_8_hex_and_parents_chain() -> None:
    sm = SessionManager()
    a = sm.append_message(user("a", 1))
    b = sm.append_message(user("b", 2))
    assert all(len(x) == 8 and int(x, 16) >= 0 for x in (a, b))
    assert sm.get_entry(a).parent_id is None and sm.get_entry(b).parent_id == a
    assert sm.get_leaf_id() == b


def test_random_ids_avoid_collisions_and_session_ids_are_uuidv7() -> None:
    existing = {random_entry_id(set()) for _ in range(50)}
    assert random_entry_id(existing) not in existing
    session_id = uuidv7(1_767_225_600_000)
    assert session_id[14] == "7" and session_id.startswith("019b76da-a800-7")  # 48-bit ms timestamp, version 7


def test_header_is_v3() -> None:
    line = new_session().to_jsonl().splitlines()[0]
    assert line == '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:01.000Z","cwd":"/project"}'


def test_branch_moves_leaf_and_keeps_history() -> None:
    sm = new_session()
    _u1, a1, u2, _a2 = chat(sm, "one", "two")
    sm.branch(a1)
    u3 = sm.append_message(user("three", 3))
    assert sm.get_entry(u3).parent_id == a1
    assert texts(sm) == ["one", "re: one", "three"]
    assert {e.id for e in sm.get_children(a1)} == {u2, u3}
    assert len(sm.get_entries()) == 5  # nothing deleted


def test_reset_leaf_starts_a_new_root() -> None:
    sm = new_session()
    chat(sm, "one")
    sm.reset_leaf()
    assert sm.build_context().messages == ()
    root2 = sm.append_message(user("again", 5))
    assert sm.get_entry(root2).parent_id is None
    assert len(sm.get_tree()) == 2


def test_branch_with_summary_uses_pis_wording() -> None:
    sm = new_session()
    _, a1, _, a2 = chat(sm, "one", "two")
    summary_id = sm.branch_with_summary(a1, "We tried two.")
    entry = sm.get_entry(summary_id)
    assert (entry.parent_id, entry.from_id) == (a1, a2)
    last = sm.build_context().messages[-1]
    assert isinstance(last, BranchSummaryMessage)
    assert texts(sm)[-1] == (
        "The following is a summary of a branch that this conversation came back from:\n\n"
        "<summary>\nWe tried two.</summary>"
    )


def test_branch_with_summary_from_empty_session_is_from_root() -> None:
    sm = new_session()
    entry = sm.get_entry(sm.branch_with_summary(None, "nothing yet"))
    assert (entry.parent_id, entry.from_id) == (None, "root")


def test_compaction_hides_but_never_deletes() -> None:
    sm = new_session()
    u1, _a1, u2, a2 = chat(sm, "one", "two")
    c1 = sm.append_compaction("They said one and two.", u2, 500)
    before = len(sm.get_entries())
    assert texts(sm) == [
        "The conversation history before this point was compacted into the following summary:\n\n"
        "<summary>\nThey said one and two.\n</summary>",
        "two",
        "re: two",
    ]
    assert sm.get_entry(u1) is not None and len(sm.get_entries()) == before
    assert isinstance(sm.build_context().messages[0], CompactionSummaryMessage)
    # Going back to before the compaction restores the full history.
    sm.branch(a2)
    assert texts(sm) == ["one", "re: one", "two", "re: two"]
    sm.branch(c1)
    assert len(texts(sm)) == 3


def test_repeated_compaction_uses_only_the_latest() -> None:
    sm = new_session()
    _, _, u2, _ = chat(sm, "one", "two")
    sm.append_compaction("first", u2, 100)
    u3, _ = chat(sm, "three")
    sm.append_compaction("second", u3, 200)
    chat(sm, "four")
    got = texts(sm)
    assert "first" not in "".join(got)
    assert got[0].endswith("<summary>\nsecond\n</summary>")
    assert got[1:] == ["three", "re: three", "four", "re: four"]


def test_compaction_without_kept_entries_points_at_itself() -> None:
    sm = new_session()
    chat(sm, "one")
    c = sm.append_compaction("all of it", None, 10)
    assert sm.get_entry(c).first_kept_entry_id == c
    assert len(texts(sm)) == 1


def test_compaction_snapshots_the_system_message() -> None:
    sm = new_session()
    tool = Tool(name="read", parameters={"type": "object"})
    sm.append_message(SystemMessage(content="Base prompt", tools_added=(tool,), timestamp=7))
    sm.append_message(SystemMessage(sections={"cwd": "<cwd>\n/p\n</cwd>"}, timestamp=8))
    _, _, u2, _ = chat(sm, "one", "two")
    c = sm.get_entry(sm.append_compaction("s", u2, 1))
    assert isinstance(c, CompactionEntry) and c.system_message is not None
    assert c.system_message.content == "Base prompt"
    assert c.system_message.sections == {"cwd": "<cwd>\n/p\n</cwd>"}
    assert [t.name for t in c.system_message.tools_added or ()] == ["read"]
    first = sm.build_context().messages[0]
    assert isinstance(first, SystemMessage) and first.timestamp != 7  # stamped with the compaction's time


def test_custom_entries_stay_out_and_custom_messages_go_in() -> None:
    sm = new_session()
    sm.append_custom_entry("state", {"n": 1})
    sm.append_custom_message_entry("note", "hello model", True, {"x": 1})
    (message,) = sm.build_context().messages
    assert isinstance(message, CustomMessage) and message.custom_type == "note"
    assert convert_to_llm([message]) == [
        UserMessage(content=(TextContent(text="hello model"),), timestamp=message.timestamp)
    ]


def test_context_edit_replaces_or_omits_on_this_branch_only() -> None:
    sm = new_session()
    _u1, a1, u2, a2 = chat(sm, "one", "two")
    sm.append_context_edit(a1, {"content": "short"})
    sm.append_context_edit(u2, None)
    assert texts(sm) == ["one", "short", "re: two"]
    edit = sm.get_entries()[-2]
    assert edit.replacement.content == (TextContent(text="short"),)  # normalised for assistant targets
    sm.branch(a2)
    assert texts(sm) == ["one", "re: one", "two", "re: two"]


def test_latest_context_edit_wins() -> None:
    sm = new_session()
    u1, _ = chat(sm, "one")
    sm.append_context_edit(u1, {"content": "first"})
    sm.append_context_edit(u1, {"content": "second"})
    assert texts(sm)[0] == "second"


def test_thinking_level_and_model_follow_the_branch() -> None:
    sm = new_session()
    assert (sm.build_context().thinking_level, sm.build_context().model) == ("off", None)
    m = sm.append_model_change("p", "m1")
    sm.append_thinking_level_change("high")
    chat(sm, "one")  # assistant messages set the model too (faux/faux-1)
    assert sm.build_context().thinking_level == "high"
    assert sm.build_context().model.model_id == "faux-1"
    sm.branch(m)
    assert (sm.build_context().thinking_level, sm.build_context().model.model_id) == ("off", "m1")


def test_labels_set_clear_and_appear_in_tree() -> None:
    sm = new_session()
    u1, _ = chat(sm, "one")
    sm.append_label_change(u1, "here")
    assert sm.get_label(u1) == "here" and sm.get_tree()[0].label == "here"
    sm.append_label_change(u1, None)
    assert sm.get_label(u1) is None
    assert '"targetId":"00000001"}' in sm.to_jsonl()  # a cleared label has no "label" key


def test_session_name_is_sanitised() -> None:
    sm = new_session()
    sm.append_session_info("  my\r\n\nsession  ")
    assert sm.get_session_name() == "my session"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda sm: sm.branch("deadbeef"), "Entry deadbeef not found"),
        (lambda sm: sm.branch_with_summary("deadbeef", "s"), "Entry deadbeef not found"),
        (lambda sm: sm.append_label_change("deadbeef", "x"), "Entry deadbeef not found"),
        (lambda sm: sm.append_context_edit("deadbeef", None), "Entry deadbeef not found"),
    ],
)
def test_unknown_entry_ids_raise_pis_message(call, message: str) -> None:
    sm = new_session()
    chat(sm, "one")
    with pytest.raises(SessionFileError, match=f"^{message}$"):
        call(sm)


def test_context_edit_rules() -> None:
    sm = new_session()
    model = sm.append_model_change("p", "m")
    u1, _a1 = chat(sm, "one")
    with pytest.raises(SessionFileError, match=f"^Entry {model} does not contribute editable model content$"):
        sm.append_context_edit(model, None)
    with pytest.raises(UsageError, match="must be null or contain string/array content"):
        sm.append_context_edit(u1, {"text": "x"})
    sm.branch(model)
    with pytest.raises(SessionFileError, match=f"^Entry {u1} is not on the active branch$"):
        sm.append_context_edit(u1, None)


def test_build_context_is_pure() -> None:
    sm = new_session()
    _, _, u2, _ = chat(sm, "one", "two")
    sm.append_compaction("s", u2, 1)
    before = sm.to_jsonl()
    first = sm.build_context()
    assert sm.build_context() == first
    assert sm.to_jsonl() == before


# --- create_branched_session, against real Pi (golden/pi-branched.json from golden/make_pi_branched.mjs) ----------


GOLDEN = Path(__file__).parent / "golden"
BRANCHED = json.loads((GOLDEN / "pi-branched.json").read_text("utf-8"))


@pytest.mark.parametrize("leaf", [key for key in BRANCHED if key != "error"])
def test_create_branched_session_matches_pi(leaf: str) -> None:
    expected = BRANCHED[leaf]
    ids = json.loads((GOLDEN / "pi-session-contexts.json").read_text("utf-8"))["ids"]
    sm = SessionManager.from_jsonl((GOLDEN / "pi-session.jsonl").read_text("utf-8"), id_factory=sequential_ids())
    if leaf == "u2":
        sm.append_label_change(ids["u2"], "second")
    old_id = sm.session_id
    assert sm.create_branched_session(ids[leaf]) is None
    got = [entry_to_json(e) for e in sm.get_entries()]
    want = expected["entries"]
    new_labels = {e["id"] for e in want if e["type"] == "label"}
    # A leaf that is a new label must be the label at the same position in pinb's entries.
    position = [e["id"] for e in want].index(expected["leafId"]) if expected["leafId"] in new_labels else None
    expected_leaf = got[position]["id"] if position is not None else expected["leafId"]
    if new_labels:  # new label ids and their timestamps come from Pi's random ids and clock
        for entries in (got, want):
            for entry in entries:
                if entry["type"] == "label":
                    entry["id"] = entry["timestamp"] = "<new>"
    assert got == want
    assert sm.session_id != old_id and sm.header.cwd == expected["header"]["cwd"]
    assert sm.header.parent_session is None
    assert sm.get_leaf_id() == expected_leaf


def test_create_branched_session_unknown_leaf() -> None:
    sm = new_session()
    chat(sm, "one")
    with pytest.raises(SessionFileError, match=f"^{BRANCHED['error']}$"):
        sm.create_branched_session("deadbeef")


# Printed by Pi 1.6.0's collectEntriesForBranchSummary on golden/pi-session.jsonl (names are golden ids).
BRANCH_SUMMARY_ENTRIES = {
    "mainLeaf->a5": {
        "entries": [
            "72dac5cb",
            "77f81085",
            "0b7aea25",
            "974479c5",
            "c9576855",
            "4c29ced5",
            "c0429bda",
            "d9402bbf",
            "deb1482b",
            "4bdd282a",
            "4e89384b",
            "0abeb13b",
            "d06f52ad",
        ],
        "commonAncestorId": "72abdf88",
    },
    "a5->mainLeaf": {"entries": ["ebd3073f", "ec60e1e1", "eef6201f"], "commonAncestorId": "72abdf88"},
    "a2->u3": {"entries": [], "commonAncestorId": "72abdf88"},
    "u3->a2": {
        "entries": ["72dac5cb", "77f81085", "0b7aea25", "974479c5", "c9576855", "4c29ced5", "c0429bda"],
        "commonAncestorId": "72abdf88",
    },
    "a5->a5": {"entries": [], "commonAncestorId": "eef6201f"},
    "mainLeaf->model": {
        "entries": [
            "e3742046",
            "bbcab5e9",
            "21cc3da3",
            "019791f5",
            "d32b40ad",
            "72abdf88",
            "72dac5cb",
            "77f81085",
            "0b7aea25",
            "974479c5",
            "c9576855",
            "4c29ced5",
            "c0429bda",
            "d9402bbf",
            "deb1482b",
            "4bdd282a",
            "4e89384b",
            "0abeb13b",
            "d06f52ad",
        ],
        "commonAncestorId": "e84d3d0f",
    },
    "null->a5": {"entries": [], "commonAncestorId": None},
}


@pytest.mark.parametrize("case", list(BRANCH_SUMMARY_ENTRIES))
def test_collect_entries_for_branch_summary_matches_pi(case: str) -> None:
    ids = json.loads((GOLDEN / "pi-session-contexts.json").read_text("utf-8"))["ids"]
    sm = SessionManager.from_jsonl((GOLDEN / "pi-session.jsonl").read_text("utf-8"))
    old, target = case.split("->")
    entries, common = collect_entries_for_branch_summary(sm, ids.get(old), ids[target])
    expected = BRANCH_SUMMARY_ENTRIES[case]
    assert ([e.id for e in entries], common) == (expected["entries"], expected["commonAncestorId"])
