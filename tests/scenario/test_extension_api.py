"""The extension API items of the scenario format: declarative actions (append_entry, send_message,
send_user_message, set_model), extension commands and the command step, model changes (a set_model step,
model.others), terminate results, tool prompt lines and handler occurrences.

Each has a corpus scenario recorded on real Pi 1.6.0 that the stand-in conforms to on every field
(test_conformance.py); these tests pin what the recorded traces show, so that a regression in the stand-in's port
is named here, and the grammar's rules.
"""

from __future__ import annotations

from typing import Any

import pytest

from pinb.errors import ScenarioError
from pinb.scenario.corpus import corpus_dir, read_recorded
from pinb.scenario.model import load_scenario, parse_scenario
from pinb.scenario.standin import run_on_standin

from ._schema import app_document

NEW = (
    "app-extension-api-messages",
    "app-extension-api-delivery",
    "app-extension-commands",
    "app-extension-commands-same-name",
    "app-extension-source-command",
    "app-set-model",
    "agent-terminate-batch",
    "app-tool-prompt-snippet",
    "app-handler-occurrences",
)


def _standin(scenario_id: str) -> list[dict[str, Any]]:
    return run_on_standin(load_scenario(corpus_dir() / f"{scenario_id}.json"))


def _lines(trace: list[dict[str, Any]], source: str, type_: str) -> list[dict[str, Any]]:
    return [line for line in trace if line["source"] == source and line["type"] == type_]


@pytest.mark.parametrize("scenario_id", NEW)
def test_each_item_is_recorded_on_pi_1_6_0(scenario_id: str) -> None:
    assert read_recorded(scenario_id, "1.6.0") is not None


def test_terminate_is_recorded_on_pi_1_0_3_too() -> None:
    recorded = read_recorded("agent-terminate-batch", "1.0.3")
    assert recorded is not None
    assert len(_lines(recorded, "model", "request")) == 2


@pytest.mark.parametrize("version", ["1.6.0", "1.0.3"])
def test_a_batch_ends_the_run_only_when_every_result_terminates(version: str) -> None:
    # Two batches: {finish, note} goes on, {finish, finish} ends the run; the third reply is never asked for.
    recorded = read_recorded("agent-terminate-batch", version)
    trace = _standin("agent-terminate-batch")
    for lines in (recorded, trace):
        assert lines is not None
        assert [line["n"] for line in _lines(lines, "model", "request")] == [1, 2]
        ends = [line["toolName"] for line in _lines(lines, "agent", "tool_execution_end")]
        assert ends == ["finish", "note", "finish", "finish"]


def test_actions_append_send_and_prompt_as_pi_does() -> None:
    trace = _standin("app-extension-api-messages")
    appended = _lines(trace, "session", "entry_appended")
    assert (appended[0]["entryType"], appended[0].get("customType")) == ("custom", "state")
    requests = _lines(trace, "model", "request")
    # The steered custom message reaches the second request as a user message; nextTurn waits for the next prompt.
    assert {"role": "user", "text": "Noted by the extension."} in requests[1]["messages"]
    assert not any(m.get("text") == "For the next prompt." for m in requests[1]["messages"])
    assert any(m.get("text") == "For the next prompt." for m in requests[2]["messages"])
    inputs = [line["inputSource"] for line in _lines(trace, "ext", "input")]
    assert inputs == ["interactive", "extension"]
    snapshot = _lines(trace, "tree", "snapshot")[0]
    custom = [e for e in snapshot["entries"] if e["type"] == "custom"]
    assert custom == [
        {
            "id": custom[0]["id"],
            "parentId": custom[0]["parentId"],
            "type": "custom",
            "customType": "state",
            "data": {"count": 1},
        }
    ]


def test_delivery_follows_deliver_as_and_trigger_turn() -> None:
    trace = _standin("app-extension-api-delivery")
    # The follow-up is queued while the first turn's handler still runs, and waits for the run's last turn.
    queued = [line["followUp"] for line in _lines(trace, "session", "queue_update")]
    assert queued[0] == ["And then?"]
    types = [(line["source"], line["type"]) for line in trace]
    assert types.index(("session", "queue_update")) < types.index(("ext", "turn_end"))
    requests = _lines(trace, "model", "request")
    assert [m.get("text") for m in requests[2]["messages"]][-1] == "And then?"
    # triggerTurn from agent_settled starts a run from the custom message; without it, it is only appended.
    starts = [line["messageType"] for line in _lines(trace, "ext", "before_agent_start")]
    assert starts == ["user", "custom"]
    # Steered while streaming: in the run's first request. Without deliverAs while streaming: rejected.
    assert {"role": "user", "text": "Steered aside."} in requests[0]["messages"]
    errors = [(e["extension"], e["event"]) for e in _lines(trace, "error", "extension_error")]
    assert errors == [("<runtime>", "send_user_message")]
    rejected = types.index(("error", "extension_error"))
    assert types[rejected - 1] == ("ext", "turn_end") and trace[rejected - 1]["handler"] == "rejected"
    assert len(requests) == 4
    assert not any(m.get("text") == "Only appended." for r in requests for m in r["messages"])


