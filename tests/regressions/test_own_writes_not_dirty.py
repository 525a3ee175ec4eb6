"""The second of two back-to-back verifies was recorded "(dirty tree)": pinb's own writes (reports, the README
table, the notebooks' recorded-verdict snapshots) must not make the work tree dirty; any other change must."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pinb.kit.environment import git_state

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_only_pinb_s_own_output_is_ignored(tmp_path: Path) -> None:
    files = ["runs/a.json", "reports/c.md", "README.md", "src/pinb/recorded/c.json", "src/pinb/code.py"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("1\n", encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    for name in files[:-1]:
        (tmp_path / name).write_text("2\n", encoding="utf-8")
    commit, dirty = git_state(tmp_path)
    assert commit and dirty is False
    (tmp_path / "src/pinb/code.py").write_text("2\n", encoding="utf-8")
    assert git_state(tmp_path)[1] is True
