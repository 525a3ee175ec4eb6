"""The scenario corpus and its recorded real-Pi traces (offline: no Node, no network)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"
TRACES = SCENARIOS / "traces"
SHARED = ROOT / ".." / "shared"
STREAM_TYPES = {"message_update", "tool_execution_update"}
COMPARED_SOURCES = {"agent", "session", "ext", "model"}
#: pinb's application-layer extension: written only when a scenario asks for them.
APP_SOURCES = {"request", "tree"}


def _scenarios() -> list[Path]:
    found = []
    for path in sorted(SCENARIOS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "layer" in data and "responses" in data:
            found.append(path)
    return found


CORPUS = _scenarios()
IDS = [p.stem for p in CORPUS]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _trace(version: str, scenario_id: str) -> list[dict]:
    path = TRACES / f"pi-{version}" / f"{scenario_id}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_corpus_is_large_enough_and_covers_both_layers() -> None:
    layers = [_load(p)["layer"] for p in CORPUS]
    assert len(CORPUS) >= 30
    assert layers.count("agent") >= 10 and layers.count("app") >= 10


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_scenario_validates_against_the_committed_schema(path: Path) -> None:
    import jsonschema

    from ._schema import pinb_schema

    assert [e.message for e in jsonschema.Draft202012Validator(pinb_schema()).iter_errors(_load(path))] == []


def test_every_document_the_shared_contract_accepts_the_committed_schema_accepts() -> None:
    """The compatibility floor: every corpus scenario and every example of the original shared contract that the
    contract's schema accepts, the committed schema and the models accept too (pinb only adds optional fields)."""
    import jsonschema

    from pinb.scenario.model import parse_scenario

    from ._schema import SHARED_SCHEMA, contract_schema, pinb_schema

    if not SHARED_SCHEMA.is_file():
        pytest.skip("the original shared contract is not next to this checkout (the committed schema is checked)")
    contract = jsonschema.Draft202012Validator(contract_schema())
    ours = jsonschema.Draft202012Validator(pinb_schema())
    examples = sorted((SHARED / "scenarios").glob("*.json"))
    accepted = [path for path in [*CORPUS, *examples] if contract.is_valid(_load(path))]
    for path in accepted:
        assert [e.message for e in ours.iter_errors(_load(path))] == [], path.name
        parse_scenario(_load(path))
    assert len(accepted) >= 30 and examples


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_scenario_id_is_its_file_name_and_a_plain_slug(path: Path) -> None:
    scenario_id = _load(path)["id"]
    assert scenario_id == path.stem
    assert re.fullmatch(r"[a-z0-9][a-z0-9._-]*", scenario_id)


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_every_scenario_has_a_recorded_pi_160_trace(path: Path) -> None:
    assert (TRACES / "pi-1.6.0" / f"{path.stem}.jsonl").is_file()


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_agent_scenarios_have_a_103_trace_and_app_scenarios_none(path: Path) -> None:
    recorded = (TRACES / "pi-1.0.3" / f"{path.stem}.jsonl").is_file()
    assert recorded == (_load(path)["layer"] == "agent")


@pytest.mark.parametrize("version", ["1.6.0", "1.0.3"])
def test_provenance_matches_the_committed_runner_and_scenarios(version: str) -> None:
    provenance = _load(TRACES / f"pi-{version}" / "PROVENANCE.json")
    runner = ROOT / "reference" / "runner.mjs"
    assert provenance["runner_sha256"] == hashlib.sha256(runner.read_bytes()).hexdigest()
    worker = ROOT / "reference" / "worker.mjs"
    assert provenance["worker_sha256"] == hashlib.sha256(worker.read_bytes()).hexdigest()
    assert set(provenance["confinement"]) == {"node_permissions", "network_namespace"}
    assert provenance["pi_version"] == version
    assert provenance["packages"]["@earendil-works/pi-agent-core"] == version
    assert re.fullmatch(r"v\d+\.\d+\.\d+", provenance["node"])
    for scenario_id, digest in provenance["scenarios"].items():
        path = SCENARIOS / f"{scenario_id}.json"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{scenario_id} changed since it was recorded"
    recorded = {p.stem for p in (TRACES / f"pi-{version}").glob("*.jsonl")}
    assert recorded == set(provenance["scenarios"])