def test_model_changes_record_clamp_and_announce() -> None:
    trace = _standin("app-set-model")
    models = [line["model"] for line in _lines(trace, "request", "inputs")]
    assert models == ["faux/faux-1", "faux/faux-big", "faux/faux-big"]
    selected = [(line["previousModel"], line["model"]) for line in _lines(trace, "ext", "model_select")]
    # The last step selects the current model again: no model_select, but still a model_change entry.
    assert selected == [("faux/faux-1", "faux/faux-small"), ("faux/faux-small", "faux/faux-big")]
    snapshot = _lines(trace, "tree", "snapshot")[0]
    changes = [e["modelId"] for e in snapshot["entries"] if e["type"] == "model_change"]
    assert changes == ["faux-1", "faux-small", "faux-big", "faux-big"]
    levels = [e["thinkingLevel"] for e in snapshot["entries"] if e["type"] == "thinking_level_change"]
    assert levels == ["medium", "off"]


def test_commands_run_instead_of_the_model_and_report_their_errors() -> None:
    trace = _standin("app-extension-commands")
    commands = _lines(trace, "ext", "command")
    assert [(c["command"], c["args"], c.get("error")) for c in commands] == [
        ("remember", "", None),
        ("note", "the build is green", None),
        ("ask", "summarise", None),
        ("fail", "now", "command failed"),
    ]
    errors = _lines(trace, "error", "extension_error")
    assert [(e["extension"], e["event"]) for e in errors] == [("command:fail", "command")]
    # A command never fires input itself; the user message /ask sends does (source extension), as does /unknown.
    inputs = [
        (line["text"], line["inputSource"]) for line in _lines(trace, "ext", "input") if line["handler"] == "input"
    ]
    assert inputs == [
        ("Hello.", "interactive"),
        ("Please summarise.", "extension"),
        ("/unknown x", "interactive"),
    ]
    starts = [line["messageType"] for line in _lines(trace, "ext", "before_agent_start")]
    assert starts == ["user", "custom", "user", "user"]


def test_a_command_step_resolves_after_the_run_it_started() -> None:
    trace = _standin("app-extension-commands")
    recorded = read_recorded("app-extension-commands", "1.6.0")
    assert recorded is not None
    for lines in (trace, recorded):
        kinds = [(line["source"], line["type"]) for line in lines]
        runs = []
        for i, line in enumerate(lines):
            if line["source"] == "driver" and line["type"] == "step" and line["do"] == "command":
                end = kinds.index(("driver", "step_resolved"), i)
                inside = kinds[i:end]
                runs.append(line["text"].split()[0])
                if ("session", "agent_start") in inside:
                    # The run the command started settled before the step resolved.
                    assert inside.index(("session", "agent_settled")) > inside.index(("session", "agent_start"))
                else:
                    runs[-1] += " (no run)"
        assert runs == ["/remember (no run)", "/note", "/ask", "/fail (no run)", "/unknown"]


def test_prompt_lines_follow_the_active_tools() -> None:
    trace = _standin("app-tool-prompt-snippet")
    prompts = [line["systemPrompt"] for line in _lines(trace, "request", "inputs")]
    first, last = prompts[0], prompts[-1]
    assert "- word_count: Count the words in a text" in first
    assert "- Use word_count for every counting question." in first
    assert "- Use echo only when asked to repeat." in first
    assert "silent" not in first
    assert "word_count" not in last and "- Use echo only when asked to repeat." in last


def test_occurrences_limit_the_action_to_the_listed_invocations() -> None:
    trace = _standin("app-handler-occurrences")
    inject = [("result" in line) for line in _lines(trace, "ext", "before_agent_start")]
    assert inject == [False, True, False]
    fails = [("error" in line) for line in _lines(trace, "ext", "input")]
    assert fails == [True, False, True]
    appended = [line.get("customType") for line in _lines(trace, "session", "entry_appended")]
    assert appended.count("mark") == 1


def _with(**fields: Any) -> dict[str, Any]:
    return app_document("api", **fields)


