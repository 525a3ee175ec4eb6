"""Real Pi's traces are kept per process by the scenario's exact text: a scenario two witnesses share runs once on
each release (offline: the bridge is a fake)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinb.chapters import backends
from pinb.chapters import scenarios as sc
from pinb.scenario import reference

TRACE = '{"source":"meta","seq":0}\n{"source":"listener","seq":1,"type":"agent_start"}\n'


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    ran: list[tuple[str, str]] = []

    def fake(path: Path, version: str, **kwargs: object) -> str:
        ran.append((Path(path).read_text(encoding="utf-8"), version))
        return TRACE

    monkeypatch.setattr(reference, "run_on_pi", fake)
    monkeypatch.setattr(backends, "_pi_traces", {})
    return ran


def test_the_same_scenario_runs_once_per_release(runs: list[tuple[str, str]]) -> None:
    scenario = sc.word_count("agent")
    first = backends.run_pi_sync(scenario, "1.6.0")
    first[1]["type"] = "edited by a judge"
    again = backends.run_pi_sync(dict(scenario), "1.6.0")
    assert len(runs) == 1
    assert again[1]["type"] == "agent_start"  # the kept trace is not the lines a caller was given
    backends.run_pi_sync(scenario, "1.5.2")
    assert [version for _, version in runs] == ["1.6.0", "1.5.2"]


def test_a_changed_scenario_runs_again(runs: list[tuple[str, str]]) -> None:
    scenario = sc.word_count("agent")
    backends.run_pi_sync(scenario, "1.6.0")
    backends.run_pi_sync({**scenario, "prompt": "Count these words, please."}, "1.6.0")
    assert len(runs) == 2


def test_a_failed_run_is_not_kept(runs: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def failing(path: Path, version: str, **kwargs: object) -> str:
        calls.append(1)
        raise reference.ReferenceError_("Pi 1.6.0 failed on x.json: boom")

    monkeypatch.setattr(reference, "run_on_pi", failing)
    for _ in range(2):
        with pytest.raises(reference.ReferenceError_):
            backends.run_pi_sync(sc.word_count("agent"), "1.6.0")
    assert len(calls) == 2
