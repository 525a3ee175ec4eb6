"""Chapter 01's claims as properties: each holds on its hand witness and on generated ones (stand-in), an edit that
keeps the premise keeps the verdict, one that removes it says NOT EXERCISED, and every named fault flips its claim."""

from __future__ import annotations

import collections
import copy
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from pinb.chapters.backends import run_standin_sync
from pinb.chapters.ch01 import assembly as asm
from pinb.chapters.ch01 import experiments as ex
from pinb.chapters.ch01 import faults as chapter_faults
from pinb.chapters.ch01 import props_packages as pp
from pinb.chapters.ch01.properties import FACT_PROPERTIES, PROGRAM_PROPERTIES, SCENARIO_PROPERTIES
from pinb.chapters.ledger import load_ledger
from pinb.chapters.properties import Property, Witness, WitnessVerdict, judge_witness
from pinb.scenario.model import parse_scenario
from pinb.testing.faults import injected

LEDGER = load_ledger(Path(ex.__file__).with_name("ledger.yaml"))
#: Generated witnesses per property in the suite (seeded); `pinb claims check-properties` checks 50 by default,
#: and PINB_SUITE_WITNESSES=50 runs the suite at that depth.
GENERATED = int(os.environ.get("PINB_SUITE_WITNESSES", "12"))


def check(prop: Property, scenarios: dict[str, dict[str, Any]], name: str = "hand") -> WitnessVerdict:
    traces = {key: run_standin_sync(scenario) for key, scenario in scenarios.items()}
    return judge_witness(prop, Witness(name, scenarios, traces))


def hand(experiment: str) -> dict[str, dict[str, Any]]:
    return SCENARIO_PROPERTIES[experiment].hand({})


def test_every_runnable_claim_has_a_property_covers_and_the_experiment() -> None:
    runnable = [c for c in LEDGER.claims if c.kind == "runnable"]
    assert len(runnable) == 56
    properties = {**SCENARIO_PROPERTIES, **FACT_PROPERTIES, **PROGRAM_PROPERTIES}
    assert {c.experiment_name for c in runnable} == set(properties)
    assert all(c.covers for c in runnable)
    assert all(SCENARIO_PROPERTIES[e].family is not None for e in SCENARIO_PROPERTIES)


@pytest.mark.parametrize("experiment", sorted(SCENARIO_PROPERTIES))
def test_hand_witness_is_observed_on_the_standin(experiment: str) -> None:
    verdict = check(SCENARIO_PROPERTIES[experiment], hand(experiment))
    assert verdict.status == "OBSERVED", verdict.evidence


