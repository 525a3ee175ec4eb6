"""Session operations in the scenario format: entry targets by type and position, prompts queued while the agent
streams, queueing before the first prompt (docs/scenario-format.md). The corpus scenarios recorded on real Pi
1.6.0 (``scenarios/traces/``) are the reference; these tests pin the grammar and what the stand-in must keep doing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pinb.errors import ScenarioError
from pinb.scenario.model import parse_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import project

from ._schema import app_document, schema_errors

ROOT = Path(__file__).resolve().parents[2]


def _with(**fields: Any) -> dict[str, Any]:
    return app_document("session-operations", **fields)


VALID = [
    _with(steps=[{"do": "navigate", "target": {"type": "thinking_level_change", "nth": 2}}]),
    _with(steps=[{"do": "branch", "target": {"type": "model_change"}}]),
    _with(steps=[{"do": "label", "target": {"type": "compaction", "nth": 1}, "label": "x"}]),
    _with(queue=[{"when": "start", "do": "steer", "text": "early"}]),
    _with(steps=[{"do": "reload"}]),
    _with(steps=[{"do": "new_session"}, {"do": "fork", "target": {"type": "message", "nth": 2}, "position": "at"}]),
    _with(project={"files": {"s.jsonl": ""}}, steps=[{"do": "new_session"}, {"do": "resume", "path": "s.jsonl"}]),
    _with(steps=[{"do": "navigate", "target": {"role": "user", "text": "Hello."}, "summarize": True}]),
    _with(
        steps=[
            {
                "do": "navigate",
                "target": {"type": "branch_summary"},
                "summarize": True,
                "instructions": "short",
                "replace_instructions": True,
                "label": "here",
            }
        ]
    ),
    _with(queue=[{"when": "turn_start#1", "do": "prompt", "text": "p", "streaming_behavior": "followUp"}]),
    _with(queue=[{"when": "turn_start#1", "do": "prompt", "text": "p"}]),
    {**_with(queue=[{"when": "start", "do": "follow_up", "text": "early"}]), "layer": "agent"},
]

INVALID = [
    _with(steps=[{"do": "fork", "target": {"role": "user", "text": "x"}, "position": "after"}]),
    _with(steps=[{"do": "fork"}]),
    _with(project={"files": {"s.jsonl": ""}}, steps=[{"do": "resume", "path": "../s.jsonl"}]),
    _with(steps=[{"do": "reload", "text": "x"}]),
    {**_with(steps=[{"do": "reload"}]), "layer": "agent"},
    _with(steps=[{"do": "navigate", "target": {"role": "user", "text": "x"}, "summarize": "yes"}]),
    _with(steps=[{"do": "branch", "target": {"role": "user", "text": "x"}, "summarize": True}]),
    _with(steps=[{"do": "navigate", "target": {"type": "thinking_level_change", "nth": 0}}]),
    _with(steps=[{"do": "navigate", "target": {"type": "toolResult"}}]),
    _with(steps=[{"do": "navigate", "target": {"type": "message", "role": "user"}}]),
    _with(queue=[{"when": "at start", "do": "steer", "text": "early"}]),
    _with(queue=[{"when": "turn_start#1", "do": "prompt"}]),
    _with(queue=[{"when": "turn_start#1", "do": "steer", "text": "s", "streaming_behavior": "steer"}]),
    _with(queue=[{"when": "turn_start#1", "do": "prompt", "text": "p", "streaming_behavior": "follow_up"}]),
    {**_with(queue=[{"when": "turn_start#1", "do": "prompt", "text": "p"}]), "layer": "agent"},
]


@pytest.mark.parametrize("doc", VALID)
def test_valid_documents_parse(doc: dict[str, Any]) -> None:
    parse_scenario(doc)


@pytest.mark.parametrize("doc", INVALID)
def test_invalid_documents_are_one_line_errors(doc: dict[str, Any]) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(doc)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("doc", "valid"), [(d, True) for d in VALID] + [(d, False) for d in INVALID])
def test_the_schema_agrees_with_the_model(doc: dict[str, Any], valid: bool) -> None:
    errors = schema_errors(doc)
    assert (errors == []) == valid, errors


def _driver(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kept = [line for line in lines if line["source"] == "driver"]
    return [{k: v for k, v in line.items() if k not in ("seq", "source")} for line in kept]


def _recorded(scenario_id: str) -> list[dict[str, Any]]:
    path = ROOT / "scenarios" / "traces" / "pi-1.6.0" / f"{scenario_id}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _corpus(scenario_id: str) -> list[dict[str, Any]]:
    doc = json.loads((ROOT / "scenarios" / f"{scenario_id}.json").read_text(encoding="utf-8"))
    return run_on_standin(parse_scenario(doc))


@pytest.mark.parametrize(
    "scenario_id",
    [
        "app-target-entry-types",
        "app-queue-prompt-while-streaming",
        "app-queue-before-first-prompt",
        "agent-queue-before-first-prompt",
        "app-navigate-branch-summary",
        "app-reload",
        "app-new-session-fork",
        "app-session-replacement-cancelled",
        "app-resume",
        "app-queue-prompt-at-settle",
        "app-navigate-summary-handler-instructions",
        "app-target-compaction-entries",
    ],
)
def test_the_corpus_scenario_conforms_to_real_pi_on_every_field(scenario_id: str) -> None:
    assert project(_corpus(scenario_id), projection="full") == project(_recorded(scenario_id), projection="full")


def test_a_target_by_type_and_position_names_the_nth_entry_of_that_type() -> None:
    lines = _corpus("app-target-entry-types")
    steps = _driver(lines)
    navigate = steps.index({"type": "step", "do": "navigate", "target": {"type": "thinking_level_change", "nth": 2}})
    assert steps[navigate + 1] == {"type": "step_resolved", "cancelled": False}  # not a user message: no editor text
    tree = [line for line in lines if line["source"] == "tree"][-1]
    entries = {entry["id"]: entry for entry in tree["entries"]}
    levels = [entry for entry in tree["entries"] if entry["type"] == "thinking_level_change"]
    # the prompt after navigating continues from the second thinking_level_change entry
    children = [e.get("text") for e in tree["entries"] if e.get("parentId") == levels[1]["id"]]
    assert children == ["second question", "from the level change"]
    assert next(e for e in tree["entries"] if e["type"] == "model_change")["label"] == "origin"
    assert entries[tree["leaf"]]["text"] == "answer after branching"


def test_a_target_the_session_does_not_have_is_rejected_with_the_count() -> None:
    rejected = [line for line in _corpus("app-target-entry-types") if line["type"] == "step_rejected"]
    assert [line["error"] for line in rejected] == ["no compaction entry number 1 (the session has 0)"]


def test_a_step_target_by_type_is_written_with_its_position_spelled_out() -> None:
    doc = _with(steps=[{"do": "label", "target": {"type": "model_change"}, "label": "m"}])
    steps = _driver(run_on_standin(parse_scenario(doc)))
    assert {"type": "step", "do": "label", "target": {"type": "model_change", "nth": 1}, "label": "m"} in steps


def test_a_prompt_queued_while_streaming_steers_follows_up_or_is_refused() -> None:
    lines = _corpus("app-queue-prompt-while-streaming")
    inputs = [(line["text"], line.get("streamingBehavior")) for line in lines if line["type"] == "input"]
    assert inputs == [("start the work", None), ("steer me", "steer"), ("follow me", "followUp"),
                      ("no behaviour given", None)]  # fmt: skip
    rejected = [line["error"] for line in lines if line["type"] == "queue_rejected"]
    assert rejected == [
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    ]
    requests = [line for line in lines if line["source"] == "model"]
    assert requests[1]["messages"][-1] == {"role": "user", "text": "steer me"}
    assert requests[3]["messages"][-1] == {"role": "user", "text": "follow me"}


def test_queueing_before_the_first_prompt_is_delivered_by_its_run() -> None:
    for scenario_id in ("app-queue-before-first-prompt", "agent-queue-before-first-prompt"):
        lines = _corpus(scenario_id)
        first_prompt = next(i for i, line in enumerate(lines) if line["type"] == "prompt")
        queued = [line["text"] for line in lines[:first_prompt] if line["type"] == "queue"]
        assert queued == ["steered before the first prompt", "followed up before the first prompt"]
        requests = [line for line in lines if line["source"] == "model"]
        assert requests[0]["messages"][-1] == {"role": "user", "text": "steered before the first prompt"}
        assert requests[1]["messages"][-1] == {"role": "user", "text": "followed up before the first prompt"}


def test_a_branch_summary_is_asked_of_the_model_with_pis_prompt_and_lists_the_files_read() -> None:
    lines = _corpus("app-navigate-branch-summary")
    requests = [line for line in lines if line["source"] == "model"]
    first = requests[3]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    # the branch left behind after the target user message: its tool call and answer, not the message itself
    assert first[1]["text"].startswith(
        '<conversation>\n[Assistant tool calls]: read(path="src/app.py")\n\n[Assistant]: It prints hello.\n'
        "</conversation>\n\nCreate a structured summary of this conversation branch"
    )
    inputs = [line for line in lines if line["source"] == "request"]
    assert inputs[3]["thinkingLevel"] == "low"  # the session's thinking level, the model reasoning
    tree = next(line for line in lines if line["source"] == "tree")
    summaries = [e for e in tree["entries"] if e["type"] == "branch_summary"]
    assert summaries[0]["summary"] == (
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:"
        "\n\n## Goal\nRead src/app.py.\n\n<read-files>\nsrc/app.py\n</read-files>"
    )
    # replaced instructions are the whole instructions; the label goes on the new summary entry
    assert requests[5]["messages"][1]["text"].endswith("</conversation>\n\nOne sentence.")
    assert summaries[1]["label"] == "checkpoint"
    leaf = next(e for e in tree["entries"] if e["id"] == tree["leaf"])  # the label entry follows the summary
    assert leaf == {"id": leaf["id"], "parentId": summaries[1]["id"], "type": "label",
                    "targetId": summaries[1]["id"], "label": "checkpoint"}  # fmt: skip


def test_a_branch_summary_that_fails_rejects_the_step_and_moves_nothing() -> None:
    lines = _corpus("app-navigate-branch-summary")
    rejected = [line["error"] for line in lines if line["type"] == "step_rejected"]
    assert rejected == ["Branch summarization failed: No more faux responses queued"]
    trees = [line for line in lines if line["source"] == "tree"]
    assert trees[-1]["leaf"] == trees[-2]["leaf"]


def test_reload_runs_the_extension_factories_again_with_fresh_state() -> None:
    lines = _corpus("app-reload")
    ext = [(line["type"], line.get("reason")) for line in lines if line["source"] == "ext" and "reason" in line]
    assert ext == [
        ("session_start", "startup"),
        ("resources_discover", "startup"),
        ("session_shutdown", "reload"),
        ("session_start", "reload"),
        ("resources_discover", "reload"),
    ]
    appended = [line for line in lines if line["type"] == "before_agent_start"]
    assert ["result" in line for line in appended] == [True, False, True]  # "at: 1" counts afresh after the reload
    requests = [line for line in lines if line["source"] == "model"]
    assert len(requests[2]["messages"]) == 6  # the conversation survives the reload


def test_a_reloaded_session_keeps_reporting_extension_errors() -> None:
    doc = _with(
        extensions=[
            {"name": "x", "handlers": [{"event": "before_agent_start", "action": {"kind": "throw", "message": "boom"}}]}
        ],
        steps=[{"do": "reload"}, {"do": "prompt", "text": "again"}],
    )
    errors = [line for line in run_on_standin(parse_scenario(doc)) if line["source"] == "error"]
    assert [line["error"] for line in errors] == ["boom", "boom"]


#: Rules JSON Schema cannot state: the model refuses them with one line naming the rule.
MODEL_ONLY_INVALID = [
    (_with(steps=[{"do": "resume", "path": "s.jsonl"}]), "is not a file of project.files"),
    (
        _with(project={"files": {"s.jsonl": ""}}, steps=[{"do": "resume", "path": "s.jsonl"}, {"do": "new_session"}]),
        "cannot follow a resume step",
    ),
]


@pytest.mark.parametrize(("doc", "message"), MODEL_ONLY_INVALID)
def test_session_replacement_rules_the_schema_cannot_state(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(doc)


def _lifecycle(lines: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    kinds = ("session_start", "session_shutdown", "session_before_switch", "session_before_fork")
    return [
        (line["type"], *(str(line[k]) for k in ("reason", "position", "targetSessionFile") if k in line))
        for line in lines
        if line["source"] == "ext" and line["type"] in kinds
    ]


def test_fork_and_new_session_replace_the_session_and_reload_its_extensions() -> None:
    lines = _corpus("app-new-session-fork")
    assert _lifecycle(lines) == [
        ("session_start", "startup"),
        ("session_before_fork", "before"),
        ("session_shutdown", "fork"),
        ("session_start", "fork"),
        ("session_before_fork", "at"),
        ("session_shutdown", "fork"),
        ("session_start", "fork"),
        ("session_before_switch", "new"),
        ("session_shutdown", "new"),
        ("session_start", "new"),
    ]
    resolved = [line for line in lines if line["type"] == "step_resolved" and "cancelled" in line]
    assert [line.get("selectedText") for line in resolved] == ["second question", None, None]
    requests = [line["messages"] for line in lines if line["source"] == "model"]
    assert [m.get("text") for m in requests[2]] == [None, "first question", "first answer", "question in the fork"]
    assert [m.get("text") for m in requests[3]] == [None, "question in the new session"]
    appended = [line for line in lines if line["type"] == "before_agent_start"]
    assert ["result" in line for line in appended] == [True, False, True, True]  # fresh extension state each time


def test_a_cancelled_replacement_leaves_the_session_as_it_was() -> None:
    lines = _corpus("app-session-replacement-cancelled")
    resolved = [line for line in lines if line["type"] == "step_resolved" and "cancelled" in line]
    # the handler is asked before Pi checks the entry: a fork before an assistant message is cancelled too
    assert [line["cancelled"] for line in resolved] == [True, True, True]
    assert not [line for line in lines if line["type"] == "step_rejected"]
    assert not [line for line in lines if line["type"] == "session_shutdown"]


def test_resume_switches_to_the_session_file_in_the_project() -> None:
    lines = _corpus("app-resume")
    target = "<home>/project/sessions/earlier.jsonl"
    assert _lifecycle(lines) == [
        ("session_start", "startup"),
        ("session_before_switch", "resume", target),
        ("session_shutdown", "resume", target),
        ("session_start", "resume"),
    ]
    tree = next(line for line in lines if line["source"] == "tree")
    assert [e.get("text") for e in tree["entries"] if e["type"] == "message"] == [
        "an earlier question",
        "an earlier answer",
    ]
    request = [line["messages"] for line in lines if line["source"] == "model"][1]
    assert [m["role"] for m in request] == ["user", "assistant", "system", "user"]


def test_a_resume_step_names_a_missing_file_in_one_line_on_the_stand_in() -> None:
    doc = _with(project={"files": {"s.jsonl": ""}}, steps=[{"do": "resume", "path": "s.jsonl"}])
    scenario = parse_scenario(doc)
    lines = run_on_standin(scenario.model_copy(update={"project": scenario.project.model_copy(update={"files": {}})}))
    assert [line["error"] for line in lines if line["type"] == "step_rejected"] == [
        "Session file does not exist: <home>/project/s.jsonl"
    ]


def test_a_fork_before_a_message_that_is_not_a_user_message_is_refused() -> None:
    doc = _with(steps=[{"do": "fork", "target": {"role": "assistant", "text": "Hi."}}, {"do": "snapshot"}])
    lines = run_on_standin(parse_scenario(doc))
    assert [line["error"] for line in lines if line["type"] == "step_rejected"] == ["Invalid entry ID for forking"]


def _differs_under(monkeypatch: pytest.MonkeyPatch, scenario_id: str, target: Any, name: str, value: Any) -> bool:
    monkeypatch.setattr(target, name, value)
    return project(_corpus(scenario_id), projection="full") != project(_recorded(scenario_id), projection="full")


def test_the_comparison_catches_a_stand_in_that_forgets_the_branchs_thinking_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pinb.app.settlement import SettlementMixin

    assert _differs_under(
        monkeypatch, "app-target-entry-types", SettlementMixin, "_record_selection", lambda self: None
    )


def test_the_comparison_catches_a_branch_summary_without_pis_preamble(monkeypatch: pytest.MonkeyPatch) -> None:
    from pinb.app import branch_summary

    assert _differs_under(monkeypatch, "app-navigate-branch-summary", branch_summary, "BRANCH_SUMMARY_PREAMBLE", "")


def test_the_comparison_catches_a_reload_that_keeps_the_old_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    from pinb.app import session_reload

    async def keep(session: Any) -> None:
        return None

    assert _differs_under(monkeypatch, "app-reload", session_reload, "reload_session", keep)


def test_the_comparison_catches_a_replacement_without_session_shutdown(monkeypatch: pytest.MonkeyPatch) -> None:
    from pinb.app.session import AgentSession

    async def dispose_only(self: Any, reason: str = "quit", target_session_file: str | None = None) -> None:
        self.dispose()

    assert _differs_under(monkeypatch, "app-new-session-fork", AgentSession, "shutdown", dispose_only)
    assert _differs_under(monkeypatch, "app-resume", AgentSession, "shutdown", dispose_only)


def test_a_session_before_tree_handler_replaces_the_instructions_and_the_label() -> None:
    lines = _corpus("app-navigate-summary-handler-instructions")
    request = [line["messages"] for line in lines if line["source"] == "model"][-1]
    assert request[1]["text"].endswith("</conversation>\n\nSay it in one line.")
    tree = next(line for line in lines if line["source"] == "tree")
    summary = next(e for e in tree["entries"] if e["type"] == "branch_summary")
    assert summary["label"] == "from-handler"


def test_a_prompt_queued_at_settle_runs_after_it_and_the_settling_prompt_waits_for_it() -> None:
    lines = _corpus("app-queue-prompt-at-settle")
    kinds = [line["type"] for line in lines if line["type"] in ("agent_settled", "prompt_resolved", "queue")]
    assert kinds == ["agent_settled", "queue", "agent_settled", "prompt_resolved"]


def test_compaction_entries_are_targets_for_navigation_labels_and_forks() -> None:
    lines = _corpus("app-target-compaction-entries")
    assert not [line for line in lines if line["type"] == "step_rejected"]
    before_fork, after_fork = [line for line in lines if line["source"] == "tree"]
    compactions = [e for e in before_fork["entries"] if e["type"] == "compaction"]
    assert len(compactions) == 2 and compactions[0]["label"] == "first-compaction"
    # the fork at the 2nd compaction: its path ends there (the label on the 1st re-appended after it)
    leaf = next(e for e in before_fork["entries"] if e["id"] == before_fork["leaf"])
    assert leaf["type"] == "label" and leaf["targetId"] == compactions[0]["id"]
    assert compactions[1]["id"] in before_fork["branch"]
    texts = [e.get("text") for e in after_fork["entries"] if e["type"] == "message"]
    assert "from the second compaction" not in texts and texts[-2:] == ["in the fork", texts[-1]]
