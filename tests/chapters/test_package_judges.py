"""Chapter 01's package judges can fail: each is shown a realistic change to the recorded real-package facts.

The package claims are not judged on the stand-in, so `pinb claims check-judges` has no fault for them; these tests
are their counterpart. The facts are the committed snapshots read from the real packages (offline).
"""

from __future__ import annotations

from typing import Any

import pytest

from pinb.chapters.ch01 import package_facts as pf
from pinb.chapters.ch01 import packages


def _facts(version: str, **update: Any) -> packages.Facts:
    return packages.Facts(pf.recorded_package_facts(version).model_copy(update=update), "recorded")


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
    finding = packages.judge_ai_model_access_only(_facts("1.6.0"))
    assert finding is not None and finding.holds
    assert "Shared with pi-agent-core's exports ['Agent'" in finding.evidence and "'SessionManager'" in finding.evidence


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
    finding = packages.judge_ai_model_access_only(facts())
    assert finding is not None and not finding.holds, what


def test_ai_model_access_only_is_unrun_without_the_coding_agents_exports() -> None:
    assert pf.APP not in pf.recorded_package_facts("1.0.3").exports
    assert packages.judge_ai_model_access_only(_facts("1.0.3")) is None


def test_graph_holds_on_1_0_3_and_fails_when_an_edge_changes() -> None:
    assert packages.judge_graph(_facts("1.0.3")).holds
    assert not packages.judge_graph(_facts("1.0.3", agent_core_depends_on_typebox=False)).holds
    assert not packages.judge_graph(_with_dependency("1.0.3", pf.AI, pf.CORE)).holds
    assert not packages.judge_graph(_with_dependency("1.0.3", pf.CORE, pf.TUI)).holds


def test_core_no_tui_fails_when_the_core_imports_the_terminal() -> None:
    assert packages.judge_core_no_tui(_facts("1.6.0")).holds
    assert not packages.judge_core_no_tui(_facts("1.6.0", agent_core_imports_tui=True)).holds
    assert not packages.judge_core_no_tui(_facts("1.6.0", agent_core_depends_on_tui=True)).holds


def test_core_size_fails_outside_about_sixty_kilobytes() -> None:
    dist = pf.recorded_package_facts("1.6.0").agent_core_dist
    assert packages.judge_core_size(_facts("1.6.0")).holds
    bigger = dist.model_copy(update={"js_bytes": 200_000})
    assert not packages.judge_core_size(_facts("1.6.0", agent_core_dist=bigger)).holds


def test_coding_agent_composes_holds_on_1_0_3_and_fails_without_one_of_its_parts() -> None:
    assert packages.judge_coding_agent(_facts("1.0.3")).holds
    manifests = dict(pf.recorded_package_facts("1.0.3").manifests)
    app = manifests[pf.APP]
    manifests[pf.APP] = app.model_copy(
        update={"dependencies": {k: v for k, v in app.dependencies.items() if k != "@earendil-works/pi-mcp"}}
    )
    assert not packages.judge_coding_agent(_facts("1.0.3", manifests=manifests)).holds


def test_core_description_fails_on_another_description() -> None:
    said = "general-purpose agent with transport abstraction, state management, and attachment support"
    held = packages.Facts(pf.recorded_package_facts("1.6.0"), "recorded", {pf.CORE: {"description": said}})
    other = packages.Facts(pf.recorded_package_facts("1.6.0"), "recorded", {pf.CORE: {"description": "An agent loop"}})
    assert packages.judge_core_description(held).holds  # type: ignore[union-attr]
    assert not packages.judge_core_description(other).holds  # type: ignore[union-attr]
    assert packages.judge_core_description(_facts("1.6.0")) is None  # no installed manifest: unrun, not a verdict


def test_pinned_release_holds_only_when_1_0_4_is_published() -> None:
    exists = dict(pf.recorded_package_facts("1.6.0").version_exists)
    assert not packages.judge_pinned_release(_facts("1.6.0")).holds
    assert packages.judge_pinned_release(_facts("1.6.0", version_exists={**exists, "1.0.4": True})).holds