@pytest.mark.parametrize("experiment", sorted(SCENARIO_PROPERTIES))
def test_generated_witnesses_are_observed_and_mostly_exercised(experiment: str) -> None:
    prop = SCENARIO_PROPERTIES[experiment]
    assert prop.family is not None
    seen: collections.Counter[str] = collections.Counter()
    bad: list[str] = []

    @settings(
        max_examples=GENERATED,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(prop.family({}))
    def run(scenarios: dict[str, dict[str, Any]]) -> None:
        for key, scenario in scenarios.items():
            parse_scenario(dict(scenario), source=key)  # every drawn scenario is a valid one
        verdict = check(prop, scenarios, "generated")
        seen[verdict.status] += 1
        if verdict.status not in ("OBSERVED", "NOT EXERCISED"):
            bad.append(f"{verdict.status}: {verdict.evidence} {verdict.error}")

    run()
    assert not bad, bad[:2]
    assert sum(seen.values()) >= GENERATED
    assert seen["NOT EXERCISED"] < 0.2 * sum(seen.values()), seen


# --- reader's edits -----------------------------------------------------------------------------------------------


def _sequential(s: dict[str, dict[str, Any]]) -> None:
    s["two-tools"]["settings"]["tool_execution"] = "sequential"


def _no_tool_calls(s: dict[str, dict[str, Any]]) -> None:
    for scenario in s.values():
        scenario["responses"] = [r for r in scenario["responses"] if r.get("stopReason") != "toolUse"]


def _claude_md_in_the_working_directory(s: dict[str, dict[str, Any]]) -> None:
    files = s["context-files"]["project"]["files"]
    files["app/CLAUDE.md"] = files.pop("app/AGENTS.md")


def _no_context_files(s: dict[str, dict[str, Any]]) -> None:
    for key in ("context-files", "claude-md"):
        s[key]["project"]["files"] = {}


def _queued_in_another_order(s: dict[str, dict[str, Any]]) -> None:
    for scenario in s.values():
        queued = [q for q in scenario["queue"] if q["do"] != "abort"]
        scenario["queue"] = [*reversed(queued), *(q for q in scenario["queue"] if q["do"] == "abort")]


def _no_abort(s: dict[str, dict[str, Any]]) -> None:
    for scenario in s.values():
        scenario["queue"] = [q for q in scenario["queue"] if q["do"] != "abort"]


def _other_questions(s: dict[str, dict[str, Any]]) -> None:
    scenario = s["edit"]
    scenario["prompt"] = ["what is a turn", "what is a run"]
    scenario["steps"][0]["target"]["text"] = "what is a run"


def _no_going_back(s: dict[str, dict[str, Any]]) -> None:
    s["edit"]["steps"] = [step for step in s["edit"]["steps"] if step["do"] != "navigate"]


def _other_mutation(s: dict[str, dict[str, Any]]) -> None:
    s["hook-mutates"]["hooks"]["before_tool_call"]["set"]["text"] = "a b c d e f g"


def _mutation_keeps_the_count(s: dict[str, dict[str, Any]]) -> None:
    s["hook-mutates"]["hooks"]["before_tool_call"]["set"]["text"] = "other words"


def _longer_preface(s: dict[str, dict[str, Any]]) -> None:
    s["text-and-call"]["responses"][0]["content"][0]["text"] = "Let me count those words for you."


def _no_preface(s: dict[str, dict[str, Any]]) -> None:
    content = s["text-and-call"]["responses"][0]["content"]
    s["text-and-call"]["responses"][0]["content"] = [b for b in content if b["type"] != "text"]


def _five_turns(s: dict[str, dict[str, Any]]) -> None:
    scenario = s["compact"]
    scenario["prompt"] = [*scenario["prompt"], f"question 4{asm.WORDS}"]
    scenario["responses"].insert(4, {"content": [{"type": "text", "text": f"answer 4{asm.WORDS}"}]})


def _no_compaction(s: dict[str, dict[str, Any]]) -> None:
    s["compact"]["steps"] = [step for step in s["compact"]["steps"] if step["do"] != "compact"]


EDITS = {
    "loop.turn-shape": (_sequential, _no_tool_calls),
    "context.agents-md-by-directory": (_claude_md_in_the_working_directory, _no_context_files),
    "queue.abort-keeps-queued": (_queued_in_another_order, _no_abort),
    "tree.active-branch-supplies-history": (_other_questions, _no_going_back),
    "seam.before-tool-call-mutation": (_other_mutation, _mutation_keeps_the_count),
    "loop.response-text-and-tool-calls": (_longer_preface, _no_preface),
    "compaction.entries-stay": (_five_turns, _no_compaction),
}


@pytest.mark.parametrize("experiment", sorted(EDITS))
def test_an_edit_keeping_the_premise_keeps_the_verdict_and_one_removing_it_is_not_exercised(experiment: str) -> None:
    keep, remove = EDITS[experiment]
    prop = SCENARIO_PROPERTIES[experiment]
    kept, removed = copy.deepcopy(hand(experiment)), copy.deepcopy(hand(experiment))
    keep(kept)
    remove(removed)
    assert check(prop, kept, "edited").status == "OBSERVED"
    verdict = check(prop, removed, "edited")
    assert verdict.status == "NOT EXERCISED", verdict.evidence


# --- named faults -------------------------------------------------------------------------------------------------

FAULTED = sorted(
    (c.experiment_name, f) for c in LEDGER.claims if c.experiment_name in SCENARIO_PROPERTIES for f in c.faults
)


@pytest.mark.parametrize(("experiment", "fault"), FAULTED)
def test_each_named_fault_flips_its_claim(experiment: str, fault: str) -> None:
    scenarios = hand(experiment)
    with injected(fault):
        traces = {key: run_standin_sync(s) for key, s in scenarios.items()}
    verdict = judge_witness(SCENARIO_PROPERTIES[experiment], Witness("hand", scenarios, traces))
    assert verdict.status == "CONTRADICTED", verdict.evidence


#: Chapter 01's own faults (its `faults.py`), with the claim each one flips.
CHAPTER_FAULTS = {
    "system-md-drops-context-files": "context.system-md-replaces",
    "claude-md-not-loaded": "context.agents-md-by-directory",
    "overflow-compacts-without-retry": "run.agent-end-not-the-end",
    "abort-misses-running-tool": "queue.abort-keeps-queued",
    "session-abort-clears-queues": "queue.abort-keeps-queued",
}


def test_every_chapter_fault_is_named_by_a_claim() -> None:
    named = {f for c in LEDGER.claims for f in c.faults}
    assert set(chapter_faults.FAULTS) == set(CHAPTER_FAULTS)
    assert set(chapter_faults.FAULTS) <= named


@pytest.mark.parametrize("fault", sorted(CHAPTER_FAULTS))
def test_chapter_faults_fail_the_property(fault: str) -> None:
    experiment = CHAPTER_FAULTS[fault]
    scenarios = hand(experiment)
    with injected(fault):
        traces = {key: run_standin_sync(s) for key, s in scenarios.items()}
    assert judge_witness(SCENARIO_PROPERTIES[experiment], Witness("hand", scenarios, traces)).status == "CONTRADICTED"


# --- package facts and the book's program: witnesses are releases ----------------------------------------------------

#: What the recorded releases say (the findings in the README's ledger table).
RECORDED = {
    "1.6.0": {
        "packages.graph": "CONTRADICTED",
        "packages.ai-model-access-only": "OBSERVED",
        "packages.coding-agent-composes": "CONTRADICTED",
        "packages.core-size": "OBSERVED",
        "packages.pinned-release": "CONTRADICTED",
        "example.three-lines": "CONTRADICTED",
        "example.node-runs-typescript": "OBSERVED",
        "example.runs-on-pinned-packages": "CONTRADICTED",
    },
    "1.0.3": {
        "packages.graph": "OBSERVED",
        "packages.ai-model-access-only": "NOT EXERCISED",
        "packages.coding-agent-composes": "OBSERVED",
        "packages.core-size": "OBSERVED",
        "packages.pinned-release": "CONTRADICTED",
        "example.three-lines": "OBSERVED",
        "example.node-runs-typescript": "OBSERVED",
        "example.runs-on-pinned-packages": "OBSERVED",
    },
}


@pytest.mark.parametrize("version", sorted(RECORDED))
def test_release_witnesses_give_the_recorded_verdicts(version: str) -> None:
    facts, program = pp.recorded_facts_witness(version), pp.program_witness(version)
    for experiment, status in RECORDED[version].items():
        prop, witness = (
            (FACT_PROPERTIES[experiment], facts)
            if experiment in FACT_PROPERTIES
            else (PROGRAM_PROPERTIES[experiment], program)
        )
        assert judge_witness(prop, witness).status == status, experiment


#: The package claims on the releases between (facts only: the book's program is run live there). The graph changed
#: in 1.5.0 (pi-agent-core's typebox became pi-schema); chord left pi-coding-agent's dependencies after 1.0.3.
BETWEEN = {
    "packages.graph": {"1.3.0": "OBSERVED", "1.4.0": "OBSERVED", "1.5.0": "CONTRADICTED", "1.5.2": "CONTRADICTED"},
    "packages.coding-agent-composes": dict.fromkeys(("1.3.0", "1.4.0", "1.5.0", "1.5.2"), "CONTRADICTED"),
    "packages.pinned-release": dict.fromkeys(("1.3.0", "1.4.0", "1.5.0", "1.5.2"), "CONTRADICTED"),
    "packages.ai-model-access-only": dict.fromkeys(("1.3.0", "1.4.0", "1.5.0", "1.5.2"), "OBSERVED"),
    "packages.core-size": dict.fromkeys(("1.3.0", "1.4.0", "1.5.0", "1.5.2"), "OBSERVED"),
}


@pytest.mark.parametrize("version", ["1.3.0", "1.4.0", "1.5.0", "1.5.2"])
def test_the_releases_between_give_their_recorded_package_verdicts(version: str) -> None:
    facts = pp.recorded_facts_witness(version)
    assert version in pp.releases()
    for experiment, by_release in BETWEEN.items():
        assert judge_witness(FACT_PROPERTIES[experiment], facts).status == by_release[version], experiment


def test_a_changed_fact_flips_the_package_claims() -> None:
    witness = pp.recorded_facts_witness("1.0.3")
    facts = witness.params["facts"]
    manifests = dict(facts.facts.manifests)
    core = manifests[pp.pk.CORE]
    manifests[pp.pk.CORE] = core.model_copy(update={"dependencies": {**core.dependencies, pp.pk.TUI: "^1"}})
    changed = facts.facts.model_copy(update={"manifests": manifests, "agent_core_depends_on_tui": True})
    edited = Witness("edited", {}, {}, {**witness.params, "facts": pp.pk.Facts(changed, facts.source, facts.extra)})
    assert judge_witness(FACT_PROPERTIES["packages.graph"], edited).status == "CONTRADICTED"
    tui = dict(facts.extra)
    tui[pp.pk.TUI] = {"dependencies": {}}
    edited = Witness("edited", {}, {}, {**witness.params, "facts": pp.pk.Facts(changed, facts.source, tui)})
    assert judge_witness(FACT_PROPERTIES["packages.core-no-tui"], edited).status == "CONTRADICTED"


def test_a_missing_release_is_not_exercised() -> None:
    witness = Witness("pi@0.0.0", {}, {}, {"facts": None, "run": None, "release": "0.0.0", "why": "not installed"})
    for prop in (*FACT_PROPERTIES.values(), *PROGRAM_PROPERTIES.values()):
        assert judge_witness(prop, witness).status == "NOT EXERCISED"


# --- the same edits through `pinb claims experiment` / `pinb claims check` ----------------------------------------


@pytest.mark.parametrize("claim", ["pi-01.context.agents-md-by-directory", "pi-01.queue.abort-keeps-queued"])
def test_claims_check_keeps_the_verdict_on_a_premise_keeping_edit_and_says_not_exercised_otherwise(
    claim: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from pinb.cli import main

    experiment = claim.removeprefix("pi-01.")
    assert main(["claims", "experiment", claim, "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    keep, remove = EDITS[experiment]
    files = sorted(tmp_path.glob("*.json"))

    def checked(edit: Any) -> tuple[int, dict[str, Any]]:
        scenarios = {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in files}
        edit(scenarios)
        for f in files:
            f.write_text(json.dumps(scenarios[f.stem]), encoding="utf-8")
        code = main(["claims", "check", claim, *(a for f in files for a in ("--scenario", str(f))), "--json"])
        return code, json.loads(capsys.readouterr().out)

    code, seen = checked(keep)
    assert (code, seen["status"]) == (0, "OBSERVED")
    code, seen = checked(remove)
    assert (code, seen["status"]) == (3, "NOT EXERCISED")
