"""A full disk during `pinb report --all` left `reports/<chapter>.json` truncated, and `pinb report -o FILE` an
empty file: they were written in place. Now every report, snapshot, ledger and run file is written to a temporary
file, synced and renamed: a failed write leaves the old file whole (or no file) and ends in one line."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kit.conftest import REGISTRY, recorded_template

pytestmark = pytest.mark.kernel

OLD = "the report as it was\n"


@pytest.fixture(scope="module")
def project_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = recorded_template(tmp_path_factory.mktemp("template"), ("kt-02-chapter",))
    (root / "reports").mkdir()
    return root


def _full_disk() -> None:
    """What a full disk does to a writer, for this process: writes past a few bytes fail (EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))


def _pinb(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PINB_ROOT": str(root), "PINB_REGISTRY": REGISTRY}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pinb.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        preexec_fn=_full_disk,
    )


def test_report_all_on_a_full_disk_keeps_the_old_reports(project_root: Path) -> None:
    report = project_root / "reports" / "kt-02-chapter.json"
    report.write_text(OLD, encoding="utf-8")
    done = _pinb(project_root, "report", "--all")
    assert done.returncode == 2
    assert done.stderr.startswith("pinb: error: cannot write ") and done.stderr.count("\n") == 1, done.stderr
    assert report.read_text(encoding="utf-8") == OLD
    assert not [path.name for path in report.parent.iterdir() if path.name.startswith(".")]


def test_report_output_on_a_full_disk_leaves_no_file(project_root: Path, tmp_path: Path) -> None:
    output = tmp_path / "report.md"
    done = _pinb(project_root, "report", "kt-02-chapter", "-o", str(output))
    assert done.returncode == 2
    assert done.stderr.startswith(f"pinb: error: cannot write {output}: "), done.stderr
    assert list(tmp_path.iterdir()) == []
