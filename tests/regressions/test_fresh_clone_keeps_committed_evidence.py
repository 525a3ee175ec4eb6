"""Regression: in a clone without the book beside it, the main job (`pinb verify`) rewrote the committed reports and
recorded snapshots with "fingerprint none … chapter text not available", said "(the chapter text changed)" of a text
it could not read, and closed on the stand-in's table alone, with none of the real-Pi findings.

Now it re-runs on the stand-in and records the runs, leaves every committed ledger file as it was (and says so,
naming the missing text as configured), and lists the findings of every backend, the recorded ones labelled."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pinb.kit.project import load_project

REPO = Path(__file__).resolve().parents[2]
COPIED = ("pyproject.toml", "README.md", "notebooks", "runs", "reports", "src/pinb/recorded")
LEDGER_FILES = ("README.md", "reports", "src/pinb/recorded")

pytestmark = pytest.mark.kernel


def _committed(folder: str) -> list[str] | None:
    """The files of ``folder`` git tracks (None outside a git checkout): the runs a user's own main job recorded
    beside the committed ones, without the book, are not what a fresh clone has."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z", "--", folder], capture_output=True, check=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return [name for name in listed.stdout.decode().split("\0") if name]


def _clone(tmp_path: Path) -> Path:
    """The checkout's committed files the main job reads and writes, in a folder with no book beside it."""
    clone = tmp_path / "pinb"
    for name in COPIED:
        source, target = REPO / name, clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        tracked = _committed(name) if source.is_dir() else None
        if tracked:
            for file in tracked:
                (clone / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / file, clone / file)
        elif source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
    return clone


def _snapshot(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name in LEDGER_FILES:
        path = root / name
        found = sorted(path.rglob("*")) if path.is_dir() else [path]
        files |= {p.relative_to(root).as_posix(): p.read_bytes() for p in found if p.is_file()}
    return files


def _contradicted_on_pi(root: Path) -> set[tuple[str, str]]:
    """(claim, backend) of each contradicted outcome of each chapter's latest completed pi run."""
    runs = load_project(root).store.list().runs
    latest = {(r.record.chapter, r.record.backend): r for r in runs if r.verified and r.record.status == "completed"}
    return {
        (outcome.claim_id, backend)
        for (_, backend), run in latest.items()
        if backend.startswith("pi@")
        for outcome in run.record.claims
        if outcome.outcome == "contradicted"
    }


def test_the_main_job_without_the_book_keeps_the_committed_evidence(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    assert not (tmp_path / "shared" / "book").exists()
    before = _snapshot(clone)
    findings = _contradicted_on_pi(clone)
    assert findings, "the committed runs hold real-Pi findings"
    runs_before = {p.name for p in (clone / "runs").glob("*/*")}
    env = {key: value for key, value in os.environ.items() if not key.startswith("PINB_")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    pinb = [sys.executable, "-m", "pinb.cli"]
    done = subprocess.run(
        [*pinb, "verify", "--backend", "standin", "--force", "--jobs", "2", "--no-progress"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr
    output = done.stdout + done.stderr
    new_runs = {p.name for p in (clone / "runs").glob("*/*")} - runs_before
    assert len(new_runs) == 2, output  # one recorded run per chapter
    assert _snapshot(clone) == before
    missing = "the chapter text is not available at ../shared/book: set PINB_BOOK"
    assert f"pinb: warning: pi-16-chapter: {missing}; its quotes and fingerprint are unverified" in done.stderr
    held = [line for line in done.stdout.splitlines() if line.startswith("not updated")]
    # README.md is named only where its table would read otherwise without the text.
    assert [line.replace(", README.md:", ":") for line in held] == [
        "not updated (they would be rendered without the chapter text): reports/pi-01-chapter.md, "
        "reports/pi-01-chapter.json, reports/pi-16-chapter.md, reports/pi-16-chapter.json, "
        "src/pinb/recorded/pi-01-chapter.json, src/pinb/recorded/pi-16-chapter.json: "
        f"{missing}; its quotes and fingerprint are unverified; the runs are recorded, and `pinb report --all` "
        "with the book writes them"
    ]
    assert "the chapter text changed" not in output
    assert "the chapter text is not available here, so it could not be compared" in done.stdout
    closing = done.stdout.split("Findings on every backend (", 1)[1].splitlines()
    for claim_id, backend in findings:  # the releases that saw the same finding share one line, each named
        said = [line.partition(" (recorded")[0] for line in closing if line.startswith(f"  {claim_id} on ")]
        assert any(backend in line.removeprefix(f"  {claim_id} on ").split(", ") for line in said), (claim_id, backend)
