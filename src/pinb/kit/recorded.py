"""Recorded verdicts for a notebook to show beside its live ones, always labelled as recorded.

A reader running a chapter notebook on the stand-in should still see what real Pi's recorded runs found (for
example that the book's program fails at import on Pi 1.6.0). In a checkout the verdicts come from the run store,
through the same status rules as `pinb status`; where there is no run store (pinb installed with pip, as in
Colab) they come from a snapshot that `pinb report --all` and `pinb verify` keep current inside the package,
`pinb/recorded/<chapter>.json`. Either way each entry names its backend, run id, date and evidence, and where
it came from.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from pinb.errors import PinbError
from pinb.kit.project import ChapterLike, Project, load_project
from pinb.kit.status import backend_order, claim_in_run, has_current_inputs
from pinb.kit.store import StoredRun

#: The snapshot folder, inside the pinb package (so a pip install carries it).
SNAPSHOT_PACKAGE_DIR = "recorded"
#: Where the snapshot lives in pinb's own checkout, relative to its root.
SNAPSHOT_CHECKOUT_DIR = Path("src") / "pinb" / SNAPSHOT_PACKAGE_DIR

Entries = dict[str, list[dict[str, Any]]]


def entries(project: Project, chapter: ChapterLike, runs: list[StoredRun], source: str) -> Entries:
    """Claim id → what each backend's latest completed run that passes verification says of it, with run id, date
    and evidence; `STALE` (with the outcome it recorded) where that run's inputs are not current."""
    latest: dict[str, StoredRun] = {}
    for run in runs:  # oldest first
        if run.record.chapter == chapter.id and run.verified and run.record.status == "completed":
            latest[run.record.backend] = run
    ordered = sorted(latest.values(), key=lambda run: backend_order(project, run.record.backend))
    current = {run.record.run_id: has_current_inputs(project, chapter, run) for run in ordered}
    found: Entries = {}
    for claim in chapter.claims:
        rows = []
        for run in ordered:
            said = claim_in_run(claim, run)
            if said.run_id is None and not said.reason.startswith("not checked on"):
                continue
            status = said.label if current[run.record.run_id] else f"STALE (recorded {said.label})"
            rows.append(
                {
                    "backend": run.record.backend,
                    "status": status,
                    "run_id": run.record.run_id,
                    "date": run.record.finished_at[:10],
                    "evidence": said.evidence or said.reason,
                    "source": source,
                }
            )
        if rows:
            found[claim.id] = rows
    return found


def snapshot_text(project: Project, chapter: ChapterLike, runs: list[StoredRun]) -> str:
    found = entries(project, chapter, runs, "snapshot")
    return json.dumps({"chapter": chapter.id, "claims": found}, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def snapshot_path(project: Project, chapter: ChapterLike) -> Path | None:
    """Where the snapshot is written: only in pinb's own checkout (a project with the package's source)."""
    folder = project.root / SNAPSHOT_CHECKOUT_DIR
    return folder / f"{chapter.id}.json" if folder.parent.is_dir() else None


def recorded_verdicts(chapter_id: str, root: Path | str | None = None) -> Entries:
    """The recorded verdicts for a notebook: from the run store when there is one, else the packaged snapshot."""
    try:
        project = load_project(root)
        if chapter_id in project.chapters and project.store.root.is_dir():
            runs = project.store.list().runs
            if any(run.record.chapter == chapter_id for run in runs):
                return entries(project, project.chapters[chapter_id], runs, "run store")
    except (PinbError, OSError):
        pass
    return packaged_snapshot(chapter_id)


def packaged_snapshot(chapter_id: str) -> Entries:
    try:
        text = (resources.files("pinb") / SNAPSHOT_PACKAGE_DIR / f"{chapter_id}.json").read_text(encoding="utf-8")
        claims = json.loads(text).get("claims", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return claims if isinstance(claims, dict) else {}


__all__ = ["entries", "packaged_snapshot", "recorded_verdicts", "snapshot_path", "snapshot_text"]
