"""Trace queries for the application layer's lines: tree snapshots, driver step outcomes and the request after a
step, on traces recorded on real Pi 1.6.0."""

from __future__ import annotations

from pinb.chapters import tq
from pinb.scenario.corpus import read_recorded


def _trace(scenario_id: str) -> list[dict]:
    recorded = read_recorded(scenario_id, "1.6.0")
    assert recorded is not None
    return recorded


def test_steps_pair_each_step_with_how_it_ended() -> None:
    lines = _trace("app-compact-cancelled")
    found = tq.steps(lines)
    assert [(s.step["do"], s.outcome, s.error) for s in found] == [
        ("compact", "rejected", "Compaction cancelled"),
        ("prompt", "resolved", None),
        ("snapshot", "resolved", None),
    ]
    assert all(lines[s.start] is s.step and lines[s.end] is s.result for s in found)


def test_a_step_the_trace_never_ends_is_unfinished() -> None:
    lines = _trace("app-compact-cancelled")
    cut = lines[: tq.steps(lines)[1].start + 2]
    last = tq.steps(cut)[-1]
    assert (last.outcome, last.result, last.end, last.error) == ("unfinished", None, len(cut), None)


def test_the_request_after_a_step_and_the_requests_it_made() -> None:
    lines = _trace("app-compact-cancelled")
    compact, prompt, snap = range(3)
    assert tq.requests_in_step(lines, compact) == []  # cancelled before any summary was asked for
    after = tq.request_after(lines, compact)
    assert after is not None and after is tq.requests_in_step(lines, prompt)[0]
    assert tq.request_texts(after)[-1] == "question 4"
    assert tq.request_after(lines, snap) is None


def test_inputs_after_a_step_is_what_that_request_was_built_from() -> None:
    lines = _trace("app-compact-same-summary-twice")
    first_prompt_step = 1
    seen = tq.inputs_after(lines, first_prompt_step)
    assert seen is not None and seen["n"] == tq.request_after(lines, first_prompt_step)["n"]
    assert [entry["type"] for entry in seen["branch"]].count("compaction") == 1
    assert tq.system_prompts(lines) == [line["systemPrompt"] for line in tq.inputs(lines)]
    assert len(tq.inputs(lines)) == len(tq.requests(lines)) == 8


def test_snapshots_their_entries_and_the_active_branch() -> None:
    lines = _trace("app-compact-same-summary-twice")
    tree = tq.snapshot(lines)
    assert tree is tq.snapshots(lines)[-1] and tq.snapshot([]) == {}
    compactions = tq.tree_entries(tree, "compaction")
    assert [c["summary"] for c in compactions] == ["The user asked four questions."] * 2
    assert tq.tree_entries(tree, "compaction", firstKeptEntryId="entry#10") == compactions[:1]
    branch = tq.branch_entries(tree)
    assert [entry["id"] for entry in branch] == tree["branch"] and branch[0].get("parentId") is None
    assert tq.driver(lines, "step_resolved")[0]["summary"] == compactions[0]["summary"]
