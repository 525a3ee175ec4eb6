from __future__ import annotations

from pinb.chapters import registry
from pinb.chapters.properties import BookExampleExperiment, PropertyExperiment
from pinb.chapters.registry import claim
from pinb.scenario.model import parse_scenario

ALL = [spec for found in registry.folders().values() for spec in found.ledger.claims]


def test_every_runnable_claim_has_an_experiment_or_a_stated_gap() -> None:
    missing = [spec.id for spec in ALL if spec.kind == "runnable" and spec.experiment is None]
    assert missing == []


def test_every_runnable_claim_is_judged_by_a_property_on_every_backend_it_names() -> None:
    for spec in ALL:
        if spec.kind != "runnable":
            continue
        assert isinstance(spec.experiment, PropertyExperiment | BookExampleExperiment), spec.id
        for backend in spec.backends:
            ran = spec.experiment.on(backend)
            assert ran is None or ran.property is not None, (spec.id, backend)


def test_every_scenario_the_experiments_build_is_valid() -> None:
    for spec in ALL:
        for backend in ("standin", "pi"):
            ran = spec.experiment.on(backend) if spec.experiment is not None else None
            for name, scenario in (ran.property.hand({}) if ran is not None else {}).items():
                parse_scenario(scenario, source=f"{spec.id}/{name}")


def test_unrun_reasons() -> None:
    assert "reported" in (claim("pi-01.fork.refuse-session").unrun("standin") or "")
    assert "cannot check" in (claim("pi-01.packages.core-size").unrun("standin") or "")
    assert claim("pi-01.packages.core-size").unrun("pi", "1.6.0") is None
    app_on_103 = claim("pi-16.guard.blocks-force-push").unrun("pi", "1.0.3")
    assert app_on_103 and "no application layer" in app_on_103
    assert claim("pi-01.example.three-lines").unrun("pi", "1.0.3") is None
    assembly = claim("pi-01.seam.before-agent-start-text-not-builder")
    assert isinstance(assembly.experiment, PropertyExperiment)
    assert assembly.unrun("pi", "1.6.0") is None
    for seam in ("pi-01.seam.prepare-request-throw-stops", "pi-01.seam.before-tool-call-mutation"):
        assert isinstance(claim(seam).experiment, PropertyExperiment)
        assert claim(seam).unrun("pi", "1.6.0") is None
        assert claim(seam).unrun("pi", "1.0.3") is None
