"""`pinb runs prune`: which runs no status or report needs any more.

Removed: runs that did not complete (failed, interrupted, could not start; they are attempts, never verdicts),
completed runs superseded by a newer completed run of the same chapter, backend and parameters, and temporary
folders left by a process that stopped. Kept: every run a status counts or names (whatever its record's times or
status say: they are verified first), the latest completed run of each chapter, backend and parameters, and runs
that do not match their evidence or cannot be read (look at them, then `pinb runs rm`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pinb.kit.project import Project
from pinb.kit.status import chapter_evidence, chapter_statuses
from pinb.kit.store import Listing, StoredRun


@dataclass(frozen=True)
class Prunable:
    path: Path
    why: str
    run: StoredRun | None = None


def prunable(project: Project, listing: Listing) -> tuple[list[Prunable], list[StoredRun]]:
    """(what prune removes, the mismatching runs it keeps for a person to look at)."""
    counted: set[str] = set()
    for chapter in project.chapters.values():
        for evidence in chapter_evidence(project, chapter, listing.runs).values():
            counted |= {run.record.run_id for run in (evidence.run, evidence.tampered) if run is not None}
        # and every run a status names (a verdict, a STALE one, any backend's): only `pinb runs rm` removes those
        for status in chapter_statuses(project, chapter, listing.runs):
            counted |= {status.run_id} if status.run_id else set()
            counted |= {verdict.run_id for verdict in status.backends}
    latest: dict[tuple[str, str, str], StoredRun] = {}
    for run in listing.runs:
        if run.verified and run.record.status == "completed":
            latest[_line(run)] = run
    keep = counted | {run.record.run_id for run in latest.values()}
    found = [Prunable(path, "incomplete run (its writer stopped)") for path in project.store.leftovers()]
    suspect = []
    for run in listing.runs:
        record = run.record
        if run.problem:
            suspect.append(run)
        elif record.run_id in keep:
            continue
        elif record.status != "completed":
            found.append(Prunable(run.path, f"{record.status}: {record.failure or 'no detail'}", run))
        else:
            newer = latest[_line(run)].record.run_id
            found.append(Prunable(run.path, f"superseded by run {newer}", run))
    return found, suspect


def _line(run: StoredRun) -> tuple[str, str, str]:
    record = run.record
    return record.chapter, record.backend, json.dumps(record.inputs.parameters, sort_keys=True)
