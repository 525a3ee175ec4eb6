"""``pinb drift`` exits 0 when it compared and found no difference, 1 with differences, 2 when it could not compare.

Before, 38 "Pi 1.0.3 is not installed" errors (one per scenario) exited 0, while a clean comparison with
differences exited 1. Now a missing install is said once, up front, with how to install it or use ``--recorded``.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from pinb.cli import main
from pinb.errors import ReferenceError_
from pinb.scenario.trace import dumps_jsonl

GOOD = {"id": "a", "layer": "agent", "prompt": "hi", "responses": [{"content": [{"type": "text", "text": "x"}]}]}
LINES = [{"seq": 1, "source": "agent", "type": "agent_start"}]


def _corpus(tmp_path: Path, ids: list[str], recorded: dict[str, list[str]]) -> Path:
    for scenario_id in ids:
        (tmp_path / f"{scenario_id}.json").write_text(json.dumps({**GOOD, "id": scenario_id}), encoding="utf-8")
    for version, with_trace in recorded.items():
        folder = tmp_path / "traces" / f"pi-{version}"
        folder.mkdir(parents=True)
        for scenario_id in with_trace:
            (folder / f"{scenario_id}.jsonl").write_text(dumps_jsonl(LINES), encoding="utf-8")
    return tmp_path


def _fake_reference(monkeypatch: pytest.MonkeyPatch, installed: set[str]) -> list[Any]:
    calls: list[Any] = []

    def run_on_pi(path: Path, version: str, **_: Any) -> str:
        calls.append(version)
        raise ReferenceError_(f"Pi {version} failed on {Path(path).name}: boom")

    fake = types.SimpleNamespace(
        SUPPORTED_VERSIONS=("1.0.3", "1.6.0"), run_on_pi=run_on_pi, is_installed=lambda v: v in installed
    )
    monkeypatch.setitem(sys.modules, "pinb.scenario.reference", fake)
    monkeypatch.setattr("pinb.scenario.reference", fake, raising=False)
    return calls


def test_missing_install_is_said_once_up_front_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fake_reference(monkeypatch, installed={"1.6.0"})
    folder = _corpus(tmp_path, [f"s{n}" for n in range(38)], {})
    assert main(["drift", "--corpus", str(folder)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert "pinb reference install --pi-version 1.0.3" in captured.err and "--recorded" in captured.err
    assert calls == []


def test_scenarios_that_could_not_be_compared_exit_2_and_share_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_reference(monkeypatch, installed={"1.0.3", "1.6.0"})
    folder = _corpus(tmp_path, ["a", "b", "c", "d"], {})
    assert main(["drift", "--corpus", str(folder)]) == 2
    out = capsys.readouterr().out
    assert out.count("boom") == 4  # each scenario's own Node error names its file
    (tmp_path / "rec").mkdir()
    folder_recorded = _corpus(tmp_path / "rec", ["a", "b", "c", "d"], {"1.0.3": ["a"], "1.6.0": ["a", "b", "c", "d"]})
    assert main(["drift", "--recorded", "--corpus", str(folder_recorded)]) == 2
    out = capsys.readouterr().out
    assert out.count("no recorded trace for pi@1.0.3") == 1
    assert "not compared (b, c, d)" in out


def test_a_clean_comparison_exits_0_and_a_difference_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path, ["a"], {"1.0.3": ["a"], "1.6.0": ["a"]})
    assert main(["drift", "--recorded", "--corpus", str(folder)]) == 0
    (folder / "traces" / "pi-1.6.0" / "a.jsonl").write_text(
        dumps_jsonl([{"seq": 1, "source": "agent", "type": "agent_end"}]), encoding="utf-8"
    )
    assert main(["drift", "--recorded", "--corpus", str(folder)]) == 1
    capsys.readouterr()
