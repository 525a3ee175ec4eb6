"""`pinb scenario …`, `pinb reference …`, `pinb drift`: exit codes, one-line errors, nothing written on failure."""

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

GOOD = {
    "id": "cli-ok",
    "layer": "agent",
    "prompt": "hi",
    "responses": [{"content": [{"type": "text", "text": "hello"}]}],
}


@pytest.fixture
def fake_reference(monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """A stand-in for the Node bridge: tests never run Node."""
    calls: list[Any] = []

    def run_on_pi(path: Path, version: str) -> str:
        calls.append(("run", Path(path).name, version))
        raise ReferenceError_("Node failed: TypeError: boom (at runner.mjs:12)")

    fake = types.SimpleNamespace(
        SUPPORTED_VERSIONS=("1.0.3", "1.6.0"),
        run_on_pi=run_on_pi,
        install=lambda version, progress=None: calls.append(("install", version)),
        refresh=lambda check=False: calls.append(("refresh", check)) or 0,
        calls=calls,
    )
    monkeypatch.setitem(sys.modules, "pinb.scenario.reference", fake)
    monkeypatch.setattr("pinb.scenario.reference", fake, raising=False)
    return fake


def _write(tmp_path: Path, content: Any, name: str = "s.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{oops", "not valid JSON"),
        ({**GOOD, "layer": "tui"}, "layer"),
        ({**GOOD, "id": "../evil"}, "not a plain slug"),
        ({**GOOD, "id": "Upper"}, "not a plain slug"),
        ({**GOOD, "surprise": True}, "surprise"),
    ],
)
def test_bad_scenario_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, fragment: str
) -> None:
    scenario = _write(tmp_path, content)
    out = tmp_path / "trace.jsonl"
    assert main(["scenario", "run", str(scenario), "--backend", "standin", "-o", str(out)]) == 2
    assert fragment in _one_error_line(capsys)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "run", str(tmp_path / "nope.json"), "--backend", "standin"]) == 2
    assert "no such scenario file" in _one_error_line(capsys)


def test_unknown_backend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["scenario", "run", str(_write(tmp_path, GOOD)), "--backend", "node"])
    assert info.value.code == 2
    assert "invalid choice" in _one_error_line(capsys)


def test_unknown_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_reference: Any) -> None:
    out = tmp_path / "t.jsonl"
    args = ["scenario", "run", str(_write(tmp_path, GOOD)), "--backend", "pi", "--pi-version", "1.0.4", "-o", str(out)]
    assert main(args) == 2
    assert "unknown Pi version '1.0.4'" in _one_error_line(capsys)
    assert not out.exists() and fake_reference.calls == []


def test_node_crash_is_the_node_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_reference: Any
) -> None:
    out = tmp_path / "t.jsonl"
    assert main(["scenario", "run", str(_write(tmp_path, GOOD)), "--backend", "pi", "-o", str(out)]) == 2
    assert "TypeError: boom" in _one_error_line(capsys)
    assert not out.exists()


def test_bad_scenario_never_reaches_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_reference: Any
) -> None:
    assert main(["scenario", "run", str(_write(tmp_path, "[]")), "--backend", "pi"]) == 2
    assert "JSON object" in _one_error_line(capsys)
    assert fake_reference.calls == []


def test_reference_install_and_refresh_call_the_bridge(capsys: pytest.CaptureFixture[str], fake_reference: Any) -> None:
    assert main(["reference", "install", "--pi-version", "1.0.3"]) == 0
    assert main(["reference", "refresh", "--check"]) == 0
    assert fake_reference.calls == [("install", "1.0.3"), ("refresh", True)]
    assert main(["reference", "install", "--pi-version", "2.0.0"]) == 2
    assert "unknown Pi version" in _one_error_line(capsys)


def _corpus(tmp_path: Path, traces: dict[str, dict[str, list[dict[str, Any]]]]) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for version, by_id in traces.items():
        for scenario_id, lines in by_id.items():
            _write(folder, {**GOOD, "id": scenario_id}, f"{scenario_id}.json")
            target = folder / "traces" / f"pi-{version}"
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{scenario_id}.jsonl").write_text(dumps_jsonl(lines), encoding="utf-8")
    return folder


