"""Chapter 01's agent-core seams as properties, on the stand-in here (real Pi's recorded runs of the same hooks are
in the corpus): each holds on its hand witness, and says so no longer when the effect is missing (the stand-in
with the claim's fault on) or the hook does something else."""

from __future__ import annotations

import copy
from typing import Any

from pinb.chapters import registry
from pinb.chapters.backends import run_standin_sync
from pinb.chapters.properties import Property, Witness, WitnessVerdict, judge_witness
from pinb.testing.faults import injected

PREPARE = "pi-01.seam.prepare-request-throw-stops"
MUTATION = "pi-01.seam.before-tool-call-mutation"


def _property(claim_id: str) -> Property:
    prop = registry.claim(claim_id).property
    assert prop is not None
    return prop


def _verdict(claim_id: str, scenarios: dict[str, dict[str, Any]] | None = None, fault: str = "") -> WitnessVerdict:
    prop = _property(claim_id)
    scenarios = scenarios if scenarios is not None else prop.hand({})
    if fault:
        with injected(fault):
            traces = {name: run_standin_sync(s) for name, s in scenarios.items()}
    else:
        traces = {name: run_standin_sync(s) for name, s in scenarios.items()}
    return judge_witness(prop, Witness("hand", scenarios, traces))


def test_prepare_request_throw_holds_on_the_standin() -> None:
    verdict = _verdict(PREPARE)
    assert verdict.status == "OBSERVED", verdict.evidence


def test_prepare_request_fails_when_the_hook_does_not_stop_the_request() -> None:
    assert registry.claim(PREPARE).faults == ("prepare-request-throw-swallowed",)
    assert _verdict(PREPARE, fault="prepare-request-throw-swallowed").status == "CONTRADICTED"


def test_before_tool_call_mutation_holds_on_the_standin() -> None:
    verdict = _verdict(MUTATION)
    assert verdict.status == "OBSERVED", verdict.evidence


def test_mutation_fails_when_the_tool_gets_the_models_arguments() -> None:
    assert _verdict(MUTATION, fault="before-tool-call-mutation-lost").status == "CONTRADICTED"


def test_mutation_is_not_observed_when_the_hook_blocks_instead() -> None:
    scenarios = copy.deepcopy(_property(MUTATION).hand({}))
    scenarios["hook-mutates"]["hooks"] = {"before_tool_call": {"kind": "block"}}
    assert _verdict(MUTATION, scenarios).status != "OBSERVED"
