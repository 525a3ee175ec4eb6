"""Four kit inputs ended in a traceback or in the wrong answer: a registry spec naming a function that is not a
registry (``PINB_REGISTRY=json:dumps``), ``pinb runs`` with no action (it printed another command's usage),
``--timeout nan`` (no timeout at all) and ``status --backend pi@9.9.9`` (exit 0 with a table of UNRUN). Each is
now one line on stderr with exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kit.conftest import NOTEBOOKS, REGISTRY
from kit.sample_registry import chapters
from pinb.cli import main
from pinb.kit.project import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    shutil.copytree(NOTEBOOKS, tmp_path / "notebooks")
    return Project(root=tmp_path, chapters=chapters())


@pytest.mark.parametrize(
    ("registry", "argv", "message"),
    [
        ("json:dumps", ["status"], "pinb: error: chapter registry 'json:dumps' failed: TypeError: "),
        ("json:__name__", ["status"], "pinb: error: chapter registry 'json:__name__' is not a function"),
        ("os:getcwd", ["status"], "pinb: error: chapter registry 'os:getcwd' returned str, not {chapter_id: chapter}"),
        ("os:environ.copy", ["status"], "pinb: error: cannot load chapter registry 'os:environ.copy'"),
        ("no.such.module", ["status"], "pinb: error: cannot load chapter registry 'no.such.module'"),
        (":x", ["status"], "pinb: error: cannot load chapter registry ':x'"),
        (REGISTRY, ["runs"], "usage: pinb runs "),
        (REGISTRY, ["verify", "--timeout", "nan"], "pinb: error: argument --timeout: not a number of seconds: 'nan'"),
        (REGISTRY, ["verify", "--cell-timeout", "inf"], "pinb: error: argument --cell-timeout: not a number"),
        (REGISTRY, ["status", "--backend", "pi@9.9.9"], "pinb: error: unknown Pi version '9.9.9': no run on record"),
        (REGISTRY, ["status", "--backend", "pi@"], "pinb: error: invalid backend 'pi@'"),
        (REGISTRY, ["status", "--backend", ""], "pinb: error: invalid backend ''"),
        (REGISTRY, ["status", "--backend", "pi@x"], "pinb: error: unknown Pi version 'x': no run on record"),
        (REGISTRY, ["verify", "--timeout", "1e400"], "pinb: error: argument --timeout: not a number of seconds"),
        ("builtins:list", ["status"], "pinb: error: chapter registry 'builtins:list' returned list, not"),
    ],
)
def test_one_line_and_exit_2(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    registry: str,
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.setenv("PINB_REGISTRY", registry)
    monkeypatch.setenv("PINB_ROOT", str(project.root))
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(message), err
    assert err.count("\n") == 1
    assert not project.runs_dir.exists()
