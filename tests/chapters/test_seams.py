"""Chapter 01's agent-core seams, judged from scenario traces: on the stand-in here (real Pi's recorded runs of the
same hooks are in the corpus), and the judges say "contradicted" when the effect is missing."""

from __future__ import annotations

import copy
from typing import Any

from pinb.chapters.ch01.experiments import JUDGED
from pinb.chapters.experiments import ScenarioExperiment
from pinb.scenario.model import parse_scenario
from pinb.scenario.standin import run_on_standin

PREPARE = "pi-01.seam.prepare-request-throw-stops"
MUTATION = "pi-01.seam.before-tool-call-mutation"


def _experiment(claim_id: str) -> ScenarioExperiment:
    # The earlier judges (the claims' properties are tested in test_ch01_properties).
    experiment = JUDGED[claim_id.removeprefix("pi-01.")]
    assert isinstance(experiment, ScenarioExperiment)
    return experiment


def _traces(scenarios: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {name: run_on_standin(parse_scenario(doc)) for name, doc in scenarios.items()}


def test_prepare_request_throw_holds_on_the_standin() -> None:
    experiment = _experiment(PREPARE)
    finding = experiment.judge(_traces(experiment.scenarios({})), {})
    assert finding.holds, finding.evidence
    assert "(expected 2, 0, 1)" in finding.evidence


def test_prepare_request_judge_fails_when_the_hook_does_not_stop_the_request() -> None:
    experiment = _experiment(PREPARE)
    scenarios = experiment.scenarios({})
    for name in ("hook-throws-first", "hook-throws-second"):
        scenarios[name]["hooks"] = {"prepare_request": {"kind": "record"}}
    finding = experiment.judge(_traces(scenarios), {})
    assert not finding.holds


def test_before_tool_call_mutation_holds_on_the_standin() -> None:
    experiment = _experiment(MUTATION)
    finding = experiment.judge(_traces(experiment.scenarios({})), {})
    assert finding.holds, finding.evidence
    assert "{'words': 5}" in finding.evidence and "{'words': 2}" in finding.evidence


def test_mutation_judge_fails_when_the_tool_gets_the_models_arguments() -> None:
    experiment = _experiment(MUTATION)
    scenarios = experiment.scenarios({})
    scenarios["hook-mutates"]["hooks"] = {"before_tool_call": {"kind": "record"}}
    assert not experiment.judge(_traces(scenarios), {}).holds


def test_mutation_judge_fails_when_the_hook_blocks_instead() -> None:
    experiment = _experiment(MUTATION)
    scenarios = copy.deepcopy(experiment.scenarios({}))
    scenarios["hook-mutates"]["hooks"] = {"before_tool_call": {"kind": "block"}}
    assert not experiment.judge(_traces(scenarios), {}).holds
