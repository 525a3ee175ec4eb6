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
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pinb.claims import ClaimOutcome
from pinb.errors import PinbError
from pinb.kit.project import ChapterLike, Project, default_parameters, load_project
from pinb.kit.status import backend_order, can_check, chapter_evidence, claim_in_run, claim_status
from pinb.kit.store import StoredRun

#: The snapshot folder, inside the pinb package (so a pip install carries it).
SNAPSHOT_PACKAGE_DIR = "recorded"
#: Where the snapshot lives in pinb's own checkout, relative to its root.
SNAPSHOT_CHECKOUT_DIR = Path("src") / "pinb" / SNAPSHOT_PACKAGE_DIR

Entries = dict[str, list[dict[str, Any]]]
#: The fields of a property's structured observation an entry carries besides its evidence.
STRUCTURED = ("premise", "expected", "observed")


def entries(project: Project, chapter: ChapterLike, runs: list[StoredRun], source: str) -> Entries:
    """Claim id → what each backend says of it by `pinb status`'s own rules (`chapter_evidence`, `claim_status`):
    the run that decides on current inputs (a run that fails verification says ERROR), with run id, date and
    evidence; where no backend decides and status says STALE, each backend's latest completed run on its default
    parameters as `STALE (recorded …)`.
    A run with other parameters (`-p`) or one that did not complete never replaces what status counts."""
    own = [run for run in runs if run.record.chapter == chapter.id]
    evidence = chapter_evidence(project, chapter, own)
    stale_runs: dict[str, StoredRun] = {}  # each backend's latest completed run on its default parameters
    for run in own:
        record = run.record
        parameters = record.inputs.parameters
        if run.verified and record.status == "completed" and parameters == _defaults(record.backend, parameters):
            stale_runs[record.backend] = run
    stale_runs = {
        backend: stale_runs[backend]
        for backend in sorted(stale_runs, key=lambda b: backend_order(project, b))
        if backend not in evidence
    }
    found: Entries = {}
    for claim in chapter.claims:
        rows = []
        for item in evidence.values():
            deciding = item.tampered or item.run
            if deciding is None or not can_check(claim, item.backend):
                continue
            said = claim_in_run(claim, deciding)
            if said.run_id is None and not said.reason.startswith("not checked on"):
                continue
            rows.append(_row(deciding, said.label, said.evidence or said.reason, source, said.outcome))
        if claim_status(project, chapter, claim, own, evidence).status == "STALE":
            for stale in stale_runs.values():
                said = claim_in_run(claim, stale)
                if can_check(claim, stale.record.backend) and said.run_id is not None:
                    label = f"STALE (recorded {said.label})"
                    rows.append(_row(stale, label, said.evidence or said.reason, source, said.outcome))
        if rows:
            found[claim.id] = rows
    return found


def _defaults(backend: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What `pinb verify` gives a run on `backend` without `-p`, for a notebook that declares the parameters the
    run was given (one with a `witnesses` parameter records generated witnesses)."""
    try:
        return default_parameters(backend, tuple(parameters))
    except PinbError:
        return {}


def _row(run: StoredRun, status: str, evidence: str, source: str, outcome: ClaimOutcome | None) -> dict[str, Any]:
    """One backend's verdict, with the structured observation (premise, expected, observed) where the check
    recorded one, so a notebook's card shows it beside this run's."""
    record = run.record
    structure = {} if outcome is None else {k: getattr(outcome, k) for k in STRUCTURED if getattr(outcome, k)}
    return structure | {
        "backend": record.backend,
        "status": status,
        "run_id": record.run_id,
        "date": record.finished_at[:10],
        "evidence": evidence,
        "source": source,
    }


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
            runs = project.store.list(chapter_id).runs  # the chapter's own runs: the others are not shown here
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
