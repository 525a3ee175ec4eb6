"""Chapter 01's package facts as recorded from the real packages (offline: reads the committed snapshot)."""

from __future__ import annotations

import subprocess

import pytest

from pinb.chapters.ch01 import package_facts as pf
from pinb.errors import ReferenceError_
from pinb.scenario import reference, registry


@pytest.mark.parametrize("version", ["1.0.3", "1.3.0", "1.4.0", "1.5.0", "1.5.2", "1.6.0"])
def test_recorded_facts_load_and_say_where_they_come_from(version: str) -> None:
    facts = pf.recorded_package_facts(version)
    assert facts.pi_version == version
    assert facts.read_at.endswith("Z") and "npm view" in facts.how
    assert facts.manifests[pf.CORE].version == version
    assert facts.agent_core_depends_on_tui == (pf.TUI in facts.manifests[pf.CORE].dependencies)
    assert facts.agent_core_imports_tui == bool(facts.agent_core_tui_importers)
    assert facts.agent_core_depends_on_typebox == ("typebox" in facts.manifests[pf.CORE].dependencies)
    dist = facts.agent_core_dist
    assert 0 < dist.js_bytes < dist.all_files_bytes and 0 < dist.js_count < dist.all_files_count
    assert facts.version_exists == {v: v in facts.agent_core_published_versions for v in facts.version_exists}


def test_recorded_facts_for_an_unrecorded_version_is_a_clear_error() -> None:
    with pytest.raises(ReferenceError_, match=r"no recorded package facts for Pi 9\.9\.9"):
        pf.recorded_package_facts("9.9.9")


def test_coding_agent_103_is_recorded_as_not_installable() -> None:
    facts = pf.recorded_package_facts("1.0.3")
    assert facts.manifests[pf.APP].source == "registry"
    assert facts.coding_agent_installable is False
    assert facts.coding_agent_missing_dependencies == {"@earendil-works/chord": "^1.0.3"}


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """No registry document in this process or in the (temporary) cache folder; npm is a fake."""
    monkeypatch.setenv("PINB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(reference, "_npm", lambda: "npm")
    registry.forget()
    yield
    registry.forget()


def test_registry_lookup_offline_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> None:
    def fake_run(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "npm error code EAI_AGAIN\nnpm error request failed\n")

    monkeypatch.setattr(registry.subprocess, "run", fake_run)
    with pytest.raises(ReferenceError_, match=r"^cannot reach the npm registry for @earendil-works/pi-agent-core "):
        pf.registry_versions(pf.CORE)


def test_missing_version_on_the_registry_is_none_not_an_error(
    monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    calls = []

    def fake_run(command, **kwargs):
        calls.append(command)
        answer = '[{"version":"1.0.3","dependencies":{"a":"1"}},{"version":"1.6.0"}]'
        return subprocess.CompletedProcess(command, 0, answer, "")

    monkeypatch.setattr(registry.subprocess, "run", fake_run)
    assert pf.registry_dependencies(pf.CORE, "1.0.4") is None
    assert pf.registry_dependencies(pf.CORE, "1.0.3") == {"a": "1"}
    assert pf.registry_versions(pf.CORE) == ("1.0.3", "1.6.0")
    assert len(calls) == 1  # one registry read per package and process
