"""Temporary folders and kernel connection files were left in `TMPDIR` under names that said nothing of pinb. Now
each pinb command keeps every temporary file of its own, and of the processes it starts (kernels, scenario
projects), in one folder `pinb-<pid>-…` that it removes on exit; one that a killed process left is removed by the
next command."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from kit.conftest import REGISTRY
from kit.verify_process import kit_project, start_verify, wait_until_ready

REPO = Path(__file__).resolve().parents[2]
KIT = Path(__file__).resolve().parents[1]


def _run(tmp: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {"TMPDIR": str(tmp)} | env
    environment["PYTHONPATH"] = os.pathsep.join([str(KIT), environment.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pinb.cli", *argv], capture_output=True, text=True, env=environment, timeout=300
    )


def test_a_scenario_run_leaves_nothing_in_tmpdir(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    abandoned = tmp / "pinb-999999999-abcdef"  # left by a process killed outright: no such pid
    abandoned.mkdir()
    foreign = tmp / "someone-elses"
    foreign.mkdir()
    scenario = REPO / "scenarios" / "app-agent-end-throw.json"
    done = _run(tmp, "scenario", "run", str(scenario), "--backend", "standin")
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in tmp.iterdir()) == ["someone-elses"]


@pytest.mark.kernel
def test_a_verify_leaves_nothing_in_tmpdir(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    project = kit_project(tmp_path / "project")
    done = _run(
        tmp, "verify", "kt-01-chapter", "kt-02-chapter", "--jobs", "2", "--no-progress",
        PINB_ROOT=str(project.root), PINB_REGISTRY=REGISTRY,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert list(tmp.iterdir()) == []


@pytest.mark.kernel
def test_a_killed_verify_leaves_one_named_folder_that_the_next_command_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    project = kit_project(tmp_path / "project")
    ready = tmp_path / "ready"
    process = start_verify(project, "kt-08-chapter", ready=ready, own_group=True)
    wait_until_ready(process, ready)
    family = psutil.Process(process.pid).children(recursive=True)
    os.killpg(process.pid, signal.SIGKILL)  # verify and its kernel's parent: nothing runs a cleanup
    process.wait()
    for child in family:
        with contextlib.suppress(psutil.Error):
            child.kill()
            child.wait(10)
    assert [path.name.split("-")[:2] for path in tmp.iterdir()] == [["pinb", str(process.pid)]]
    done = _run(tmp, "status", PINB_ROOT=str(project.root), PINB_REGISTRY=REGISTRY)
    assert done.returncode == 0, done.stderr
    assert list(tmp.iterdir()) == []
