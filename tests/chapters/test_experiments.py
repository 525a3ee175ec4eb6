from __future__ import annotations

from pinb.chapters import registry
from pinb.chapters.experiments import PropertyExperiment, ScenarioExperiment, experiment_for, unrun_reason
from pinb.chapters.registry import claim_spec
from pinb.scenario.model import parse_scenario

ALL = [spec for found in registry.folders().values() for spec in found.ledger.claims]


def test_every_runnable_claim_has_an_experiment_or_a_stated_gap() -> None:
    missing = [spec.id for spec in ALL if spec.kind == "runnable" and experiment_for(spec.id) is None]
    assert missing == []


def test_every_scenario_the_experiments_build_is_valid() -> None:
    for spec in ALL:
        experiment = experiment_for(spec.id)
        built = experiment.scenarios({}) if isinstance(experiment, ScenarioExperiment) else {}
        if isinstance(experiment, PropertyExperiment):
            built = experiment.property.hand({})
        if built:
            for name, scenario in built.items():
                parse_scenario(scenario, source=f"{spec.id}/{name}")


def test_unrun_reasons() -> None:
    assert "reported" in (unrun_reason(claim_spec("pi-01.fork.refuse-session"), "standin", None) or "")
    assert "cannot check" in (unrun_reason(claim_spec("pi-01.packages.core-size"), "standin", None) or "")
    assert unrun_reason(claim_spec("pi-01.packages.core-size"), "pi", "1.6.0") is None
    app_on_103 = unrun_reason(claim_spec("pi-16.guard.blocks-force-push"), "pi", "1.0.3")
    assert app_on_103 and "no application layer" in app_on_103
    assert unrun_reason(claim_spec("pi-01.example.three-lines"), "pi", "1.0.3") is None
    assembly = claim_spec("pi-01.seam.before-agent-start-text-not-builder")
    assert isinstance(experiment_for(assembly.id), PropertyExperiment)
    assert unrun_reason(assembly, "pi", "1.6.0") is None
    for seam in ("pi-01.seam.prepare-request-throw-stops", "pi-01.seam.before-tool-call-mutation"):
        assert isinstance(experiment_for(seam), PropertyExperiment)
        assert unrun_reason(claim_spec(seam), "pi", "1.6.0") is None
        assert unrun_reason(claim_spec(seam), "pi", "1.0.3") is None
