"""Chapter 01's package properties can fail: each is shown a realistic change to the recorded real-package facts.

The package claims are not judged on the stand-in, so `pinb claims check-judges` has no fault for them; these tests
are their counterpart. The facts are the committed snapshots read from the real packages (offline).
"""

from __future__ import annotations

from typing import Any

import pytest

from pinb.chapters.ch01 import package_facts as pf
from pinb.chapters.ch01 import packages
from pinb.chapters.ch01.props_packages import FACT_PROPERTIES
from pinb.chapters.properties import Witness, WitnessVerdict, judge_witness


def _facts(version: str, **update: Any) -> packages.Facts:
    return packages.Facts(pf.recorded_package_facts(version).model_copy(update=update), "recorded")


def _judge(name: str, facts: packages.Facts) -> WitnessVerdict:
    """The claim's property (`FACT_PROPERTIES[name]`) on one release's facts."""
    version = facts.facts.pi_version
    return judge_witness(FACT_PROPERTIES[name], Witness(f"pi@{version}", {}, {}, {"facts": facts, "release": version}))


def _holds(name: str, facts: packages.Facts) -> bool:
    return _judge(name, facts).status == "OBSERVED"


def _with_export(version: str, package: str, name: str) -> packages.Facts:
    exports = dict(pf.recorded_package_facts(version).exports)
    exports[package] = (*exports[package], name)
    return _facts(version, exports=exports)


def _with_dependency(version: str, package: str, dependency: str) -> packages.Facts:
    manifests = dict(pf.recorded_package_facts(version).manifests)
    old = manifests[package]
    manifests[package] = old.model_copy(update={"dependencies": {**old.dependencies, dependency: "^" + version}})
    return _facts(version, manifests=manifests)


def test_ai_model_access_only_holds_on_the_recorded_1_6_0_packages() -> None:
    verdict = _judge("packages.ai-model-access-only", _facts("1.6.0"))
    assert verdict.status == "OBSERVED", verdict.evidence
    assert "exports shared with pi-agent-core (the loop, state, tool execution): none" in verdict.observed


@pytest.mark.parametrize(
    ("what", "facts"),
    [
        ("pi-ai re-exports the agent loop", lambda: _with_export("1.6.0", pf.AI, "agentLoop")),
        ("pi-ai ships the tool runner", lambda: _with_export("1.6.0", pf.AI, "runToolCall")),
        ("pi-ai ships the session store", lambda: _with_export("1.6.0", pf.AI, "SessionManager")),
        ("pi-ai depends on pi-agent-core", lambda: _with_dependency("1.6.0", pf.AI, pf.CORE)),
        ("pi-ai imports pi-coding-agent", lambda: _facts("1.6.0", ai_importers_of_core_or_app=("index.js",))),
    ],
)
def test_ai_model_access_only_is_contradicted_when_pi_ai_grows_a_layer(what: str, facts: Any) -> None:
    assert _judge("packages.ai-model-access-only", facts()).status == "CONTRADICTED", what


def test_ai_model_access_only_is_unrun_without_the_coding_agents_exports() -> None:
    assert pf.APP not in pf.recorded_package_facts("1.0.3").exports
    assert _judge("packages.ai-model-access-only", _facts("1.0.3")).status == "NOT EXERCISED"


def test_graph_holds_on_1_0_3_and_fails_when_an_edge_changes() -> None:
    assert _holds("packages.graph", _facts("1.0.3"))
    assert not _holds("packages.graph", _facts("1.0.3", agent_core_depends_on_typebox=False))
    assert not _holds("packages.graph", _with_dependency("1.0.3", pf.AI, pf.CORE))
    assert not _holds("packages.graph", _with_dependency("1.0.3", pf.CORE, pf.TUI))


def test_core_no_tui_fails_when_the_core_imports_the_terminal() -> None:
    recorded = pf.recorded_package_facts("1.6.0")

    def facts(tui_depends_on: tuple[str, ...] = (), **update: Any) -> packages.Facts:
        # pi-tui's package.json is read from the installed packages; here one as the snapshot has none
        tui = {pf.TUI: {"dependencies": {name: "^1.6.0" for name in tui_depends_on}}}
        return packages.Facts(recorded.model_copy(update=update), "recorded", tui)

    assert _holds("packages.core-no-tui", facts())
    assert not _holds("packages.core-no-tui", facts(agent_core_imports_tui=True))
    assert not _holds("packages.core-no-tui", facts(agent_core_depends_on_tui=True))
    assert not _holds("packages.core-no-tui", facts((pf.CORE,)))
    # without pi-tui's manifest the sentence is not put to the test
    assert _judge("packages.core-no-tui", _facts("1.6.0")).status == "NOT EXERCISED"


def test_core_size_fails_outside_about_sixty_kilobytes() -> None:
    dist = pf.recorded_package_facts("1.6.0").agent_core_dist
    assert _holds("packages.core-size", _facts("1.6.0"))
    bigger = dist.model_copy(update={"js_bytes": 200_000})
    assert not _holds("packages.core-size", _facts("1.6.0", agent_core_dist=bigger))


def test_coding_agent_composes_holds_on_1_0_3_and_fails_without_one_of_its_parts() -> None:
    assert _holds("packages.coding-agent-composes", _facts("1.0.3"))
    manifests = dict(pf.recorded_package_facts("1.0.3").manifests)
    app = manifests[pf.APP]
    manifests[pf.APP] = app.model_copy(
        update={"dependencies": {k: v for k, v in app.dependencies.items() if k != "@earendil-works/pi-mcp"}}
    )
    assert not _holds("packages.coding-agent-composes", _facts("1.0.3", manifests=manifests))


def test_core_description_fails_on_another_description() -> None:
    said = "general-purpose agent with transport abstraction, state management, and attachment support"
    held = packages.Facts(pf.recorded_package_facts("1.6.0"), "recorded", {pf.CORE: {"description": said}})
    other = packages.Facts(pf.recorded_package_facts("1.6.0"), "recorded", {pf.CORE: {"description": "An agent loop"}})
    assert _holds("packages.core-description", held)
    assert _judge("packages.core-description", other).status == "CONTRADICTED"
    # no installed manifest: not exercised, not a verdict
    assert _judge("packages.core-description", _facts("1.6.0")).status == "NOT EXERCISED"


def test_pinned_release_holds_only_when_1_0_4_is_published() -> None:
    exists = dict(pf.recorded_package_facts("1.6.0").version_exists)
    assert not _holds("packages.pinned-release", _facts("1.6.0"))
    assert _holds("packages.pinned-release", _facts("1.6.0", version_exists={**exists, "1.0.4": True}))