def _all_traces() -> list[tuple[str, str]]:
    folders = sorted(TRACES.glob("pi-*"))
    return [(d.name.removeprefix("pi-"), p.stem) for d in folders for p in sorted(d.glob("*.jsonl"))]


@pytest.mark.parametrize(("version", "scenario_id"), _all_traces())
def test_recorded_trace_follows_the_trace_format(version: str, scenario_id: str) -> None:
    lines = _trace(version, scenario_id)
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    meta = lines[0]
    expected = ("meta", "scenario", scenario_id, f"pi@{version}")
    assert (meta["source"], meta["type"], meta["id"], meta["backend"]) == expected
    calls: list[str] = []
    entries: list[str] = []
    for line in lines:
        assert list(line)[:3] == ["seq", "source", "type"]
        assert line["source"] in {"meta", "driver", "error", *COMPARED_SOURCES, *APP_SOURCES}
        assert (line.get("stream") is True) == (line["type"] in STREAM_TYPES)
        text = json.dumps(line)
        assert "null" not in re.sub(r'"(?:[^"\\]|\\.)*"', '""', text), "a null value was written"
        for label in re.findall(r'"(call#\d+)"', text):
            if label not in calls:
                calls.append(label)
        for label in re.findall(r'"(entry#\d+)"', text):
            if label not in entries:
                entries.append(label)
        assert "timestamp" not in line and "usage" not in line
    assert calls == [f"call#{n}" for n in range(1, len(calls) + 1)]
    assert entries == [f"entry#{n}" for n in range(1, len(entries) + 1)]


@pytest.mark.parametrize(("version", "scenario_id"), _all_traces())
def test_recorded_trace_model_requests_count_up(version: str, scenario_id: str) -> None:
    requests = [line["n"] for line in _trace(version, scenario_id) if line["source"] == "model"]
    assert requests == list(range(1, len(requests) + 1))


def test_scripted_tool_call_ids_never_reach_a_trace() -> None:
    for version, scenario_id in _all_traces():
        text = (TRACES / f"pi-{version}" / f"{scenario_id}.jsonl").read_text(encoding="utf-8")
        scenario = _load(SCENARIOS / f"{scenario_id}.json")
        for response in scenario["responses"]:
            for block in response["content"]:
                if block.get("id"):
                    assert f'"{block["id"]}"' not in text


def test_chapter_16_trace_shows_the_guard_blocking_after_tool_execution_start() -> None:
    lines = [line for line in _trace("1.6.0", "ch16-guard-force-push") if line["source"] in COMPARED_SOURCES]
    kinds = [(line["source"], line["type"]) for line in lines]
    start = kinds.index(("session", "tool_execution_start"))
    assert kinds[start + 1] == ("ext", "tool_call")
    guard = lines[start + 1]
    assert guard["result"]["block"] is True and guard["result"]["reason"].startswith("Guard blocked: ")
    end = lines[start + 2]
    assert (end["type"], end["isError"], end["text"]) == ("tool_execution_end", True, guard["result"]["reason"])
    assert not any(line["type"] == "tool_result" for line in lines)


def test_chapter_01_trace_prints_what_the_book_prints() -> None:
    lines = _trace("1.6.0", "ch01-word-count")
    stops = [line["stopReason"] for line in lines if line["type"] == "message_end" and line.get("role") == "assistant"]
    tools = [(line["toolName"], line["details"]) for line in lines if line["type"] == "tool_execution_end"]
    assert stops == ["toolUse", "stop"]
    assert tools == [("word_count", {"words": 4})]
