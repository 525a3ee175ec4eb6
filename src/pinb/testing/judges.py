"""Judge one claim in memory on the stand-in, with or without a fault switched on: no notebook, no run record.

This is what `pinb claims check-judges` and a notebook's counterfactual view use. It runs the claim's experiment
exactly as a chapter notebook does on the `standin` backend (default knobs unless given), calls the same judge,
and returns the verdict instead of recording it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pinb._async import run_sync
from pinb.testing import faults

Status = Literal["OBSERVED", "CONTRADICTED", "NOT EXERCISED", "ERROR", "UNRUN"]


@dataclass(frozen=True)
class Verdict:
    """What the claim's judge said on the stand-in (UNRUN: the stand-in cannot check it, with the reason)."""

    claim_id: str
    status: Status
    evidence: str
    fault: str | None = None
    result: Any = None
    """A property claim's `pinb.chapters.witnesses.PropertyResult` (its witnesses, its counterexample)."""


def standin_reason(claim_id: str) -> str | None:
    """Why the stand-in cannot check this claim (None when it can)."""
    from pinb.chapters.registry import claim

    return claim(claim_id).unrun("standin")


async def ajudge(
    claim_id: str, fault: str | None = None, knobs: Mapping[str, Any] | None = None, witnesses: int = 0
) -> Verdict:
    """The claim's verdict on the stand-in, under `fault` when one is named (a property claim: on its hand-written
    witness and `witnesses` seeded generated ones)."""
    reason = standin_reason(claim_id)
    if reason is not None:
        return Verdict(claim_id, "UNRUN", reason, fault)
    if fault is None:
        return await _judge(claim_id, dict(knobs or {}), None, witnesses)
    with faults.injected(fault):
        return await _judge(claim_id, dict(knobs or {}), fault, witnesses)


def judge(
    claim_id: str, fault: str | None = None, knobs: Mapping[str, Any] | None = None, witnesses: int = 0
) -> Verdict:
    """`ajudge` for code outside an event loop."""
    return run_sync(ajudge(claim_id, fault, knobs, witnesses))


async def _judge_property(
    claim_id: str, experiment: Any, knobs: dict[str, Any], fault: str | None, witnesses: int
) -> Verdict:
    from pinb.chapters.backends import run_scenario, run_standin_sync
    from pinb.chapters.registry import claim
    from pinb.chapters.witnesses import assess, seed_for

    spec = claim(claim_id)
    prop = experiment.property

    async def run(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
        return await run_scenario(scenario, "standin")

    result, _traces = await assess(
        prop,
        prop.hand(knobs),
        knobs,
        run,
        run_standin_sync,
        witnesses=witnesses,
        seed=seed_for(claim_id),
        covers=spec.covers,
        uncovered=spec.uncovered,
    )
    return Verdict(claim_id, result.status, result.evidence, fault, result)


async def _judge(claim_id: str, knobs: dict[str, Any], fault: str | None, witnesses: int = 0) -> Verdict:
    from pinb.chapters.backends import run_scenario
    from pinb.chapters.experiments import (
        BookExampleExperiment,
        ProbeExperiment,
        ScenarioExperiment,
    )
    from pinb.chapters.experiments import judge as call_judge
    from pinb.chapters.properties import PropertyExperiment
    from pinb.chapters.registry import claim

    experiment = claim(claim_id).experiment
    if isinstance(experiment, BookExampleExperiment):
        experiment = experiment.standin
    try:
        if isinstance(experiment, PropertyExperiment):
            return await _judge_property(claim_id, experiment, knobs, fault, witnesses)
        if isinstance(experiment, ScenarioExperiment):
            traces = {name: await run_scenario(s, "standin") for name, s in experiment.scenarios(knobs).items()}
            finding = call_judge(experiment, traces, knobs)
        elif isinstance(experiment, ProbeExperiment):
            finding, _shown = await experiment.probe(knobs)
        else:
            return Verdict(claim_id, "UNRUN", "no stand-in experiment for this claim", fault)
    except Exception as error:  # a fault may break the experiment itself: that is an ERROR, as in a notebook
        return Verdict(claim_id, "ERROR", f"{type(error).__name__}: {error}", fault)
    return Verdict(claim_id, "OBSERVED" if finding.holds else "CONTRADICTED", finding.evidence, fault)


__all__ = ["Verdict", "ajudge", "judge", "standin_reason"]
