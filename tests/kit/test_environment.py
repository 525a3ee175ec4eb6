"""What a run record says about the machine: git state, and Node/Pi versions asked of the reference bridge."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from pinb.kit import environment


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_git_commit_and_dirty_flag(tmp_path: Path) -> None:
    assert environment.git_state(tmp_path) == (None, None)
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "a")
    commit, dirty = environment.git_state(tmp_path)
    assert commit is not None and len(commit) == 40 and dirty is False
    (tmp_path / "runs" / "pi-01-chapter").mkdir(parents=True)
    (tmp_path / "runs" / "pi-01-chapter" / "run.json").write_text("{}")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "r.md").write_text("r")
    assert environment.git_state(tmp_path) == (commit, False)  # the kit's own output is not a change
    (tmp_path / "a.txt").write_text("b")
    assert environment.git_state(tmp_path) == (commit, True)


def _use_bridge(monkeypatch: pytest.MonkeyPatch, fake: types.ModuleType) -> None:
    import pinb.scenario

    monkeypatch.setitem(sys.modules, "pinb.scenario.reference", fake)
    monkeypatch.setattr(pinb.scenario, "reference", fake, raising=False)


def test_pi_runs_ask_the_reference_bridge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("pinb.scenario.reference")
    fake.node_version = lambda: "v22.19.0"  # type: ignore[attr-defined]
    fake.resolved_versions = lambda version: {"@earendil-works/pi-agent-core": version}  # type: ignore[attr-defined]
    _use_bridge(monkeypatch, fake)
    env = environment.collect(tmp_path, "pi@1.0.3", "python3")
    assert (env.node, env.pi_packages, env.notes) == ("v22.19.0", {"@earendil-works/pi-agent-core": "1.0.3"}, ())
    assert environment.collect(tmp_path, "standin", "python3").node is None


def test_a_broken_bridge_is_a_note_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("pinb.scenario.reference")

    def missing(version: str) -> dict[str, str]:
        raise RuntimeError(f"Pi {version} is not installed; run pinb reference install {version}")

    fake.node_version = lambda: "v22.19.0"  # type: ignore[attr-defined]
    fake.resolved_versions = missing  # type: ignore[attr-defined]
    _use_bridge(monkeypatch, fake)
    env = environment.collect(tmp_path, "pi@1.6.0", "python3")
    assert env.pi_packages == {}
    assert env.notes == ("Pi package versions unknown: Pi 1.6.0 is not installed; run pinb reference install 1.6.0",)


def test_the_kernel_runs_on_this_interpreter() -> None:
    argv = environment.kernel_command("python3")
    assert argv[:3] == (sys.executable, "-m", "ipykernel_launcher")
    assert environment.ipykernel_on_this_interpreter(["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "x"]) == [
        sys.executable,
        "-m",
        "ipykernel_launcher",
        "-f",
        "x",
    ]
    assert environment.ipykernel_on_this_interpreter(["R", "--slave"]) == ["R", "--slave"]
