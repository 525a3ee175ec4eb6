"""`pinb status` said "the next `pinb verify` removes it" of a stray `runs/<chapter>/.tmp-garbage` folder that ten
verifies did not remove (pinb leaves alone what it did not name). Now each leftover names the command that
removes it, and that command does: `pinb runs prune` for an incomplete run of a process that has ended, `rm -r`
for a folder pinb did not name."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from pinb.cli import main
from pinb.kit.project import Project

RUN = "20261130T000000Z-abcdef"


@pytest.fixture
def kit_env(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    from kit.conftest import REGISTRY

    monkeypatch.setenv("PINB_REGISTRY", REGISTRY)
    monkeypatch.setenv("PINB_ROOT", str(project.root))
    return project


def _warnings(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    main(["status"])
    err = capsys.readouterr().err
    found = {}
    for line in err.splitlines():
        path, _, why = line.removeprefix("pinb: warning: ").partition(": ")
        found[Path(path).name] = why
    return found


def test_each_leftover_names_the_command_that_removes_it(kit_env: Project, capsys: pytest.CaptureFixture[str]) -> None:
    chapter = kit_env.runs_dir / "kt-01-chapter"
    garbage = chapter / ".tmp-garbage"
    stopped = chapter / f".tmp-{RUN}-999999999-5"  # its writer is long gone
    for folder in (garbage, stopped):
        folder.mkdir(parents=True)

    said = _warnings(capsys)
    assert "pinb verify" not in said[garbage.name]
    assert said[stopped.name].endswith("(`pinb runs prune` removes it)")
    command = said[garbage.name].rpartition("remove it with: ")[2].removesuffix(")")
    assert shlex.split(command) == ["rm", "-r", str(garbage)]

    assert main(["runs", "prune"]) == 0
    assert not stopped.exists() and garbage.exists()
    subprocess.run(shlex.split(command), check=True)
    capsys.readouterr()
    assert _warnings(capsys) == {}