def _ext(*handlers: dict[str, Any], commands: tuple[dict[str, Any], ...] = ()) -> list[dict[str, Any]]:
    return [{"name": "x", "handlers": list(handlers), "commands": list(commands)}]


VALID = [
    _with(extensions=_ext({"event": "turn_end", "action": {"kind": "append_entry", "customType": "s", "data": [1]}})),
    _with(
        extensions=_ext(
            {
                "event": "agent_end",
                "action": {
                    "kind": "send_message",
                    "customType": "n",
                    "content": "c",
                    "triggerTurn": True,
                    "deliverAs": "followUp",
                },
            }
        )
    ),
    _with(
        extensions=_ext(
            {
                "event": "agent_settled",
                "action": {
                    "kind": "send_user_message",
                    "text": "t",
                    "deliverAs": "steer",
                    "expandPromptTemplates": True,
                },
            }
        )
    ),
    _with(model={"others": [{"id": "b"}]}, steps=[{"do": "set_model", "model": "b"}]),
    _with(model={"id": "a"}, extensions=_ext({"event": "agent_start", "action": {"kind": "set_model", "model": "a"}})),
    _with(
        extensions=_ext(commands=({"name": "go", "action": {"kind": "record"}},)),
        steps=[{"do": "command", "text": "/go x"}],
    ),
    _with(extensions=_ext({"event": "input", "occurrences": [1, 3], "action": {"kind": "record"}})),
    _with(
        tools=[
            {
                "name": "t",
                "behavior": {"kind": "return", "terminate": True},
                "prompt_snippet": "s",
                "prompt_guidelines": ["g"],
            }
        ]
    ),
]

INVALID = [
    _with(steps=[{"do": "set_model", "model": "nowhere"}]),
    _with(extensions=_ext({"event": "agent_start", "action": {"kind": "set_model", "model": "b"}})),
    _with(model={"others": [{"id": "faux-1"}]}),
    _with(steps=[{"do": "command", "text": "go"}]),
    _with(extensions=_ext(commands=({"name": "a b", "action": {"kind": "record"}},))),
    _with(extensions=_ext(commands=({"name": "go", "action": {"kind": "mutate_input", "set": {}}},))),
    _with(extensions=_ext({"event": "input", "occurrences": [], "action": {"kind": "record"}})),
    _with(extensions=_ext({"event": "input", "occurrences": [0], "action": {"kind": "record"}})),
    _with(
        extensions=_ext(
            {"event": "turn_end", "occurrences": [2], "action": {"kind": "append_entry", "customType": "s", "at": 2}}
        )
    ),
    _with(
        extensions=_ext(
            {
                "event": "turn_end",
                "action": {"kind": "send_message", "customType": "n", "content": "c", "deliverAs": "later"},
            }
        )
    ),
    {**_with(tools=[{"name": "t", "behavior": {"kind": "return"}, "prompt_snippet": "s"}]), "layer": "agent"},
]


@pytest.mark.parametrize("document", VALID)
def test_valid_documents_parse(document: dict[str, Any]) -> None:
    parse_scenario(document)


@pytest.mark.parametrize("document", INVALID)
def test_invalid_documents_are_refused_in_one_line(document: dict[str, Any]) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(document)
    assert "\n" not in str(caught.value)


def test_chapter_builders_write_commands_and_occurrences() -> None:
    from pinb.chapters import scenarios as sc

    document = sc.app(
        "built",
        "Hello.",
        [sc.text("Hi.")],
        extensions=[
            sc.extension(
                "e",
                sc.handler("input", "h", "throw", message="m", occurrences=[2]),
                commands=(sc.command("go", "append_entry", customType="c"),),
            )
        ],
        steps=[{"do": "command", "text": "/go"}],
    )
    scenario = parse_scenario(document)
    assert scenario.extensions[0].handlers[0].occurrences == (2,)
    assert scenario.extensions[0].commands[0].action.kind == "append_entry"
    assert sc.extension("plain", sc.handler("input", "h")) == {
        "name": "plain",
        "handlers": [{"event": "input", "label": "h", "action": {"kind": "record"}}],
    }


def test_commands_of_the_same_name_take_numeric_suffixes_in_load_order() -> None:
    trace = _standin("app-extension-commands-same-name")
    ran = [(line["extension"], line["command"]) for line in _lines(trace, "ext", "command")]
    assert ran == [("b", "go"), ("a", "go")]
    # A bare /go names neither command: it is an ordinary prompt.
    assert _lines(trace, "model", "request")[-1]["messages"][-1] == {"role": "user", "text": "/go"}