LINES = [
    {"seq": 1, "source": "agent", "type": "agent_start"},
    {"seq": 2, "source": "agent", "type": "message_end", "role": "assistant", "stopReason": "stop", "text": "a"},
]


def test_drift_on_recorded_traces_reports_the_first_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = [LINES[0], {**LINES[1], "stopReason": "error"}]
    folder = _corpus(tmp_path, {"1.0.3": {"same": LINES, "moved": LINES}, "1.6.0": {"same": LINES, "moved": changed}})
    code = main(["drift", "--from", "1.0.3", "--to", "1.6.0", "--recorded", "--corpus", str(folder)])
    out = capsys.readouterr().out
    assert code == 1
    assert "moved: differs" in out and "same:" not in out
    assert '"stopReason":"error"' in out
    assert "1 identical, 1 differ" in out


def test_drift_without_differences_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path, {"1.0.3": {"a": LINES}, "1.6.0": {"a": LINES}})
    assert main(["drift", "--recorded", "--corpus", str(folder)]) == 0
    assert "1 identical, 0 differ" in capsys.readouterr().out


def test_recorded_commands_need_recorded_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path, {"1.6.0": {"a": LINES}})
    assert main(["drift", "--recorded", "--from", "0.9.0", "--corpus", str(folder)]) == 2
    assert "no traces recorded for Pi 0.9.0" in _one_error_line(capsys)
    assert main(["scenario", "conform", "--pi-version", "0.9.0", "--corpus", str(folder)]) == 2
    assert "no traces recorded for Pi 0.9.0" in _one_error_line(capsys)


def test_conform_prints_a_table_and_exits_1_on_an_unexplained_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pinb.scenario.model import parse_scenario
    from pinb.scenario.standin import run_on_standin

    real = run_on_standin(parse_scenario({**GOOD, "id": "same"}))
    changed = [dict(line) for line in real]
    for line in changed:
        if line.get("role") == "assistant" and line["type"] == "message_end":
            line["text"] = "something else"
    folder = _corpus(tmp_path, {"1.6.0": {"same": real, "other": changed}})
    assert main(["scenario", "conform", "--corpus", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "\nsame   agent  conforms\n" in out
    assert "other" in out and "differs" in out and "something else" in out
    assert "1 conforms, 1 differs (of 2)" in out
    (folder / "KNOWN_DIFFERENCES.json").write_text(json.dumps({"1.6.0": {"other": "a justified reason"}}))
    assert main(["scenario", "conform", "--corpus", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "known" in out and "a justified reason" in out


def test_run_writes_the_trace_to_stdout_or_atomically_to_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _write(tmp_path, GOOD)
    assert main(["scenario", "run", str(scenario), "--backend", "standin"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith('{"seq":1,"source":"meta","type":"scenario","id":"cli-ok"')
    out = tmp_path / "trace.jsonl"
    assert main(["scenario", "run", str(scenario), "--backend", "standin", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "trace.jsonl"]  # no temporary left behind


def test_diff_against_a_bridge_that_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_reference: Any
) -> None:
    from pinb.scenario.model import parse_scenario
    from pinb.scenario.standin import run_on_standin

    scenario = _write(tmp_path, GOOD)
    same = dumps_jsonl(run_on_standin(parse_scenario(GOOD)))
    fake_reference.run_on_pi = lambda path, version: same
    assert main(["scenario", "diff", str(scenario)]) == 0
    assert capsys.readouterr().out.startswith("conforms")
    fake_reference.run_on_pi = lambda path, version: same.replace('"text":"hello"', '"text":"bye"')
    assert main(["scenario", "diff", str(scenario)]) == 1
    assert '+ pi@1.6.0 : {"source":"agent","type":"message_end"' in capsys.readouterr().out
    assert main(["scenario", "diff", str(scenario), "--loose"]) == 1  # the contract's projection compares its text
    assert main(["scenario", "diff", str(scenario), "--projection", "loose"]) == 0  # the loose one ignores text
